/* nettune-report's actions: render (or export) a document, diff two reports, validate files,
 * read a cluster's history. Each returns the exit code. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nettune/exitcode.h"
#include "nettune/log.h"
#include "report_cmd.h"
#include "render_watch.h"
#include "rpt.h"


/* The exit code by README.md's precedence (2, then 1, then 3, then 0), as
 * lib/core/exitcode.c has it. */
static int nt_report_exit(int usage_error, int any_fail, int stopped_early)
{
    return nt_exit_code(usage_error, any_fail, stopped_early, 0, 0);
}

static int nt_to_stdout(const nt_report_params_t *p)
{
    return !p->output || strcmp(p->output, "-") == 0;
}

/* The summary line goes to stdout when the document went to a file, but not when that file is
 * stdout itself (--output /dev/stdout). */
static int nt_want_summary(const nt_report_params_t *p)
{
    struct stat out, so;

    if (nt_to_stdout(p) || p->quiet)
        return 0;
    if (stat(p->output, &out) != 0)
        return 1;
    if (fstat(STDOUT_FILENO, &so) == 0 && out.st_dev == so.st_dev && out.st_ino == so.st_ino)
        return 0;
    return 1;
}

/* Colour only for a terminal, and never when NO_COLOR is set (https://no-color.org), unless
 * the operator asked for it. */
static int nt_use_color(const nt_report_params_t *p)
{
    const char *nc = getenv("NO_COLOR");
    if (p->color != NT_COLOR_AUTO)
        return p->color == NT_COLOR_ALWAYS;
    return nt_to_stdout(p) && isatty(STDOUT_FILENO) && !(nc && *nc);
}

/* A document that does not validate is still rendered (a newer probe may add a check name),
 * with its first problems on stderr. */
static void nt_warn_invalid(const nt_rdoc_t *doc)
{
    nt_problems_t probs = {0};
    const char *id;

    if (nt_validate(doc->root, &probs, &id) == NT_OK && probs.n) {
        fprintf(stderr,
                "nettune report: warning: '%s' does not validate (%zu problem%s; see "
                "--validate), rendering what is there:\n",
                doc->path, probs.n, probs.n == 1 ? "" : "s");
        for (size_t i = 0; i < probs.n && i < 3; i++)
            fprintf(stderr, "  %s: %s\n", probs.v[i].path, probs.v[i].message);
    }
    nt_problems_cleanup(&probs);
}

/* A probe report renders a verdict only from its summary (summary.verdict and summary.counts,
 * which the judge writes, also into every progress snapshot): without them the file is not a
 * finished report, and deriving a verdict from what is there would print PASS for an empty
 * document. Returns 0 when they are there, else -1 (one line on stderr). */
static int nt_check_summary(const nt_rdoc_t *doc)
{
    const cJSON *sum = cJSON_GetObjectItemCaseSensitive(doc->root, "summary");
    const char *missing = NULL;
    nt_verdict_t v;

    if (!cJSON_IsObject(sum))
        missing = "no summary";
    else if (nt_verdict_parse(nt_json_get_str(sum, "verdict", NULL), &v) != NT_OK)
        missing = "no summary.verdict";
    else if (!cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(sum, "counts")))
        missing = "no summary.counts";
    if (!missing)
        return 0;
    fprintf(stderr,
            "nettune report: '%s' has %s: not a finished report, no verdict to render (see "
            "nettune report --validate '%s')\n",
            doc->path, missing, doc->path);
    return -1;
}

/* "host 'x' is not in 'r.json'", with the first few hosts that are. */
static void nt_node_not_found(const nt_rdoc_t *doc, const char *host)
{
    enum { SHOW = 8 };
    fprintf(stderr, "nettune report: host '%s' is not in '%s'", host, doc->path);
    if (!doc->nnodes) {
        fprintf(stderr, " (it has no nodes)\n");
        return;
    }
    fprintf(stderr, " (%zu node%s: ", doc->nnodes, doc->nnodes == 1 ? "" : "s");
    for (size_t i = 0; i < doc->nnodes && i < SHOW; i++)
        fprintf(stderr, "%s%s", i ? ", " : "", doc->nodes[i].host);
    if (doc->nnodes > SHOW)
        fprintf(stderr, ", ... and %zu more", doc->nnodes - SHOW);
    fprintf(stderr, ")\n");
}

/* A nettune.watch/1 document (nettune watch): text, html or prom, its own exit code. Takes
 * root. */
static int nt_report_render_watch(const nt_report_params_t *p, cJSON *root)
{
    nt_buf_t out;
    nt_status_t st = NT_ERR_INVALID;
    nt_buf_init(&out);
    if (strcmp(p->format, "text") == 0)
        st = nt_render_watch_text(root, &out);
    else if (strcmp(p->format, "html") == 0)
        st = nt_render_watch_html(root, &out);
    else if (strcmp(p->format, "prom") == 0)
        st = nt_render_watch_prom(root, &out);
    else
        fprintf(stderr, "nettune report: a watch document renders as --format text, html or "
                        "prom\n");
    if (st == NT_OK)
        st = nt_buf_write(&out, p->output);
    int rc = st != NT_OK ? NT_EXIT_USAGE : nt_render_watch_exit(root);
    nt_buf_cleanup(&out);
    cJSON_Delete(root);
    return rc;
}

static int nt_report_render(const nt_report_params_t *p)
{
    nt_render_opts_t o = {.color = 0, .node = p->node, .top = (size_t)p->top};
    nt_rdoc_t doc;
    nt_buf_t out;
    nt_status_t st;
    int rc;

    /* read once (the file may be '-'): a diagnosis is rendered here, the rest indexed */
    cJSON *root = NULL;
    if (nt_json_read_file(p->files[0], NT_RDOC_MAX_BYTES, &root) != NT_OK)
        return NT_EXIT_USAGE;
    const char *sid = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(root, "schema"));
    /* what renders is the schema table's word (rpt.h), the same the help and --validate use */
    if (sid && !nt_schema_renders(sid)) {
        char list[512];
        if (nt_schema_validates(sid))
            fprintf(stderr,
                    "nettune report: '%s' is a %s document, which is not rendered (nettune "
                    "report FILE renders %s): check it with nettune report --validate\n",
                    p->files[0], sid, nt_schema_list(list, sizeof(list), 1));
        else
            fprintf(stderr,
                    "nettune report: '%s' has schema '%.80s', not a document nettune report "
                    "renders (%s)\n",
                    p->files[0], sid, nt_schema_list(list, sizeof(list), 1));
        cJSON_Delete(root);
        return NT_EXIT_USAGE;
    }
    if (sid && strcmp(sid, NT_DIAGNOSIS_SCHEMA) == 0) {
        nt_buf_init(&out);
        st = nt_render_diagnosis(root, p->format, &out);
        if (st == NT_ERR_INVALID)
            fprintf(stderr, "nettune report: a diagnosis renders as --format text or md\n");
        if (st == NT_OK)
            st = nt_buf_write(&out, p->output);
        const cJSON *sum = cJSON_GetObjectItemCaseSensitive(root, "summary");
        int bad = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(sum, "errors")) > 0 ||
                  cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(sum, "warnings")) > 0;
        nt_buf_cleanup(&out);
        cJSON_Delete(root);
        return st != NT_OK ? NT_EXIT_USAGE : bad ? NT_EXIT_FAIL : NT_EXIT_OK;
    }
    if (sid && strcmp(sid, NT_WATCH_SCHEMA) == 0)
        return nt_report_render_watch(p, root);
    if (nt_rdoc_from_json(root, p->files[0], &doc) != NT_OK) {
        nt_rdoc_close(&doc);
        return NT_EXIT_USAGE;
    }
    if (doc.kind == NT_DOC_REPORT && nt_check_summary(&doc) != 0) {
        nt_rdoc_close(&doc);
        return NT_EXIT_USAGE;
    }
    nt_warn_invalid(&doc);
    o.color = strcmp(p->format, "text") == 0 && nt_use_color(p);
    nt_buf_init(&out);
    if (doc.kind == NT_DOC_TUNING) {
        if (strcmp(p->format, "prom") == 0) {
            fprintf(stderr, "nettune report: a tuning file has no metrics to export "
                            "(--format text, md, html or csv)\n");
            nt_rdoc_close(&doc);
            return NT_EXIT_USAGE;
        }
        st = nt_render_tuning(&doc, p->format, &o, &out);
    } else if (strcmp(p->format, "text") == 0) {
        st = nt_render_text(&doc, &o, &out);
    } else if (strcmp(p->format, "md") == 0) {
        st = nt_render_md(&doc, &o, &out);
    } else if (strcmp(p->format, "html") == 0) {
        st = nt_render_html(&doc, &o, &out);
    } else if (strcmp(p->format, "prom") == 0) {
        st = nt_render_prom(&doc, &o, &out);
    } else {
        st = nt_render_csv(&doc, &o, &out);
    }
    if (st == NT_ERR_NOT_FOUND) {
        nt_node_not_found(&doc, p->node);
        rc = NT_EXIT_USAGE;
        goto out;
    }
    if (st == NT_OK)
        st = nt_buf_write(&out, p->output);
    if (st != NT_OK) {
        rc = NT_EXIT_USAGE;
        goto out;
    }
    if (doc.kind == NT_DOC_TUNING) {
        rc = NT_EXIT_OK;
    } else if (p->node) {
        int k = nt_rdoc_find_node(&doc, p->node);
        rc = nt_report_exit(0, doc.nodes[k].verdict == NT_FAIL, !doc.completed);
    } else {
        rc = nt_report_exit(0, doc.verdict == NT_FAIL, !doc.completed);
    }
    if (nt_want_summary(p))
        printf("nettune report: %s written to %s (%s, %zu node%s, %zu link%s, %zu check%s)\n",
               p->format, p->output,
               doc.kind == NT_DOC_TUNING ? "tuning file" : nt_verdict_string(doc.verdict),
               doc.nnodes, doc.nnodes == 1 ? "" : "s", doc.nlinks, doc.nlinks == 1 ? "" : "s",
               doc.nchecks, doc.nchecks == 1 ? "" : "s");
out:
    nt_buf_cleanup(&out);
    nt_rdoc_close(&doc);
    return rc;
}

/* A file --diff reads (role "OLD" or "NEW"): a nettune.report/1 indexed into doc, 0; else -1
 * after one line naming the file and what it is instead (doc then needs no closing). */
static int nt_open_report(const char *path, const char *role, nt_rdoc_t *doc)
{
    cJSON *root = NULL;
    const char *sid;

    memset(doc, 0, sizeof(*doc));
    if (nt_json_read_file(path, NT_RDOC_MAX_BYTES, &root) != NT_OK)
        return -1; /* said, with the path */
    sid = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(root, "schema"));
    if (!sid || strcmp(sid, NT_REPORT_SCHEMA) != 0) {
        fprintf(stderr,
                "nettune report: --diff compares two %s files: %s '%s' is %s%.80s%s: give a "
                "report nettune probe wrote\n",
                NT_REPORT_SCHEMA, role, path, sid ? "a " : "not a nettune document (no schema",
                sid ? sid : "", sid ? "" : ")");
        cJSON_Delete(root);
        return -1;
    }
    nt_status_t st = nt_rdoc_from_json(root, path, doc); /* takes root; says why */
    if (st != NT_OK) {
        if (st == NT_ERR_NOMEM)
            fprintf(stderr, "nettune report: out of memory reading '%s'\n", path);
        nt_rdoc_close(doc);
        return -1;
    }
    return 0;
}

static int nt_report_diff(const nt_report_params_t *p)
{
    nt_diff_opts_t o = {.threshold_pct = p->threshold_pct,
                        .fail_on_vanished = p->fail_on_vanished,
                        .top = (size_t)p->top,
                        .color = 0};
    nt_rdoc_t a, b;
    nt_buf_t out;
    int regressed = 0, rc = NT_EXIT_USAGE;

    /* both read before either is refused: each file that is not a report gets its line */
    int bad_a = nt_open_report(p->files[0], "OLD", &a), bad_b = nt_open_report(p->files[1], "NEW", &b);
    if (bad_a || bad_b) {
        if (!bad_a)
            nt_rdoc_close(&a);
        if (!bad_b)
            nt_rdoc_close(&b);
        return NT_EXIT_USAGE;
    }
    nt_buf_init(&out);
    nt_warn_invalid(&a);
    nt_warn_invalid(&b);
    o.color = strcmp(p->format, "text") == 0 && nt_use_color(p);
    if (nt_diff(&a, &b, &o, p->format, &out, &regressed) != NT_OK ||
        nt_buf_write(&out, p->output) != NT_OK)
        goto out;
    rc = regressed ? NT_EXIT_FAIL : NT_EXIT_OK;
    if (nt_want_summary(p))
        printf("nettune report --diff: %s (threshold %g%%), %s written to %s\n",
               regressed ? "REGRESSION" : "no regression", p->threshold_pct, p->format, p->output);
out:
    nt_buf_cleanup(&out);
    nt_rdoc_close(&a);
    nt_rdoc_close(&b);
    return rc;
}

static int nt_report_history(const nt_report_params_t *p)
{
    nt_history_opts_t o = {.peer = nt_peer_rules_default(), .top = (size_t)p->top, .color = 0};
    nt_buf_t out;
    int drifted = 0, rc = NT_EXIT_USAGE;
    nt_status_t st;

    nt_buf_init(&out);
    o.color = strcmp(p->format, "text") == 0 && nt_use_color(p);
    st = nt_history(p->files, p->nfiles, &o, p->format, &out, &drifted);
    if (st == NT_ERR_NOMEM)
        fprintf(stderr, "nettune report: --history: out of memory\n");
    if (st == NT_OK && nt_buf_write(&out, p->output) == NT_OK)
        rc = drifted ? NT_EXIT_FAIL : NT_EXIT_OK;
    nt_buf_cleanup(&out);
    return rc;
}

static void nt_json_problems(cJSON *arr, const nt_problems_t *probs)
{
    for (size_t i = 0; i < probs->n; i++) {
        cJSON *o = cJSON_CreateObject();
        if (!o)
            return;
        nt_json_add_str(o, "path", probs->v[i].path);
        nt_json_add_str(o, "message", probs->v[i].message);
        nt_json_add_str(o, "kind", probs->v[i].semantic ? "semantic" : "schema");
        cJSON_AddItemToArray(arr, o);
    }
}

/* Read and parse a file for --validate. NT_ERR_NOT_FOUND/NT_ERR_IO/NT_ERR_INVALID (logged, and
 * the reason in unreadable): it cannot be read (missing, no permission, a directory, too
 * large): exit 2. NT_ERR_PARSE: it was read but is not JSON, or is cut short; why says which,
 * and the file is "not a valid nettune document" (exit 1). */
static nt_status_t nt_validate_read(const char *path, cJSON **root, char *why, size_t whylen,
                                    char *unreadable, size_t unreadable_len)
{
    char what[120];
    nt_status_t st = nt_json_read_file_why(path, NT_RPT_MAX_BYTES, root, what, sizeof(what));
    if (st == NT_ERR_PARSE)
        snprintf(why, whylen, "not a valid nettune document: %s", what);
    else if (st != NT_OK) {
        NT_ERROR(REPORT, "'%s': %s", path, what);
        snprintf(unreadable, unreadable_len, "%s", what);
    }
    return st;
}

static int nt_report_validate(const nt_report_params_t *p)
{
    int json = strcmp(p->format, "json") == 0;
    cJSON *doc = json ? cJSON_CreateObject() : NULL;
    cJSON *files = doc ? nt_json_add_arr(doc, "files") : NULL;
    nt_buf_t out;
    int any_invalid = 0, any_unreadable = 0;

    nt_buf_init(&out);
    if (json && (!files || nt_json_add_str(doc, "schema", NT_VALIDATION_SCHEMA))) {
        cJSON_Delete(doc);
        return NT_EXIT_USAGE;
    }
    for (int i = 0; i < p->nfiles; i++) {
        const char *path = p->files[i];
        cJSON *root = NULL, *f = NULL;
        nt_problems_t probs = {0};
        const char *id = NULL;
        char why[160] = "", unreadable[120] = "";
        nt_status_t st = nt_validate_read(path, &root, why, sizeof(why), unreadable,
                                          sizeof(unreadable));
        const char *state;

        if (st == NT_OK)
            st = nt_validate(root, &probs, &id);
        /* Not JSON, or cut short: read, but not a valid nettune document (exit 1). */
        if (st == NT_ERR_PARSE && why[0]) {
            nt_problems_t one = {0};
            nt_problem_t p1 = {.path = strdup("$"), .message = strdup(why), .semantic = 0};
            if (p1.path && p1.message && (one.v = malloc(sizeof(*one.v)))) {
                one.v[0] = p1;
                one.n = one.cap = 1;
                probs = one;
                st = NT_OK;
            } else {
                free(p1.path);
                free(p1.message);
                st = NT_ERR_NOMEM;
            }
        }
        state = st != NT_OK ? "unreadable" : why[0] ? "not JSON" : probs.n ? "invalid" : "valid";
        any_unreadable |= st != NT_OK;
        any_invalid |= st == NT_OK && probs.n > 0;
        if (json) {
            f = cJSON_CreateObject();
            if (f) {
                nt_json_add_str(f, "file", path);
                nt_json_add_str(f, "schema", id);
                nt_json_add_str(f, "result", state);
                /* why it could not be read, beside the result (stderr says it too) */
                if (unreadable[0])
                    nt_json_add_str(f, "reason", unreadable);
                nt_json_problems(nt_json_add_arr(f, "problems"), &probs);
                cJSON_AddItemToArray(files, f);
            }
        } else {
            nt_buf_printf(&out, "%s: %s", path, state);
            if (id)
                nt_buf_printf(&out, " %s", id);
            if (probs.n)
                nt_buf_printf(&out, ", %zu problem%s", probs.n, probs.n == 1 ? "" : "s");
            nt_buf_puts(&out, "\n");
            for (size_t k = 0; k < probs.n; k++)
                nt_buf_printf(&out, "  %s: %s\n", probs.v[k].path, probs.v[k].message);
        }
        nt_problems_cleanup(&probs);
        cJSON_Delete(root);
    }
    if (json) {
        char *text;
        nt_json_add_bool(doc, "valid", !any_invalid && !any_unreadable);
        text = cJSON_Print(doc);
        if (!text) {
            out.oom = 1;
        } else {
            nt_buf_puts(&out, text);
            nt_buf_puts(&out, "\n");
            free(text);
        }
        cJSON_Delete(doc);
    }
    if (nt_buf_write(&out, p->output) != NT_OK) {
        any_unreadable = 1;
    }
    nt_buf_cleanup(&out);
    return nt_report_exit(any_unreadable, any_invalid, 0);
}

/* Runs p's mode and returns its exit code (report_cmd.h). */
int nt_report_run(const nt_report_params_t *p)
{
    switch (p->mode) {
    case NT_MODE_DIFF:
        return nt_report_diff(p);
    case NT_MODE_VALIDATE:
        return nt_report_validate(p);
    case NT_MODE_HISTORY:
        return nt_report_history(p);
    default:
        return nt_report_render(p);
    }
}
