/* The JSON Schemas --validate interprets, compiled into nettune-report as NUL-terminated
 * strings so it needs no data file and cannot drift from the schema files: nettune.report/1
 * (nt_report_schema_json), nettune.plugin-report/1 (nt_plugin_report_schema_json, the NCCL
 * tuner plugin's run summary), nettune.watch/1 (nt_watch_schema_json), nettune.history/1
 * (nt_history_schema_json) and, when the tree has it, nettune.diagnosis/1
 * (nt_diagnosis_schema_json; an empty string otherwise, see reports/module.mk). Paths are
 * relative to the repository root, where make runs. */
    .section .rodata
    .global nt_report_schema_json
    .type nt_report_schema_json, @object
nt_report_schema_json:
    .incbin "reports/schema/report.schema.json"
    .byte 0
    .size nt_report_schema_json, . - nt_report_schema_json

    .global nt_plugin_report_schema_json
    .type nt_plugin_report_schema_json, @object
nt_plugin_report_schema_json:
    .incbin "reports/schema/plugin-report.schema.json"
    .byte 0
    .size nt_plugin_report_schema_json, . - nt_plugin_report_schema_json

    .global nt_watch_schema_json
    .type nt_watch_schema_json, @object
nt_watch_schema_json:
    .incbin "reports/schema/watch.schema.json"
    .byte 0
    .size nt_watch_schema_json, . - nt_watch_schema_json

    .global nt_history_schema_json
    .type nt_history_schema_json, @object
nt_history_schema_json:
    .incbin "reports/schema/history.schema.json"
    .byte 0
    .size nt_history_schema_json, . - nt_history_schema_json

    .global nt_diagnosis_schema_json
    .type nt_diagnosis_schema_json, @object
nt_diagnosis_schema_json:
#ifdef NT_DIAGNOSIS_SCHEMA
    .incbin NT_DIAGNOSIS_SCHEMA
#endif
    .byte 0
    .size nt_diagnosis_schema_json, . - nt_diagnosis_schema_json
    .section .note.GNU-stack,"",@progbits
