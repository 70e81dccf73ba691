/* nettune-doctor's run: the knowledge base, the inputs read (together, then each alone), the
 * diagnosis, the text summary and the JSON document, and the exit code they give. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "doctor_cmd.h"
#include "nettune/exitcode.h"
#include "nettune/log.h"
#include "nettune/report.h"

extern const unsigned char nt_doctor_kb_data[];

/* The document through the one output writer (lib/output.c: a temporary file renamed over
 * `path`, links followed, "-" = stdout); 0 or -1 (the writer logged why). */
static int nt_write_json(const cJSON *doc, const char *path)
{
    return nt_json_write_atomic(doc, path) == NT_OK ? 0 : -1;
}

/* --print-kb, or the diagnosis of p's inputs; the exit code (doctor_cmd.h). */
int nt_doctor_run(nt_doctor_params_t *p)
{
    int rc;
    nt_kb_t *kb = NULL;
    nt_doctor_t *d = NULL;
    char msg[1024];
    if (p->print_kb) {
        fputs((const char *)nt_doctor_kb_data, stdout);
        return NT_EXIT_OK;
    }
    rc = NT_EXIT_USAGE;
    if (nt_kb_load(p->kb, &kb, msg, sizeof(msg)) != 0) {
        fprintf(stderr, "nettune-doctor: %s\n", msg);
        return rc;
    }
    const char *missing = nt_doctor_kb_missing(kb);
    if (missing) {
        fprintf(stderr, "nettune-doctor: knowledge base '%s' has no entry for finding '%s'\n",
                kb->source, missing);
        goto out_kb;
    }
    d = nt_doctor_create(kb);
    if (!d) {
        fprintf(stderr, "nettune-doctor: out of memory\n");
        goto out_kb;
    }
    /* an unusable input's reason is said on stderr, one line each, whatever stdout shows (a
     * script that keeps stdout still sees why an input was not read); the text report's
     * "skipped:" lines name the inputs only */
    int unusable = 0, usable = 0;
    if (p->report && nt_doctor_load_report(d, p->report, msg, sizeof(msg)) != 0) {
        fprintf(stderr, "nettune-doctor: %s\n", msg);
        goto out_doctor;
    }
    for (int i = 0; i < p->ninputs; i++) {
        nt_doctor_set_host(d, p->hosts[i]);
        if (nt_doctor_read_file(d, p->inputs[i], msg, sizeof(msg)) != 0) {
            NT_ERROR(DOCTOR, "%s", msg);
            unusable++;
        } else {
            usable++;
        }
    }
    nt_doctor_diagnose(d, &p->hw);
    /* several files: each one read alone too, so that reading them together hides nothing (a
     * finding of one file that the joint diagnosis lacks is listed with what supersedes it) */
    for (int i = 0; usable > 1 && i < p->ninputs; i++) {
        if (strcmp(p->inputs[i], "-") == 0)
            continue;
        nt_doctor_t *one = nt_doctor_create(kb);
        if (!one)
            break;
        nt_doctor_set_host(one, p->hosts[i]);
        /* the same report as the joint reading (it loaded there: it loads here) */
        if (p->report && nt_doctor_load_report(one, p->report, msg, sizeof(msg)) != 0) {
            nt_doctor_destroy(one);
            break;
        }
        if (nt_doctor_read_file(one, p->inputs[i], msg, sizeof(msg)) == 0) {
            nt_doctor_diagnose(one, &p->hw);
            nt_doctor_compare_single(d, (unsigned)i, one);
        }
        nt_doctor_destroy(one);
    }
    int worst = nt_doctor_worst(d);
    rc = unusable                                                  ? NT_EXIT_USAGE
         : worst >= NT_SEV_WARN                                    ? NT_EXIT_FAIL
         : p->require_busbw && nt_doctor_not_judged(d, "busbw") > 0 ? NT_EXIT_FAIL
                                                                   : NT_EXIT_OK;

    int stdout_json = p->format_json || (p->output && strcmp(p->output, "-") == 0);
    cJSON *doc = NULL;
    if (p->output || p->format_json) {
        doc = nt_doctor_to_json(d, rc);
        if (!doc) {
            fprintf(stderr, "nettune-doctor: cannot build the JSON document: out of memory\n");
            rc = NT_EXIT_USAGE;
            goto out_doctor;
        }
    }
    if (p->output && strcmp(p->output, "-") != 0 && nt_write_json(doc, p->output) != 0)
        rc = NT_EXIT_USAGE;
    int text_report = !p->quiet && !stdout_json && (usable || nt_doctor_worst(d) >= 0);
    if (!p->quiet) {
        if (stdout_json) {
            if (nt_write_json(doc, "-") != 0)
                rc = NT_EXIT_USAGE;
        } else if (text_report) {
            int colour = p->colour >= 0 ? p->colour : (isatty(STDOUT_FILENO) && !getenv("NO_COLOR"));
            nt_doctor_write_text(d, stdout, colour);
        }
    }
    cJSON_Delete(doc);
    if (fflush(stdout) != 0)
        rc = NT_EXIT_USAGE;
out_doctor:
    nt_doctor_destroy(d);
out_kb:
    nt_kb_destroy(kb);
    return rc;
}
