/* Output: the human summary (stdout) and the nettune.diagnosis/1 document (--output). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze_int.h"
#include "nettune/version.h"

static const char *nt_ev_file(const nt_doctor_t *d, const nt_ev_t *e)
{
    if (e->input == (unsigned)-1)
        return d->report_path ? d->report_path : "report";
    return e->input < d->ninputs ? d->inputs[e->input].path : "?";
}

static void nt_sev_counts(const nt_doctor_t *d, int c[3])
{
    c[0] = c[1] = c[2] = 0;
    for (size_t i = 0; i < d->nfindings; i++)
        c[d->findings[i].severity]++;
}

static void nt_text_job(const nt_doctor_t *d, FILE *out)
{
    unsigned long lines = 0, trunc = 0;
    for (size_t i = 0; i < d->ninputs; i++) {
        lines += d->inputs[i].lines;
        trunc += d->inputs[i].truncated;
    }
    fprintf(out, "nettune doctor: %zu input(s), %lu line(s) read", d->ninputs, lines);
    if (trunc)
        fprintf(out, ", %lu over-long line(s) cut at %d bytes", trunc, NT_LINE_MAX - 1);
    fprintf(out, "\n");
    for (size_t i = 0; i < d->ninputs; i++)
        if (strcmp(d->inputs[i].status, "ok") != 0)
            fprintf(out, "  skipped: %s (why: on stderr)\n", d->inputs[i].path);
    for (size_t i = 0; i < d->ninputs; i++) {
        const nt_input_t *in = &d->inputs[i];
        if (in->nul_bytes && strcmp(in->status, "ok") == 0)
            fprintf(out,
                    "  note: %s: %llu NUL byte%s skipped (read as line breaks: the padding a node "
                    "crash or a damaged filesystem leaves in a log)\n",
                    in->path, (unsigned long long)in->nul_bytes, in->nul_bytes == 1 ? "" : "s");
        if (in->start == 2 && strcmp(in->status, "ok") == 0 && !in->op_lines)
            fprintf(out,
                    "  completeness: not judged for %s (an excerpt: it does not start at NCCL's "
                    "version banner or the launcher's start)\n",
                    in->path);
    }
    if (d->versions.n) {
        fprintf(out, "  NCCL version:");
        for (size_t i = 0; i < d->versions.n; i++)
            fprintf(out, "%s %s", i ? "," : "", d->versions.keys[i]);
        fprintf(out, "\n");
    }
    if (d->nranks > 0 || d->nnodes > 0 || d->local_ranks > 0) {
        fprintf(out, "  communicator:");
        if (d->nranks > 0)
            fprintf(out, " %d rank(s)", d->nranks);
        if (d->nnodes > 0)
            fprintf(out, " on %d node(s)", d->nnodes);
        if (d->local_ranks > 0)
            fprintf(out, ", %d local rank(s) per node", d->local_ranks);
        fprintf(out, "\n");
    }
    if (d->hosts.n) {
        fprintf(out, "  hosts (%zu):", d->hosts.n);
        for (size_t i = 0; i < d->hosts.n && i < 8; i++)
            fprintf(out, " %s", d->hosts.keys[i]);
        fprintf(out, "%s\n", d->hosts.n > 8 ? " ..." : "");
    }
    if (d->networks.n || d->nic_names) {
        fprintf(out, "  network:");
        for (size_t i = 0; i < d->networks.n; i++)
            fprintf(out, "%s %s", i ? "," : "", d->networks.keys[i]);
        if (d->nic_names)
            fprintf(out, " (NET/IB devices: %s)", d->nic_names);
        fprintf(out, "\n");
    }
    if (d->transports.n) {
        fprintf(out, "  connections:");
        for (size_t i = 0; i < d->transports.n; i++)
            fprintf(out, "%s %s x%ld", i ? "," : "", d->transports.keys[i], d->transports.vals[i]);
        fprintf(out, "\n");
    }
    if (d->nenv) {
        fprintf(out, "  environment:");
        for (size_t i = 0; i < d->nenv; i++)
            fprintf(out, "%s %s=%s%s", i ? "," : "", d->env[i].name, d->env[i].value,
                    d->env[i].from_cmdline ? " (command line)" : "");
        fprintf(out, "\n");
    }
    const nt_hw_t *hw = &d->hw;
    if (hw->source) {
        fprintf(out, "  hardware (%s):", hw->source);
        if (hw->gpus_per_node > 0)
            fprintf(out, " %d GPU(s)/node", hw->gpus_per_node);
        if (hw->nics_per_node > 0)
            fprintf(out, " %d NIC(s)/node", hw->nics_per_node);
        if (hw->nic_rate_Gbps > 0)
            fprintf(out, " %.0f Gb/s per NIC", hw->nic_rate_Gbps);
        if (hw->gpu_model)
            fprintf(out, " %s", hw->gpu_model);
        fprintf(out, "\n");
    }
}

/* What the text says about a table's collective: named by the log, given with --expect, inferred
 * from the table's own figures, or not stated (then, on several nodes, the all_reduce figure). */
static void nt_coll_desc(const nt_table_t *t, char *buf, size_t n)
{
    const char *assumed = t->network_GBps > 0 ? "; assumed all_reduce for the network figure" : "";
    if (t->coll && t->coll_source && strcmp(t->coll_source, "expect") == 0)
        snprintf(buf, n, "%s (from --expect)", t->coll);
    else if (t->coll && t->coll_source && strcmp(t->coll_source, "table") == 0)
        snprintf(buf, n, "%s (not named in the log; inferred from the table: %s)", t->coll,
                 t->coll_note ? t->coll_note : "");
    else if (t->coll)
        snprintf(buf, n, "%s", t->coll);
    else if (t->coll_note)
        snprintf(buf, n, "collective not stated in the log (the table fits %s%s)", t->coll_note,
                 assumed);
    else
        snprintf(buf, n, "collective not stated in the log%s%s%s", *assumed ? " (" : "",
                 *assumed ? assumed + 2 : "", *assumed ? ")" : "");
}

static void nt_text_tables(const nt_doctor_t *d, FILE *out)
{
    if (!d->ntables)
        return;
    fprintf(
        out,
        "\nnccl-tests results (judged on the largest sizes, never on \"Avg bus bandwidth\"):\n");
    for (size_t i = 0; i < d->ntables; i++) {
        const nt_table_t *t = &d->tables[i];
        char coll[400];
        nt_coll_desc(t, coll, sizeof(coll));
        fprintf(out, "  %s:%lu %s, %lu row(s)", d->inputs[t->input].path, t->header_line, coll,
                t->rows);
        if (t->ntop) {
            fprintf(out, ": busbw %.2f GB/s at the largest sizes (up to %llu B)", t->plateau,
                    t->top[0].bytes);
            if (t->expected > 0)
                fprintf(out, ", expected %.0f GB/s (%.0f%%) -> %s", t->expected, 100 * t->ratio,
                        t->verdict);
        }
        fprintf(out, "\n");
        if (t->basis)
            fprintf(out, "      %s\n", t->basis);
    }
    if (d->tables_dropped)
        fprintf(out, "  (%lu more table(s) not analysed)\n", d->tables_dropped);
}

static void nt_text_finding(const nt_doctor_t *d, const nt_finding_t *f, FILE *out, int colour)
{
    static const char *const label[] = {"INFO", "WARN", "ERROR"};
    static const char *const col[] = {"\033[36m", "\033[33m", "\033[31m"};
    fprintf(out, "\n%s[%s]%s %s: %s\n", colour ? col[f->severity] : "", label[f->severity],
            colour ? "\033[0m" : "", f->kb->key, f->kb->title);
    /* the category is the check table's action class (docs/codes.md), not a severity: an error
     * whose cause lies elsewhere (a run cut short, a peer that closed) has nothing for automation
     * to do on this node, category info */
    fprintf(out, "  code: %s (category %s)\n", f->kb->check->code,
            nt_category_name(f->kb->check->category));
    if (f->hosts.n) {
        fprintf(out, "  hosts:");
        for (size_t i = 0; i < f->hosts.n && i < 16; i++)
            fprintf(out, " %s", f->hosts.keys[i]);
        fprintf(out, "%s\n", f->hosts.n > 16 ? " ..." : "");
    }
    if (f->nranks) {
        fprintf(out, "  ranks:");
        for (size_t i = 0; i < f->nranks; i++)
            fprintf(out, " %d", f->ranks[i]);
        fprintf(out, "%s\n", f->ranks_total > f->nranks ? " ..." : "");
    }
    if (f->ev.n) {
        fprintf(out, "  evidence:\n");
        for (size_t i = 0; i < f->ev.n; i++) {
            const nt_ev_t *e = &f->ev.ev[i];
            if (e->input == (unsigned)-1)
                fprintf(out, "    %s: %s\n", nt_ev_file(d, e), e->text);
            else
                fprintf(out, "    %s:%lu: %s\n", nt_ev_file(d, e), e->line, e->text);
        }
        if (f->ev.total > f->ev.n)
            fprintf(out, "    ... and %lu more line(s)\n", f->ev.total - f->ev.n);
    }
    fprintf(out, "  why: %s\n", f->kb->why);
    if (f->detail)
        fprintf(out, "  here: %s\n", f->detail);
    if (f->ncaused_by) {
        fprintf(out, "  caused by:");
        for (size_t i = 0; i < f->ncaused_by; i++)
            fprintf(out, " %s", f->caused_by[i]);
        fprintf(out, "\n");
    }
    if (f->ncauses) {
        fprintf(out, "  causes:");
        for (size_t i = 0; i < f->ncauses; i++)
            fprintf(out, " %s", f->causes[i]);
        fprintf(out, "\n");
    }
    if (f->nrelated) {
        fprintf(out, "  related:");
        for (size_t i = 0; i < f->nrelated; i++)
            fprintf(out, " %s", f->related[i]);
        fprintf(out, "\n");
    }
    fprintf(out, "  fix: %s\n", f->fix ? f->fix : f->kb->fix);
    if (f->kb->confirm)
        fprintf(out, "  confirm: %s\n", f->kb->confirm);
    if (f->kb->reference)
        fprintf(out, "  reference: %s\n", f->kb->reference);
}

void nt_doctor_write_text(const nt_doctor_t *d, FILE *out, int colour)
{
    int c[3];
    if (d->nnot_judged) { /* never silent: the first line says what was not judged */
        fprintf(out, "nettune doctor: NOT JUDGED: ");
        for (size_t i = 0; i < d->nnot_judged; i++)
            fprintf(out, "%s%s", i ? "; " : "", d->not_judged[i]);
        fprintf(out, "\n");
    }
    nt_text_job(d, out);
    nt_op_text(d, out);
    nt_text_tables(d, out);
    for (size_t i = 0; i < d->nfindings; i++)
        nt_text_finding(d, &d->findings[i], out, colour);
    nt_sev_counts(d, c);
    const cJSON *pf;
    if (d->per_file) {
        fprintf(out, "\nfindings of single files that the joint diagnosis replaces:\n");
        cJSON_ArrayForEach (pf, d->per_file) {
            const cJSON *by = cJSON_GetObjectItem(pf, "superseded_by"), *b;
            fprintf(out, "  %s: %s (%s) -> ", cJSON_GetStringValue(cJSON_GetObjectItem(pf, "file")),
                    cJSON_GetStringValue(cJSON_GetObjectItem(pf, "key")),
                    cJSON_GetStringValue(cJSON_GetObjectItem(pf, "severity")));
            int n = 0;
            cJSON_ArrayForEach (b, by)
                fprintf(out, "%s%s", n++ ? ", " : "superseded by ", b->valuestring);
            fprintf(out, "%s\n", n ? "" : "no joint finding cites this file: read it alone too");
        }
    }
    fprintf(out, "\n%zu finding(s): %d error, %d warn, %d info\n", d->nfindings, c[2], c[1], c[0]);
}

/* ---- JSON ----------------------------------------------------------------------------------- */

/* cJSON_Add* return NULL on failure; every call below goes through these so that one failure
 * makes the whole document fail instead of leaving a key out silently. */
#define CHK(x)                                                                                     \
    do {                                                                                           \
        if (!(x))                                                                                  \
            goto fail;                                                                             \
    } while (0)

/* {"file", "line", "text"} of one evidence line (line null for a --report entry). */
static cJSON *nt_ev_obj(const nt_doctor_t *d, const nt_ev_t *e)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, "file", nt_ev_file(d, e));
    if (e->line)
        cJSON_AddNumberToObject(o, "line", (double)e->line);
    else
        cJSON_AddNullToObject(o, "line");
    cJSON_AddStringToObject(o, "text", e->text ? e->text : "");
    return o;
}

static cJSON *nt_strlist(const char *const *v, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; a && i < n; i++) {
        cJSON *s = cJSON_CreateString(v[i]);
        if (!s) {
            cJSON_Delete(a);
            return NULL;
        }
        cJSON_AddItemToArray(a, s);
    }
    return a;
}

static cJSON *nt_maplist(const nt_map_t *m)
{
    return nt_strlist((const char *const *)m->keys, m->n);
}

static double nt_r2(double v)
{
    return round(v * 100) / 100;
}

static cJSON *nt_json_finding(const nt_doctor_t *d, const nt_finding_t *f)
{
    cJSON *o = cJSON_CreateObject(), *ev, *ranks;
    CHK(o);
    CHK(cJSON_AddStringToObject(o, "key", f->kb->key));
    CHK(cJSON_AddStringToObject(o, "code", f->kb->check->code));
    CHK(cJSON_AddStringToObject(o, "category", nt_category_name(f->kb->check->category)));
    CHK(cJSON_AddStringToObject(o, "severity", nt_severity_string(f->severity)));
    CHK(cJSON_AddStringToObject(o, "title", f->kb->title));
    CHK(cJSON_AddStringToObject(o, "why", f->kb->why));
    if (f->detail)
        CHK(cJSON_AddStringToObject(o, "detail", f->detail));
    CHK(cJSON_AddStringToObject(o, "fix", f->fix ? f->fix : f->kb->fix));
    if (f->kb->confirm)
        CHK(cJSON_AddStringToObject(o, "confirm", f->kb->confirm));
    if (f->kb->reference)
        CHK(cJSON_AddStringToObject(o, "reference", f->kb->reference));
    cJSON *cb = nt_strlist(f->caused_by, f->ncaused_by), *ca = nt_strlist(f->causes, f->ncauses),
          *re = nt_strlist(f->related, f->nrelated);
    if (cb)
        cJSON_AddItemToObject(o, "caused_by", cb);
    if (ca)
        cJSON_AddItemToObject(o, "causes", ca);
    if (re)
        cJSON_AddItemToObject(o, "related", re);
    CHK(cb && ca && re);
    cJSON *hosts = nt_maplist(&f->hosts);
    CHK(hosts);
    cJSON_AddItemToObject(o, "hosts", hosts);
    CHK(ranks = cJSON_AddArrayToObject(o, "ranks"));
    for (size_t i = 0; i < f->nranks; i++) {
        cJSON *n = cJSON_CreateNumber(f->ranks[i]);
        CHK(n);
        cJSON_AddItemToArray(ranks, n);
    }
    CHK(ev = cJSON_AddArrayToObject(o, "evidence"));
    for (size_t i = 0; i < f->ev.n; i++) {
        const nt_ev_t *e = &f->ev.ev[i];
        cJSON *x = cJSON_CreateObject();
        CHK(x);
        cJSON_AddItemToArray(ev, x);
        CHK(cJSON_AddStringToObject(x, "file", nt_ev_file(d, e)));
        if (e->input == (unsigned)-1)
            CHK(cJSON_AddNullToObject(x, "line"));
        else
            CHK(cJSON_AddNumberToObject(x, "line", (double)e->line));
        CHK(cJSON_AddStringToObject(x, "text", e->text));
    }
    CHK(cJSON_AddNumberToObject(o, "evidence_total",
                                (double)(f->ev.total > f->ev.n ? f->ev.total : f->ev.n)));
    if (f->values) {
        cJSON *v = cJSON_Duplicate(f->values, 1);
        CHK(v);
        cJSON_AddItemToObject(o, "values", v);
    }
    return o;
fail:
    cJSON_Delete(o);
    return NULL;
}

static cJSON *nt_json_table(const nt_doctor_t *d, const nt_table_t *t)
{
    cJSON *o = cJSON_CreateObject(), *rows;
    CHK(o);
    CHK(cJSON_AddStringToObject(o, "file", d->inputs[t->input].path));
    CHK(cJSON_AddNumberToObject(o, "line", (double)t->header_line));
    CHK(t->coll ? cJSON_AddStringToObject(o, "collective", t->coll)
                : cJSON_AddNullToObject(o, "collective"));
    CHK(t->coll_source ? cJSON_AddStringToObject(o, "collective_source", t->coll_source)
                       : cJSON_AddNullToObject(o, "collective_source"));
    CHK(t->coll_note ? cJSON_AddStringToObject(o, "collective_note", t->coll_note)
                     : cJSON_AddNullToObject(o, "collective_note"));
    CHK(cJSON_AddNumberToObject(o, "rows", (double)t->rows));
    CHK(t->nhosts > 0 ? cJSON_AddNumberToObject(o, "nodes", t->nhosts)
                      : cJSON_AddNullToObject(o, "nodes"));
    CHK(t->nranks > 0 ? cJSON_AddNumberToObject(o, "ranks", t->nranks)
                      : cJSON_AddNullToObject(o, "ranks"));
    CHK(t->gpu_model ? cJSON_AddStringToObject(o, "gpu_model", t->gpu_model)
                     : cJSON_AddNullToObject(o, "gpu_model"));
    CHK(t->ntop ? cJSON_AddNumberToObject(o, "largest_bytes", (double)t->top[0].bytes)
                : cJSON_AddNullToObject(o, "largest_bytes"));
    CHK(t->plateau >= 0 ? cJSON_AddNumberToObject(o, "plateau_busbw_GBps", nt_r2(t->plateau))
                        : cJSON_AddNullToObject(o, "plateau_busbw_GBps"));
    CHK(t->avg_busbw >= 0 ? cJSON_AddNumberToObject(o, "avg_busbw_GBps", t->avg_busbw)
                          : cJSON_AddNullToObject(o, "avg_busbw_GBps"));
    CHK(t->expected > 0 ? cJSON_AddNumberToObject(o, "expected_busbw_GBps", nt_r2(t->expected))
                        : cJSON_AddNullToObject(o, "expected_busbw_GBps"));
    CHK(t->ratio >= 0 ? cJSON_AddNumberToObject(o, "ratio", nt_r2(t->ratio))
                      : cJSON_AddNullToObject(o, "ratio"));
    CHK(cJSON_AddStringToObject(o, "verdict", t->verdict ? t->verdict : "not_judged"));
    CHK(t->basis ? cJSON_AddStringToObject(o, "basis", t->basis)
                 : cJSON_AddNullToObject(o, "basis"));
    CHK(rows = cJSON_AddArrayToObject(o, "largest_rows"));
    for (size_t i = 0; i < t->ntop; i++) {
        cJSON *r = cJSON_CreateObject();
        CHK(r);
        cJSON_AddItemToArray(rows, r);
        CHK(cJSON_AddNumberToObject(r, "bytes", (double)t->top[i].bytes));
        CHK(cJSON_AddNumberToObject(r, "busbw_out_of_place_GBps", t->top[i].busbw_oop));
        CHK(cJSON_AddNumberToObject(r, "busbw_in_place_GBps", t->top[i].busbw_ip));
        CHK(cJSON_AddNumberToObject(r, "line", (double)t->top[i].line));
    }
    return o;
fail:
    cJSON_Delete(o);
    return NULL;
}

cJSON *nt_doctor_to_json(const nt_doctor_t *d, int exit_code)
{
    cJSON *root = cJSON_CreateObject(), *tool, *kb, *inputs, *job, *arr, *hw, *sum, *obj;
    int c[3];
    CHK(root);
    CHK(cJSON_AddStringToObject(root, "schema", NT_DOCTOR_SCHEMA));
    CHK(tool = cJSON_AddObjectToObject(root, "tool"));
    CHK(cJSON_AddStringToObject(tool, "name", "nettune-doctor"));
    CHK(cJSON_AddStringToObject(tool, "version", nt_version()));
    CHK(kb = cJSON_AddObjectToObject(root, "knowledge_base"));
    CHK(cJSON_AddStringToObject(kb, "source", d->kb->source));
    CHK(d->kb->version ? cJSON_AddStringToObject(kb, "version", d->kb->version)
                       : cJSON_AddNullToObject(kb, "version"));

    CHK(inputs = cJSON_AddArrayToObject(root, "inputs"));
    for (size_t i = 0; i < d->ninputs; i++) {
        const nt_input_t *in = &d->inputs[i];
        cJSON *x = cJSON_CreateObject();
        CHK(x);
        cJSON_AddItemToArray(inputs, x);
        CHK(cJSON_AddStringToObject(x, "path", in->path));
        CHK(cJSON_AddStringToObject(x, "status", in->status));
        CHK(cJSON_AddNumberToObject(x, "bytes", (double)in->bytes));
        CHK(cJSON_AddNumberToObject(x, "lines", (double)in->lines));
        CHK(cJSON_AddNumberToObject(x, "nccl_lines", (double)in->nccl_lines));
        CHK(cJSON_AddNumberToObject(x, "truncated_lines", (double)in->truncated));
        CHK(cJSON_AddNumberToObject(x, "nul_bytes", (double)in->nul_bytes));
        if (in->message)
            CHK(cJSON_AddStringToObject(x, "message", in->message));
        if (in->op_lines)
            CHK(cJSON_AddNumberToObject(x, "operator_lines", (double)in->op_lines));
        if (in->gzip)
            CHK(cJSON_AddTrueToObject(x, "gzip"));
        if (in->host)
            CHK(cJSON_AddStringToObject(x, "host", in->host));
        if (strcmp(in->status, "ok") == 0 && !in->op_lines && in->start)
            CHK(cJSON_AddStringToObject(x, "completeness",
                                        in->start == 1 ? "judged" : "not_judged_excerpt"));
    }
    if (d->report_path)
        CHK(cJSON_AddStringToObject(root, "report", d->report_path));

    CHK(job = cJSON_AddObjectToObject(root, "job"));
    CHK(arr = nt_maplist(&d->versions));
    cJSON_AddItemToObject(job, "nccl_versions", arr);
    CHK(d->nranks > 0 ? cJSON_AddNumberToObject(job, "nranks", d->nranks)
                      : cJSON_AddNullToObject(job, "nranks"));
    CHK(d->nnodes > 0 ? cJSON_AddNumberToObject(job, "nnodes", d->nnodes)
                      : cJSON_AddNullToObject(job, "nnodes"));
    CHK(d->local_ranks > 0 ? cJSON_AddNumberToObject(job, "local_ranks", d->local_ranks)
                           : cJSON_AddNullToObject(job, "local_ranks"));
    CHK(arr = nt_maplist(&d->hosts));
    cJSON_AddItemToObject(job, "hosts", arr);
    CHK(arr = nt_maplist(&d->networks));
    cJSON_AddItemToObject(job, "networks", arr);
    CHK(d->nic_names ? cJSON_AddStringToObject(job, "net_devices", d->nic_names)
                     : cJSON_AddNullToObject(job, "net_devices"));
    CHK(obj = cJSON_AddObjectToObject(job, "transports"));
    for (size_t i = 0; i < d->transports.n; i++)
        CHK(cJSON_AddNumberToObject(obj, d->transports.keys[i], (double)d->transports.vals[i]));
    CHK(arr = cJSON_AddArrayToObject(job, "env"));
    for (size_t i = 0; i < d->nenv; i++) {
        cJSON *e = cJSON_CreateObject();
        CHK(e);
        cJSON_AddItemToArray(arr, e);
        CHK(cJSON_AddStringToObject(e, "name", d->env[i].name));
        CHK(cJSON_AddStringToObject(e, "value", d->env[i].value));
        CHK(cJSON_AddStringToObject(e, "source", d->env[i].from_cmdline ? "command_line" : "nccl"));
    }
    CHK(arr = cJSON_AddArrayToObject(job, "tuner_plugins"));
    for (size_t i = 0; i < d->nprocs; i++) {
        if (!d->procs[i].tuner)
            continue;
        cJSON *e = cJSON_CreateObject();
        CHK(e);
        cJSON_AddItemToArray(arr, e);
        CHK(cJSON_AddStringToObject(e, "process", d->procs[i].id));
        CHK(cJSON_AddStringToObject(e, "plugin", d->procs[i].tuner));
    }
    CHK(cJSON_AddNumberToObject(job, "warnings", (double)d->warn_unexplained.total));
    /* the line each fact was read from; a fact that is null or empty above is unknown */
    CHK(obj = cJSON_AddObjectToObject(job, "evidence"));
    if (d->version_ev[0].text)
        cJSON_AddItemToObject(obj, "nccl_versions", nt_ev_obj(d, &d->version_ev[0]));
    if (d->comm_ev.text) {
        cJSON_AddItemToObject(obj, "nranks", nt_ev_obj(d, &d->comm_ev));
        cJSON_AddItemToObject(obj, "nnodes", nt_ev_obj(d, &d->comm_ev));
        cJSON_AddItemToObject(obj, "local_ranks", nt_ev_obj(d, &d->comm_ev));
    } else if (d->nranks_ev.text) { /* only "comm ... nranks N ... Init COMPLETE" lines */
        cJSON_AddItemToObject(obj, "nranks", nt_ev_obj(d, &d->nranks_ev));
    }
    if (d->netib_ev.n)
        cJSON_AddItemToObject(obj, "net_devices", nt_ev_obj(d, &d->netib_ev.ev[0]));
    cJSON *hm = cJSON_AddObjectToObject(obj, "hosts");
    for (size_t i = 0; hm && i < d->hosts.n && i < NT_FACT_EV; i++)
        if (d->host_ev[i].text)
            cJSON_AddItemToObject(hm, d->hosts.keys[i], nt_ev_obj(d, &d->host_ev[i]));
    cJSON *nm = cJSON_AddObjectToObject(obj, "networks");
    for (size_t i = 0; nm && i < d->networks.n && i < NT_FACT_EV; i++)
        if (d->net_ev[i].text)
            cJSON_AddItemToObject(nm, d->networks.keys[i], nt_ev_obj(d, &d->net_ev[i]));
    cJSON *tm = cJSON_AddObjectToObject(obj, "transports");
    for (size_t i = 0; tm && i < d->transports.n && i < NT_FACT_EV; i++)
        if (d->tr_ev[i].text)
            cJSON_AddItemToObject(tm, d->transports.keys[i], nt_ev_obj(d, &d->tr_ev[i]));
    cJSON *em = cJSON_AddObjectToObject(obj, "env");
    for (size_t i = 0; em && i < d->nenv; i++)
        if (d->env[i].first.text)
            cJSON_AddItemToObject(em, d->env[i].name, nt_ev_obj(d, &d->env[i].first));
    cJSON *pm = cJSON_AddObjectToObject(obj, "tuner_plugins");
    for (size_t i = 0; pm && i < d->nprocs; i++)
        if (d->procs[i].tuner && d->procs[i].first_tuner.text)
            cJSON_AddItemToObject(pm, d->procs[i].id, nt_ev_obj(d, &d->procs[i].first_tuner));

    CHK(hw = cJSON_AddObjectToObject(root, "hardware"));
    CHK(d->hw.source ? cJSON_AddStringToObject(hw, "source", d->hw.source)
                     : cJSON_AddNullToObject(hw, "source"));
    CHK(d->hw.gpus_per_node > 0 ? cJSON_AddNumberToObject(hw, "gpus_per_node", d->hw.gpus_per_node)
                                : cJSON_AddNullToObject(hw, "gpus_per_node"));
    CHK(d->hw.nics_per_node > 0 ? cJSON_AddNumberToObject(hw, "nics_per_node", d->hw.nics_per_node)
                                : cJSON_AddNullToObject(hw, "nics_per_node"));
    CHK(d->hw.nic_rate_Gbps > 0 ? cJSON_AddNumberToObject(hw, "nic_rate_Gbps", d->hw.nic_rate_Gbps)
                                : cJSON_AddNullToObject(hw, "nic_rate_Gbps"));
    CHK(d->hw.gpu_model ? cJSON_AddStringToObject(hw, "gpu_model", d->hw.gpu_model)
                        : cJSON_AddNullToObject(hw, "gpu_model"));
    CHK(cJSON_AddNumberToObject(hw, "efficiency", d->hw.efficiency));
    CHK(cJSON_AddNumberToObject(hw, "error_efficiency", d->hw.error_efficiency));
    cJSON *op = nt_op_json(d);
    CHK(op);
    cJSON_AddItemToObject(hw, "operator", op);

    CHK(arr = cJSON_AddArrayToObject(root, "benchmarks"));
    for (size_t i = 0; i < d->ntables; i++) {
        cJSON *t = nt_json_table(d, &d->tables[i]);
        CHK(t);
        cJSON_AddItemToArray(arr, t);
    }
    CHK(arr = cJSON_AddArrayToObject(root, "findings"));
    for (size_t i = 0; i < d->nfindings; i++) {
        cJSON *f = nt_json_finding(d, &d->findings[i]);
        CHK(f);
        cJSON_AddItemToArray(arr, f);
    }
    if (d->per_file)
        CHK(cJSON_AddItemToObject(root, "per_file", cJSON_Duplicate(d->per_file, 1)) ? root : NULL);
    nt_sev_counts(d, c);
    CHK(sum = cJSON_AddObjectToObject(root, "summary"));
    CHK(arr = cJSON_AddArrayToObject(sum, "not_judged"));
    for (size_t i = 0; i < d->nnot_judged; i++)
        CHK(cJSON_AddItemToArray(arr, cJSON_CreateString(d->not_judged[i])) ? arr : NULL);
    CHK(cJSON_AddNumberToObject(sum, "errors", c[2]));
    CHK(cJSON_AddNumberToObject(sum, "warnings", c[1]));
    CHK(cJSON_AddNumberToObject(sum, "infos", c[0]));
    CHK(cJSON_AddNumberToObject(sum, "exit_code", exit_code));
    return root;
fail:
    cJSON_Delete(root);
    return NULL;
}
