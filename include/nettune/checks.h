/* nettune check table: one row per thing a judge can say about a node, a link, a job or the
 * fabric, with a stable code, a category that tells automation what to do, a one-line action
 * and an anchor in docs/codes.md. The probe's checks, its failed nodes, the doctor's findings and
 * every later judge draw from this one table (DCGM's dcgm_errors.h is the model: code, message,
 * severity, category). The rows live in checks.def, and only there.
 *
 * Codes are "NT-<DOMAIN>-<NNN>" and never change meaning: a row is added, never renumbered or
 * removed (tests/unit/test_checks.c compares the table with tests/unit/data/checks.list). */
#ifndef NETTUNE_CHECKS_H
#define NETTUNE_CHECKS_H

#include <stddef.h>

/* What an operator's automation does with a failure of the row. */
typedef enum nt_category {
    NT_CAT_DRAIN,   /* take the node out of service until it is repaired */
    NT_CAT_RESET,   /* reset the device (GPU reset, port bounce) and check again */
    NT_CAT_CONFIG,  /* a setting of the node or the job is wrong: fix it, no hardware at fault */
    NT_CAT_MONITOR, /* degraded but usable: watch it, no action now */
    NT_CAT_INFO,    /* information only */
    NT_CAT_COUNT
} nt_category_t;

typedef struct nt_check_row {
    const char *code;       /* "NT-PCIE-001" */
    const char *check;      /* the check's name in reports ("pcie_link"); several codes may share it */
    nt_category_t category; /* what to do with a failure */
    const char *title;      /* what the row means, a short phrase ("PCIe link narrower than capable") */
    const char *action;     /* one line: what the operator does */
} nt_check_row_t;

/* nt_category_name - "drain", "reset", "config", "monitor", "info"; "unknown" out of range. */
const char *nt_category_name(nt_category_t c);

/* nt_check_count / nt_check_at - the rows in table order (i < nt_check_count(), else NULL). */
size_t nt_check_count(void);
const nt_check_row_t *nt_check_at(size_t i);

/* nt_check_by_code - the row of a code ("NT-PCIE-001"), NULL when no row has it. */
const nt_check_row_t *nt_check_by_code(const char *code);

/* nt_check_anchor - the row's anchor in docs/codes.md: its code in lowercase ("nt-pcie-001")
 * written into buf of len bytes; returns buf (empty string when row is NULL). */
char *nt_check_anchor(const nt_check_row_t *row, char *buf, size_t len);

/* The probe's checks that see the fact a doctor's cause names (include/nettune/checks_same.def,
 * lib/core/checks_same.c):
 * nt_check_probe_codes - the probe codes paired with cause ("NT-CFG-121"), ", "-joined into buf
 *   of len bytes ("NT-CFG-001"; "" when none); returns how many;
 * nt_check_same_count / nt_check_same_at - the pairs in table order (0 past the end). */
size_t nt_check_probe_codes(const char *cause, char *buf, size_t len);
size_t nt_check_same_count(void);
int nt_check_same_at(size_t i, const char **cause, const char **probe);

#endif
