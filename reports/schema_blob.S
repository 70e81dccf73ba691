/* The JSON Schema of nettune.report/1, compiled into nettune-report as a NUL-terminated string
 * (nt_report_schema_json) so --validate needs no data file and cannot drift from the schema.
 * The path is relative to the repository root, where make runs. */
    .section .rodata
    .global nt_report_schema_json
    .type nt_report_schema_json, @object
nt_report_schema_json:
    .incbin "reports/schema/report.schema.json"
    .byte 0
    .size nt_report_schema_json, . - nt_report_schema_json
    .section .note.GNU-stack,"",@progbits
