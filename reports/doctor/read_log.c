/* Reading: every line of every input goes through nt_feed_line once, which records bounded facts
 * (counts, first evidence lines, per-rank flags). The rules (rules.c) run afterwards. */
#include <ctype.h>
#include <math.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "analyze_int.h"
#include "nettune/rdoc.h"

/* ---- helpers for nt_feed_line --------------------------------------------------------------- */

static int nt_starts(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

static char *nt_dupn(const char *s, size_t n)
{
    char *c = malloc(n + 1);
    if (c) {
        memcpy(c, s, n);
        c[n] = '\0';
    }
    return c;
}

static void nt_replace_str(char **dst, const char *s, size_t n)
{
    char *c = nt_dupn(s, n);
    if (!c)
        return;
    free(*dst);
    *dst = c;
}

static long nt_find_int_after(const char *s, const char *key)
{
    const char *p = strstr(s, key);
    if (!p)
        return -1;
    p += strlen(key);
    while (*p == ' ')
        p++;
    if (!isdigit((unsigned char)*p))
        return -1;
    long v = 0;
    while (isdigit((unsigned char)*p) && v < 100000000L)
        v = v * 10 + (*p++ - '0');
    return v;
}

/* The first line that named entry `idx` of a fact map (hosts, networks, transports): the
 * evidence of that fact in the document. */
static void nt_fact_ev(nt_doctor_t *d, nt_ev_t *arr, long idx)
{
    if (idx >= 0 && idx < NT_FACT_EV && !arr[idx].text && d->cur_line)
        nt_ev_set(&arr[idx], d->cur, d->inputs[d->cur].lines, d->cur_line);
}

static void nt_set_rank_host(nt_doctor_t *d, long rank, long host_idx)
{
    if (rank < 0 || rank >= NT_MAX_RANK || host_idx < 0)
        return;
    if ((size_t)rank >= d->cap_rank_host) {
        size_t nc = d->cap_rank_host ? d->cap_rank_host : 64;
        while (nc <= (size_t)rank)
            nc *= 2;
        int *n = realloc(d->rank_host, nc * sizeof(*n));
        if (!n)
            return;
        memset(n + d->cap_rank_host, 0, (nc - d->cap_rank_host) * sizeof(*n));
        d->rank_host = n;
        d->cap_rank_host = nc;
    }
    d->rank_host[rank] = (int)host_idx + 1;
}

static void nt_mark_gdr(nt_doctor_t *d, long rank, unsigned char bit)
{
    if (rank < 0 || rank >= NT_MAX_RANK)
        return;
    if ((size_t)rank >= d->cap_gdr) {
        size_t nc = d->cap_gdr ? d->cap_gdr : 64;
        while (nc <= (size_t)rank)
            nc *= 2;
        unsigned char *n = realloc(d->gdr, nc);
        if (!n)
            return;
        memset(n + d->cap_gdr, 0, nc - d->cap_gdr);
        d->gdr = n;
        d->cap_gdr = nc;
    }
    d->gdr[rank] |= bit;
}

static nt_proc_t *nt_proc_get(nt_doctor_t *d, const nt_logline_t *l)
{
    char id[320];
    int n;
    if (l->host && l->pid >= 0)
        n = snprintf(id, sizeof(id), "%.*s:%ld", (int)(l->host_len > 256 ? 256 : l->host_len),
                     l->host, l->pid);
    else if (l->task >= 0)
        n = snprintf(id, sizeof(id), "task %ld", l->task);
    else
        return NULL;
    long i = nt_map_put(&d->procmap, id, (size_t)n);
    if (i < 0)
        return NULL;
    if ((size_t)i >= d->nprocs) {
        if (d->nprocs == d->cap_procs) {
            size_t nc = d->cap_procs ? d->cap_procs * 2 : 16;
            nt_proc_t *p = realloc(d->procs, nc * sizeof(*p));
            if (!p)
                return NULL;
            d->procs = p;
            d->cap_procs = nc;
        }
        nt_proc_t *p = &d->procs[d->nprocs++];
        memset(p, 0, sizeof(*p));
        p->id = nt_dupn(id, (size_t)n);
        p->input = d->cur;
        if (l->host)
            p->host = nt_dupn(l->host, l->host_len > 256 ? 256 : l->host_len);
    }
    return &d->procs[i];
}

static void nt_proc_add_rank(nt_proc_t *p, long rank)
{
    if (!p || rank < 0)
        return;
    for (int i = 0; i < p->nranks; i++)
        if (p->ranks[i] == rank)
            return;
    if (p->nranks < 4)
        p->ranks[p->nranks++] = (int)rank;
}

static void nt_env_record(nt_doctor_t *d, const char *name, size_t nlen, const char *val,
                          size_t vlen, int cmdline, const char *line)
{
    while (vlen > 0 && (val[vlen - 1] == '.' || val[vlen - 1] == ' ' || val[vlen - 1] == '\\'))
        vlen--;
    for (size_t i = 0; i < d->nenv; i++) {
        nt_env_t *e = &d->env[i];
        if (strlen(e->name) != nlen || memcmp(e->name, name, nlen) != 0)
            continue;
        if (cmdline)
            return;
        if (e->from_cmdline) { /* the process's own echo is the better fact */
            nt_replace_str(&e->value, val, vlen);
            e->from_cmdline = 0;
            nt_ev_set(&e->first, d->cur, d->inputs[d->cur].lines, line);
            return;
        }
        if (!e->mismatch && (strlen(e->value) != vlen || memcmp(e->value, val, vlen) != 0)) {
            e->mismatch = 1;
            nt_replace_str(&e->other, val, vlen);
            nt_ev_set(&e->first_other, d->cur, d->inputs[d->cur].lines, line);
        }
        return;
    }
    if (d->nenv >= 512)
        return;
    if (d->nenv == d->cap_env) {
        size_t nc = d->cap_env ? d->cap_env * 2 : 16;
        nt_env_t *n = realloc(d->env, nc * sizeof(*n));
        if (!n)
            return;
        d->env = n;
        d->cap_env = nc;
    }
    nt_env_t *e = &d->env[d->nenv];
    memset(e, 0, sizeof(*e));
    e->name = nt_dupn(name, nlen);
    e->value = nt_dupn(val, vlen);
    if (!e->name || !e->value) {
        free(e->name);
        free(e->value);
        return;
    }
    e->from_cmdline = cmdline;
    nt_ev_set(&e->first, d->cur, d->inputs[d->cur].lines, line);
    d->nenv++;
}

static const char *nt_env_value(const nt_doctor_t *d, const char *name)
{
    for (size_t i = 0; i < d->nenv; i++)
        if (strcmp(d->env[i].name, name) == 0)
            return d->env[i].value;
    return NULL;
}

/* "NCCL_X=value" tokens on a launcher command line (mpirun -x NCCL_ALGO=Ring, env A=B cmd). */
static void nt_scan_cmdline_env(nt_doctor_t *d, const char *s, const char *line)
{
    for (const char *p = strstr(s, "NCCL_"); p; p = strstr(p + 5, "NCCL_")) {
        if (p > s && (isalnum((unsigned char)p[-1]) || p[-1] == '_'))
            continue;
        const char *q = p;
        while (isupper((unsigned char)*q) || isdigit((unsigned char)*q) || *q == '_')
            q++;
        if (*q != '=')
            continue;
        const char *v = q + 1, *e = v;
        while (*e && !isspace((unsigned char)*e))
            e++;
        if (e > v)
            nt_env_record(d, p, (size_t)(q - p), v, (size_t)(e - v), 1, line);
    }
}

/* ---- nccl-tests --------------------------------------------------------------------------- */

static void nt_run_reset(nt_doctor_t *d)
{
    nt_map_cleanup(&d->run_hosts);
    nt_map_init(&d->run_hosts);
    d->run_ranks = -1;
    d->run_input = d->cur;
    d->open_table = NULL;
}

/* A device line ("#  Rank  0 Group  0 Pid 295203 on node01 device  0 [0x18] NVIDIA H100"), parsed
 * by the nccl-tests reader: the host joins the run and the rank's host is known. */
static void nt_record_device(nt_doctor_t *d, const nt_ncclt_device_t *dev)
{
    long hi = nt_map_put(&d->run_hosts, dev->host, dev->host_len);
    if (hi >= 0)
        d->run_hosts.vals[hi]++;
    long gh = nt_map_put(&d->hosts, dev->host, dev->host_len);
    nt_fact_ev(d, d->host_ev, gh);
    nt_set_rank_host(d, dev->rank, gh);
    if (dev->rank < NT_MAX_RANK && dev->rank + 1 > d->run_ranks) /* ranks beyond are not tracked */
        d->run_ranks = (int)dev->rank + 1;
}

/* The table the nccl-tests reader just opened (its index `sweep`), with the doctor's own fields. */
static nt_table_t *nt_table_open(nt_doctor_t *d, size_t sweep)
{
    if (d->ntables >= NT_MAX_TABLES) {
        d->tables_dropped++;
        return NULL;
    }
    if (d->ntables % 8 == 0) {
        nt_table_t *n = realloc(d->tables, (d->ntables + 8) * sizeof(*n));
        if (!n)
            return NULL;
        d->tables = n;
    }
    const nt_ncclt_table_t *lt = nt_ncclt_reader_table(d->ncclt, sweep);
    nt_table_t *t = &d->tables[d->ntables++];
    memset(t, 0, sizeof(*t));
    t->sweep = sweep;
    t->input = d->cur;
    t->header_line = d->inputs[d->cur].lines;
    t->coll = lt->coll ? strdup(lt->coll) : NULL;
    t->coll_source = t->coll ? "log" : NULL;
    t->gpu_model = lt->gpu_model ? strdup(lt->gpu_model) : NULL;
    const char *algo = nt_env_value(d, "NCCL_ALGO");
    t->algo = algo ? strdup(algo) : NULL;
    t->avg_busbw = -1;
    t->nranks = lt->nranks;
    t->nhosts = lt->nhosts;
    t->gpus_per_host = lt->gpus_per_host;
    t->verdict = "not_judged";
    t->max_bytes = lt->max_bytes;
    if (d->run_ev.text && lt->run_line == d->run_ev.line && d->run_ev.input == d->cur)
        nt_ev_set(&t->run_ev, d->run_ev.input, d->run_ev.line, d->run_ev.text);
    return t;
}

static void nt_table_add_row(nt_doctor_t *d, nt_table_t *t, const nt_ncclt_row_t *lr,
                             const char *line)
{
    nt_row_t row, *r = &row;
    memset(r, 0, sizeof(*r));
    r->bytes = lr->bytes;
    r->count = lr->count;
    r->busbw_oop = lr->busbw_GBps[0];
    r->busbw_ip = lr->busbw_GBps[1];
    r->algbw_oop = lr->algbw_GBps[0];
    r->typesize = lr->typesize;
    r->redop = lr->redop_kind;
    r->root = lr->root;
    t->rows++;
    if (t->nrowtext < NT_ROW_TEXTS) {
        size_t n = strlen(line) > NT_EVIDENCE_TEXT ? NT_EVIDENCE_TEXT : strlen(line);
        t->rowline[t->nrowtext] = d->inputs[d->cur].lines;
        if ((t->rowtext[t->nrowtext] = nt_dupn(line, n)))
            t->nrowtext++;
    }
    /* keep the NT_TOP_ROWS largest sizes, descending; a repeated size keeps its later row */
    size_t pos = t->ntop;
    for (size_t i = 0; i < t->ntop; i++) {
        if (r->bytes == t->top[i].bytes) {
            free(t->top[i].text);
            t->top[i] = *r;
            t->top[i].input = d->cur;
            t->top[i].line = d->inputs[d->cur].lines;
            t->top[i].text =
                nt_dupn(line, strlen(line) > NT_EVIDENCE_TEXT ? NT_EVIDENCE_TEXT : strlen(line));
            return;
        }
        if (r->bytes > t->top[i].bytes) {
            pos = i;
            break;
        }
    }
    if (pos >= NT_TOP_ROWS)
        return;
    if (t->ntop == NT_TOP_ROWS) {
        free(t->top[NT_TOP_ROWS - 1].text);
        t->ntop--;
    }
    memmove(&t->top[pos + 1], &t->top[pos], (t->ntop - pos) * sizeof(t->top[0]));
    t->top[pos] = *r;
    t->top[pos].input = d->cur;
    t->top[pos].line = d->inputs[d->cur].lines;
    t->top[pos].text =
        nt_dupn(line, strlen(line) > NT_EVIDENCE_TEXT ? NT_EVIDENCE_TEXT : strlen(line));
    t->ntop++;
}

/* Returns 1 if the line belongs to nccl-tests' output (read by lib/nccltests.c). */
static int nt_feed_tests(nt_doctor_t *d, const char *body, const char *line)
{
    switch (nt_ncclt_reader_feed(d->ncclt, body, d->inputs[d->cur].lines)) {
    case NT_NCCLT_NONE:
        return 0;
    case NT_NCCLT_RUN:
        nt_run_reset(d);
        d->tests_started = 1;
        d->run_since_footer = 1;
        nt_ev_free(&d->run_ev);
        nt_ev_set(&d->run_ev, d->cur, d->inputs[d->cur].lines, line);
        return 1;
    case NT_NCCLT_DEVICE:
        nt_record_device(d, nt_ncclt_reader_device(d->ncclt));
        return 1;
    case NT_NCCLT_TABLE:
        d->run_since_footer = 1;
        d->open_table = nt_table_open(d, nt_ncclt_reader_ntables(d->ncclt) - 1);
        return 1;
    case NT_NCCLT_ROW:
        if (d->open_table)
            nt_table_add_row(d, d->open_table, nt_ncclt_reader_row(d->ncclt), line);
        d->last_progress_seq = d->seq;
        return 1;
    case NT_NCCLT_END:
        if (d->open_table) {
            const nt_ncclt_table_t *lt = nt_ncclt_reader_table(d->ncclt, d->open_table->sweep);
            d->open_table->avg_busbw = lt->avg_busbw_GBps;
            d->open_table->complete = lt->complete;
        }
        d->open_table = NULL;
        d->last_progress_seq = d->seq;
        return 1;
    case NT_NCCLT_META:
        if (d->open_table) { /* a row cut mid-line: the run stopped there */
            const nt_ncclt_table_t *lt = nt_ncclt_reader_table(d->ncclt, d->open_table->sweep);
            if (lt->oob_line == d->inputs[d->cur].lines && !d->open_table->oob_ev.text)
                nt_ev_set(&d->open_table->oob_ev, d->cur, d->inputs[d->cur].lines, line);
            if (lt->partial_line == d->inputs[d->cur].lines) {
                nt_ev_free(&d->open_table->cut_ev);
                nt_ev_set(&d->open_table->cut_ev, d->cur, d->inputs[d->cur].lines, line);
            }
        }
        return 1;
    }
    return 0;
}

/* ---- NCCL lines --------------------------------------------------------------------------- */

/* "Channel 00/0 : 1[0] -> 0[0] [receive] via NET/IB/1" and the 2.7 form without [send]. */
static int nt_feed_connection(nt_doctor_t *d, const nt_logline_t *l, const char *line)
{
    const char *via = strstr(l->msg, " via ");
    const char *arrow = strstr(l->msg, " -> ");
    if (!via || !arrow || arrow > via)
        return 0;
    const char *a = arrow;
    while (a > l->msg && a[-1] != ' ')
        a--;
    long src = isdigit((unsigned char)*a) ? strtol(a, NULL, 10) : -1;
    const char *b = arrow + 4;
    long dst = isdigit((unsigned char)*b) ? strtol(b, NULL, 10) : -1;
    if (src < 0 || dst < 0)
        return 0;
    int recv = strstr(arrow, "[receive]") != NULL && strstr(arrow, "[receive]") < via;
    long local = recv ? dst : src;
    const char *t = via + 5;
    char key[48];
    int gdr = strstr(t, "/GDRDMA") != NULL;
    if (nt_starts(t, "NET/")) {
        const char *e = t + 4;
        while (*e && *e != '/' && *e != ' ')
            e++;
        snprintf(key, sizeof(key), "%.*s%s", (int)((e - t) > 32 ? 32 : (e - t)), t,
                 gdr ? "+GDRDMA" : "");
        int sock = nt_starts(t, "NET/Socket");
        if (sock) {
            long ni = nt_map_put(&d->networks, "Socket", 6);
            nt_fact_ev(d, d->net_ev, ni);
            if (ni >= 0)
                d->networks.vals[ni]++;
            nt_evlist_add(&d->socket_ev, d->cur, d->inputs[d->cur].lines, line);
        } else {
            d->net_conns++;
            nt_mark_gdr(d, local, gdr ? 1 : 2);
            nt_evlist_add(gdr ? &d->gdr_yes_ev : &d->gdr_no_ev, d->cur, d->inputs[d->cur].lines,
                          line);
            if (strstr(t, "/Shared"))
                nt_evlist_add(&d->shared_ev, d->cur, d->inputs[d->cur].lines, line);
        }
    } else if (nt_starts(t, "P2P/")) {
        const char *e = t + 4;
        while (*e && *e != '/' && *e != ' ')
            e++;
        snprintf(key, sizeof(key), "%.*s", (int)((e - t) > 32 ? 32 : (e - t)), t);
        d->last_p2p_seq = d->seq;
        nt_ev_set(&d->last_p2p, d->cur, d->inputs[d->cur].lines, line);
    } else if (nt_starts(t, "SHM") || nt_starts(t, "direct shared memory")) {
        snprintf(key, sizeof(key), "SHM");
    } else {
        const char *e = t;
        while (*e && *e != '/' && *e != ' ')
            e++;
        snprintf(key, sizeof(key), "%.*s", (int)((e - t) > 32 ? 32 : (e - t)), t);
    }
    long ti = nt_map_put(&d->transports, key, strlen(key));
    nt_fact_ev(d, d->tr_ev, ti);
    if (ti >= 0)
        d->transports.vals[ti]++;
    if (l->host) {
        long hi = nt_map_put(&d->hosts, l->host, l->host_len);
        nt_fact_ev(d, d->host_ev, hi);
        nt_set_rank_host(d, local, hi);
    }
    return 1;
}

static void nt_feed_nccl(nt_doctor_t *d, const nt_logline_t *l, const char *line)
{
    const char *m = l->msg;
    nt_proc_t *p = nt_proc_get(d, l);
    long hi = l->host ? nt_map_put(&d->hosts, l->host, l->host_len) : -1;
    nt_fact_ev(d, d->host_ev, hi);

    if (nt_feed_connection(d, l, line))
        return;

    const char *v = strstr(m, "NCCL version ");
    if (v) {
        v += 13;
        size_t n = 0;
        while (v[n] && (isdigit((unsigned char)v[n]) || v[n] == '.'))
            n++;
        while (n > 0 && v[n - 1] == '.')
            n--;
        if (n) {
            long vi = nt_map_put(&d->versions, v, n);
            if (vi >= 0) {
                d->versions.vals[vi]++;
                if (vi < 4 && !d->version_ev[vi].text)
                    nt_ev_set(&d->version_ev[vi], d->cur, d->inputs[d->cur].lines, line);
            }
        }
        return;
    }
    if (l->level == NT_LVL_NONE)
        return;

    if (nt_starts(m, "NCCL_")) { /* "NCCL_X set by environment to V" / "NCCL_IB_HCA set to V" */
        const char *e = m;
        while (isupper((unsigned char)*e) || isdigit((unsigned char)*e) || *e == '_')
            e++;
        const char *val = NULL;
        if (nt_starts(e, " set by environment to "))
            val = e + 23;
        else if (nt_starts(e, " set to "))
            val = e + 8;
        if (val) {
            nt_env_record(d, m, (size_t)(e - m), val, strlen(val), 0, line);
            if (p)
                nt_map_put(&p->env, m, (size_t)(e - m));
        }
        return;
    }
    if (nt_starts(m, "Using network ")) {
        const char *n = m + 14;
        size_t len = strlen(n);
        while (len && n[len - 1] == ' ')
            len--;
        long ni = nt_map_put(&d->networks, n, len);
        nt_fact_ev(d, d->net_ev, ni);
        if (ni >= 0)
            d->networks.vals[ni]++;
        if (len == 6 && memcmp(n, "Socket", 6) == 0)
            nt_evlist_add(&d->socket_ev, d->cur, d->inputs[d->cur].lines, line);
        if (p)
            p->init_seen = 1;
        return;
    }
    if (nt_starts(m, "NET/Socket : Using") || nt_starts(m, "NET/Socket: Using")) {
        nt_evlist_add(&d->socket_ev, d->cur, d->inputs[d->cur].lines, line);
        return;
    }
    if (nt_starts(m, "NET/IB : Using [") || nt_starts(m, "NET/IB: Using [") ||
        nt_starts(m, "NET/IB : Using[")) {
        int count = 0;
        const char *end = strchr(m, ';');
        size_t nl = 0;
        char names[256];
        names[0] = '\0';
        for (const char *q = strchr(m, '['); q && (!end || q < end); q = strchr(q + 1, '[')) {
            if (!isdigit((unsigned char)q[1]))
                continue;
            const char *nm = strchr(q, ']');
            if (!nm)
                break;
            nm++;
            const char *ne = nm;
            while (*ne && *ne != ':' && *ne != ' ' && *ne != '/')
                ne++;
            count++;
            if (ne > nm && nl + (size_t)(ne - nm) + 2 < sizeof(names))
                nl += (size_t)snprintf(names + nl, sizeof(names) - nl, "%s%.*s", nl ? "," : "",
                                       (int)(ne - nm), nm);
        }
        if (count > 0) {
            if (d->nics_min < 0 || count < d->nics_min)
                d->nics_min = count;
            if (count > d->nics_max)
                d->nics_max = count;
            if (!d->nic_names)
                d->nic_names = strdup(names);
        }
        nt_evlist_add(&d->netib_ev, d->cur, d->inputs[d->cur].lines, line);
        return;
    }
    const char *tp = strstr(m, "TUNER/Plugin: Using ");
    if (tp && p) {
        tp += 20;
        size_t n = 0;
        while (tp[n] && tp[n] != ' ')
            n++;
        if (!p->tuner)
            p->tuner = nt_dupn(tp, n);
        if (!p->first_tuner.text)
            nt_ev_set(&p->first_tuner, d->cur, d->inputs[d->cur].lines, line);
        p->init_seen = 1;
        return;
    }
    /* nettune's plugin names its file and the file's hash per process:
     * "TUNER/nettune: tuning file '%s' (%s) fnv1a64 %016llx: ..." (plugins/nccl-tuner/src/plugin.c
     * init_common); ranks must agree on both */
    const char *tf = strstr(m, "TUNER/nettune: tuning file '");
    if (tf && p) {
        const char *path = tf + strlen("TUNER/nettune: tuning file '");
        const char *q = strchr(path, '\'');
        const char *h = q ? strstr(q, " fnv1a64 ") : NULL;
        if (q && h && !p->tuning) {
            h += strlen(" fnv1a64 ");
            size_t hn = strspn(h, "0123456789abcdefABCDEF");
            char buf[NT_EVIDENCE_TEXT];
            snprintf(buf, sizeof(buf), "'%.*s' fnv1a64 %.*s", (int)(q - path), path, (int)hn, h);
            p->tuning = strdup(buf);
            snprintf(p->tuning_hash, sizeof(p->tuning_hash), "%.*s", (int)hn, h);
            nt_ev_set(&p->tuning_ev, d->cur, d->inputs[d->cur].lines, line);
        }
        return;
    }
    /* ... or says it uses none (plugin.c init_common): "no tuning file (...)" (INFO), "ignoring
     * tuning file '%s': ..." and "cannot use tuning file '%s': ..." (WARN; those lines go on to
     * the signatures) */
    if (p && !p->tuning_none_ev.text &&
        (strstr(m, "TUNER/nettune: no tuning file") ||
         strstr(m, "TUNER/nettune: ignoring tuning file '") ||
         strstr(m, "TUNER/nettune: cannot use tuning file '")))
        nt_ev_set(&p->tuning_none_ev, d->cur, d->inputs[d->cur].lines, line);
    if (strstr(m, "TUNER/Plugin:") || strstr(m, "internal tuner")) {
        if (p) {
            p->tuner_internal = 1;
            p->init_seen = 1;
            if (!p->first_init.text)
                nt_ev_set(&p->first_init, d->cur, d->inputs[d->cur].lines, line);
        }
        return;
    }
    if (strstr(m, "Connected all rings") && strstr(m, " GDR 0")) {
        nt_evlist_add(&d->gdr0_ev, d->cur, d->inputs[d->cur].lines, line);
        return;
    }
    /* communicator shape: "comm 0x.. rank 0 nRanks 8 nNodes 2 localRanks 4 localRank 0 MNNVL 0"
     * (2.19+) and "comm 0x.. rank 0 nranks 16 cudaDev 0 busId ... - Init COMPLETE" (2.7+) */
    const char *c = strstr(m, "comm 0x");
    if (c) {
        long rank = nt_find_int_after(c, " rank ");
        long nr = nt_find_int_after(c, " nRanks ");
        if (nr < 0)
            nr = nt_find_int_after(c, " nranks ");
        long nn = nt_find_int_after(c, " nNodes ");
        long lr = nt_find_int_after(c, " localRanks ");
        if (nr > d->nranks)
            d->nranks = (int)nr;
        if (nn > d->nnodes)
            d->nnodes = (int)nn;
        if (lr > d->local_ranks)
            d->local_ranks = (int)lr;
        if ((lr >= 0 || nn >= 0) && !d->comm_ev.text)
            nt_ev_set(&d->comm_ev, d->cur, d->inputs[d->cur].lines, line);
        if (nr >= 0 && !d->nranks_ev.text)
            nt_ev_set(&d->nranks_ev, d->cur, d->inputs[d->cur].lines, line);
        if (rank >= 0 && hi >= 0 && (size_t)rank < d->cap_rank_host && d->rank_host[rank] &&
            d->rank_host[rank] != (int)hi + 1)
            nt_evlist_add(&d->rank_other_host_ev, d->cur, d->inputs[d->cur].lines, line);
        nt_set_rank_host(d, rank, hi);
        if (p) {
            nt_proc_add_rank(p, rank);
            p->init_seen = 1;
            if (!p->first_init.text)
                nt_ev_set(&p->first_init, d->cur, d->inputs[d->cur].lines, line);
        }
        if (p && strstr(c, "Init COMPLETE"))
            p->complete = 1;
        if (strstr(c, "Init COMPLETE"))
            d->inputs[d->cur].completes++;
        if (strstr(c, "Init COMPLETE") || strstr(c, "Destroy COMPLETE"))
            d->last_progress_seq = d->seq;
        return;
    }
}

/* Signatures: every KB substring on every line. Returns 1 if one matched. */
/* Whether match j of signature s is on the line at `at` (its first part), with every other
 * part of an "a&&b" pattern somewhere on the line. */
static int nt_pattern_at(const nt_kb_signature_t *s, size_t j, size_t n, const char *body,
                      const char *at, size_t left)
{
    if (n > left || memcmp(at, s->match[j], n) != 0)
        return 0;
    for (size_t q = 0; s->and && s->and[j] && s->and[j][q]; q++)
        if (!strstr(body, s->and[j][q]))
            return 0;
    return 1;
}

static int nt_feed_signatures(nt_doctor_t *d, const nt_logline_t *l, const char *line, int *nccl)
{
    int hit = 0;
    const nt_kb_index_t *x = d->kb->index;
    const unsigned char *b = (const unsigned char *)l->body;
    size_t len = strlen(l->body);
    /* one pass over the line: a signature counts once per line, at its first match */
    unsigned gen = ++d->sig_gen;
    for (size_t k = 0; k < x->nshorts + len; k++) {
        size_t i = 0, j = 0;
        if (k < x->nshorts) {
            i = x->shorts[k].sig, j = x->shorts[k].match;
            const char *at = strstr(l->body, d->kb->sigs[i].match[j]);
            if (d->sig_seen[i] == gen || !at ||
                !nt_pattern_at(&d->kb->sigs[i], j, x->shorts[k].len, l->body, at,
                            len - (size_t)(at - l->body)))
                continue;
        } else {
            size_t p = k - x->nshorts;
            if (p + 4 > len)
                break;
            uint32_t pr = (uint32_t)b[p] | (uint32_t)b[p + 1] << 8;
            if (!(x->pairs[pr / 64] & (1ull << (pr % 64))))
                continue;
            uint32_t hb = nt_kb_hash4(b + p);
            if (!(x->bits[hb / 64] & (1ull << (hb % 64))))
                continue;
            size_t e = x->start[hb], found = 0;
            for (; e < x->start[hb + 1]; e++) {
                const nt_kb_pat_t *pt = &x->pats[e];
                i = pt->sig, j = pt->match;
                if (d->sig_seen[i] != gen && pt->off <= p &&
                    nt_pattern_at(&d->kb->sigs[i], j, pt->len, l->body,
                               (const char *)b + p - pt->off, len - (p - pt->off))) {
                    found = 1;
                    break;
                }
            }
            if (!found)
                continue;
            /* another pattern may start at the same position: look again there */
            k--;
        }
        const nt_kb_signature_t *s = &d->kb->sigs[i];
        d->sig_seen[i] = gen;
        {
            nt_sighit_t *h = &d->sig[i];
            h->count++;
            nt_evlist_add(&h->ev, d->cur, d->inputs[d->cur].lines, line);
            if (l->host)
                nt_map_put(&h->hosts, l->host, l->host_len);
            if (s->counts_as_nccl)
                *nccl = 1;
            if ((int)i == d->sig_wc) {
                /* "with error 12, opcode 1, len 0, vendor err 129" (<= 2.18) or
                 * "with status=12 opcode=..." / "status=IBV_WC_RETRY_EXC_ERR(12)" (2.19+) */
                long st = nt_find_int_after(l->body, "with error ");
                if (st < 0) {
                    const char *q = strstr(l->body, "status=");
                    if (q) {
                        q += 7;
                        if (!isdigit((unsigned char)*q))
                            q = strchr(q, '(') ? strchr(q, '(') + 1 : q;
                        st = isdigit((unsigned char)*q) ? strtol(q, NULL, 10) : -1;
                    }
                }
                long ve = nt_find_int_after(l->body, "vendor err ");
                if (ve < 0)
                    ve = nt_find_int_after(l->body, "vendor_err=");
                if (st >= 0 && st < 32) {
                    d->wc_count[st]++;
                    if (!d->wc_first[st].text) {
                        nt_ev_set(&d->wc_first[st], d->cur, d->inputs[d->cur].lines, line);
                        d->wc_vendor[st] = ve >= 0 ? (unsigned long)ve : 0;
                    }
                }
            }
            if ((int)i != d->sig_plugin && !s->qualifier)
                hit = 1;
        }
    }
    return hit;
}

/* Adds a line to a hit list (once per line) with its host. */
static void nt_hit_add(nt_doctor_t *d, nt_sighit_t *h, const nt_logline_t *l, const char *line)
{
    unsigned long ln = d->inputs[d->cur].lines;
    if (h->ev.n && h->ev.ev[h->ev.n - 1].input == d->cur && h->ev.ev[h->ev.n - 1].line == ln)
        return;
    h->count++;
    nt_evlist_add(&h->ev, d->cur, ln, line);
    if (l->host)
        nt_map_put(&h->hosts, l->host, l->host_len);
}

/* NCCL's own format strings (the knowledge base's messages) on an INFO or WARN line. Returns 1
 * if one matched. */
static int nt_feed_messages(nt_doctor_t *d, const nt_logline_t *l, const char *line)
{
    int hit = 0;
    size_t ml = strlen(l->msg);
    for (size_t i = 0; i < d->kb->nmsgs; i++) {
        const nt_kb_message_t *m = &d->kb->msgs[i];
        if (m->level != l->level)
            continue;
        /* most formats start with text: compare that first, it rejects almost every line */
        if (m->prefix_len >= 4 ? strncmp(l->msg, m->format, m->prefix_len) != 0
                               : !memmem(l->msg, ml, m->anchor, m->anchor_len))
            continue;
        nt_fmt_cap_t caps[24];
        int nc = nt_fmt_match(m->format, l->msg, caps, 24);
        if (nc < 0)
            continue;
        if (m->when_index >= 0 &&
            (m->when_index >= nc || m->when_index >= 24 ||
             caps[m->when_index].len != strlen(m->when_equals) ||
             memcmp(caps[m->when_index].s, m->when_equals, caps[m->when_index].len) != 0))
            continue;
        hit = 1;
        if (m->sig >= 0) {
            nt_hit_add(d, &d->sig[m->sig], l, line);
            break;
        }
        nt_sighit_t *h = &d->msg[i];
        nt_hit_add(d, h, l, line);
        if (!d->msg_values[i] && m->nvalues > 0 && (d->msg_values[i] = cJSON_CreateObject())) {
            for (int k = 0; k < m->nvalues && k < nc && k < 24; k++) {
                if (!m->values[k] || !m->values[k][0])
                    continue;
                char buf[256];
                snprintf(buf, sizeof(buf), "%.*s", (int)(caps[k].len < 255 ? caps[k].len : 255),
                         caps[k].s);
                char *end;
                double v = strtod(buf, &end);
                size_t nl = strlen(m->values[k]);
                int hex =
                    nl > 4 && strcmp(m->values[k] + nl - 4, "_hex") == 0; /* %lx ids stay text */
                if (buf[0] && !*end && !hex)
                    cJSON_AddNumberToObject(d->msg_values[i], m->values[k], v);
                else
                    cJSON_AddStringToObject(d->msg_values[i], m->values[k], buf);
            }
        }
        break; /* one line, one message: the knowledge base lists the newest format first */
    }
    return hit;
}

/* Collector comments (fixtures) and other '#' lines that are not nccl-tests output. */
static int nt_is_comment(const char *body)
{
    if (*body != '#')
        return 0;
    const char *p = body + 1;
    while (*p == ' ')
        p++;
    if (nt_starts(p, "Source:") || nt_starts(p, "Command:") || nt_starts(p, "Env:"))
        return 1;
    return !(nt_starts(p, "nThread ") || nt_starts(p, "Collective test starting:") ||
             nt_starts(p, "nccl-tests version") || nt_starts(p, "Using devices") ||
             nt_starts(p, "Rank ") || (strstr(p, "size") && strstr(p, "busbw")) ||
             nt_starts(p, "(B)") || strstr(p, "out-of-place") ||
             nt_starts(p, "Avg bus bandwidth") || nt_starts(p, "Out of bounds") || *p == '\0');
}

/* ---- completeness and PyTorch's own lines -------------------------------------------------- */

/* Whether the first line with text of an input is where a whole log starts: NCCL's version banner
 * (src/init.cc prints "NCCL version %s"; the bootstrap's interface line may come first), nccl-tests' run header ("# nThread", printed
 * before anything else by src/common.cu), or a launcher's start: the command at a shell prompt
 * ("$ torchrun ...", "+ srun ..." under set -x), torchrun's OMP_NUM_THREADS banner
 * (torch/distributed/run.py), DeepSpeed's launcher line (deepspeed/launcher/runner.py). */
static int nt_is_start(const nt_logline_t *l)
{
    const char *b = l->body;
    if (strstr(b, "NCCL version ") || nt_starts(b, "# nThread ") || nt_starts(b, "#  nThread "))
        return 1;
    /* NCCL's own first lines, printed before the banner by ncclGetUniqueId's bootstrap init
     * (src/bootstrap.cc "Bootstrap: Using", src/init.cc "cudaDriverVersion") */
    if (l->level == NT_LVL_INFO && (nt_starts(l->msg, "Bootstrap : Using") ||
                                    nt_starts(l->msg, "Bootstrap: Using") ||
                                    nt_starts(l->msg, "cudaDriverVersion")))
        return 1;
    if ((b[0] == '$' || b[0] == '+') && b[1] == ' ')
        return 1;
    /* the command itself, pasted without a prompt: an nccl-tests binary or a launcher */
    if (((b[0] == '.' && b[1] == '/') || b[0] == '/') && strstr(b, "_perf"))
        return 1;
    if (nt_starts(b, "mpirun ") || nt_starts(b, "torchrun ") || nt_starts(b, "srun ") ||
        nt_starts(b, "deepspeed ") || nt_starts(b, "accelerate launch ") ||
        nt_starts(b, "python -m torch.distributed.run "))
        return 1;
    return strstr(b, "Setting OMP_NUM_THREADS environment variable") ||
           (strstr(b, "[launch.py:") && strstr(b, "WORLD INFO DICT")) ||
           strstr(b, "torch.distributed.run") || strstr(b, "Starting elastic_operator");
}

/* Reads a number after `key` in s ("SeqNum=12"), or -1. */
static long nt_num_after(const char *s, const char *key)
{
    const char *p = strstr(s, key);
    if (!p)
        return -1;
    p += strlen(key);
    return isdigit((unsigned char)*p) ? strtol(p, NULL, 10) : -1;
}

/* The rank of a PyTorch c10d line: "[Rank 3]", "[PG 0 (default_pg) Rank 3]" or
 * "[PG ID 0 PG GUID 0(default_pg) Rank 3]" (ProcessGroupNCCL.cpp logPrefix), else the launcher's
 * task, else -1. */
static long nt_pg_rank(const nt_logline_t *l)
{
    for (const char *p = strstr(l->body, "Rank "); p; p = strstr(p + 5, "Rank "))
        if ((p == l->body || p[-1] == '[' || p[-1] == ' ') && isdigit((unsigned char)p[5]))
            return strtol(p + 5, NULL, 10);
    return l->task;
}

/* The WorkNCCL(...) of a timeout: "SeqNum=12, OpType=ALLREDUCE" (on the watchdog's line, or on
 * the next one where the message was wrapped). */
static void nt_timeout_work(nt_timeout_t *t, const char *w)
{
    if (t->seq < 0)
        t->seq = nt_num_after(w, "SeqNum=");
    if (t->timeout_ms < 0)
        t->timeout_ms = nt_num_after(w, "Timeout(ms)=");
    const char *op = strstr(w, "OpType=");
    size_t n = 0;
    if (op && !t->op[0]) {
        for (op += 7; op[n] && op[n] != ',' && op[n] != ')' && n + 1 < sizeof(t->op); n++)
            t->op[n] = op[n];
        t->op[n] = '\0';
    }
}

/* PyTorch's flight recorder, from ProcessGroupNCCL.cpp's own lines (torch/csrc/distributed/c10d/
 * ProcessGroupNCCL.cpp: the constructor's "ProcessGroupNCCL environments: ...,
 * TORCH_NCCL_DUMP_ON_TIMEOUT: %d, ..., TORCH_NCCL_TRACE_BUFFER_SIZE: %d"; WorkNCCL::
 * printTraceback; broadcastDumpSignal; the heartbeat monitor's "Observed flight recorder dump
 * signal from another rank via TCPStore." and "Received a dump signal due to a collective timeout
 * from %s and we will try our best to dump the debug info."); DebugInfoWriter::write's
 * "Finished writing NCCLPG debug info to %s" when a rank wrote its dump. */
static void nt_feed_flight_recorder(nt_doctor_t *d, const nt_logline_t *l, const char *line)
{
    nt_input_t *in = &d->inputs[d->cur];
    const char *b = l->body;
    if (strstr(b, "ProcessGroupNCCL environments:")) {
        long buf = nt_num_after(b, "TORCH_NCCL_TRACE_BUFFER_SIZE: ");
        long dump = nt_num_after(b, "TORCH_NCCL_DUMP_ON_TIMEOUT: ");
        if (buf >= 0 && (d->fr_buffer < 0 || buf < d->fr_buffer))
            d->fr_buffer = buf;
        if (dump >= 0 && (d->fr_dump < 0 || dump < d->fr_dump))
            d->fr_dump = dump;
        if (!d->fr_env_ev.text && (buf >= 0 || dump >= 0))
            nt_ev_set(&d->fr_env_ev, d->cur, in->lines, line);
    } else if (strstr(b, "Stack trace of the failed collective not found")) {
        nt_evlist_add(&d->fr_off_ev, d->cur, in->lines, line);
    } else if (strstr(b, "Stack trace of the failed collective:") ||
               strstr(b, "Flight Recorder trace successfully dumped") ||
               strstr(b, "Finished writing NCCLPG debug info to")) {
        nt_evlist_add(&d->fr_on_ev, d->cur, in->lines, line);
    } else if (strstr(b, "First PG on this rank to signal dumping") ||
               strstr(b, "Observed flight recorder dump signal from another rank")) {
        int first = strstr(b, "First PG on this rank") != NULL;
        long r = l->task >= 0 ? l->task : nt_pg_rank(l); /* the launcher's is the global rank */
        nt_evlist_add(first ? &d->fr_first_ev : &d->fr_observed_ev, d->cur, in->lines, line);
        if (r >= 0 && r < NT_MAX_RANK) {
            char k[24];
            int n = snprintf(k, sizeof(k), "%ld", r);
            nt_map_put(first ? &d->fr_first_ranks : &d->fr_observed_ranks, k, (size_t)n);
        }
    } else if (d->fr_src_rank < 0) {
        const char *p = strstr(b, "Received a dump signal due to a collective timeout from");
        if (!p)
            return;
        p += strlen("Received a dump signal due to a collective timeout from");
        p += strspn(p, " ");
        if (nt_starts(p, "rank ") && isdigit((unsigned char)p[5]))
            d->fr_src_rank = strtol(p + 5, NULL, 10);
        else if (nt_starts(p, "this local rank"))
            d->fr_src_rank = l->task >= 0 ? l->task : nt_pg_rank(l);
    }
}

static void nt_feed_pytorch(nt_doctor_t *d, const nt_logline_t *l, const char *line)
{
    nt_input_t *in = &d->inputs[d->cur];
    const char *b = l->body;
    nt_feed_flight_recorder(d, l, line);
    if (strstr(b, "ProcessGroupNCCL initialized") || strstr(b, "NCCL watchdog thread started")) {
        long r = nt_pg_rank(l);
        in->pg_inits++;
        if (r >= 0 && r < NT_MAX_RANK) {
            char k[24];
            int n = snprintf(k, sizeof(k), "%ld", r);
            nt_map_put(&d->pg_ranks, k, (size_t)n);
        }
        if (!d->pg_ev.text)
            nt_ev_set(&d->pg_ev, d->cur, in->lines, line);
    }
    const char *w = strstr(b, "Watchdog caught collective operation timeout");
    if (!w)
        w = strstr(b, "Timeout at NCCL work:");
    if (!w) {
        const char *work = strstr(b, "WorkNCCL(");
        if (work && d->ntimeouts && d->timeout_line + 1 == in->lines)
            nt_timeout_work(&d->timeouts[d->ntimeouts - 1], work);
        return;
    }
    d->timeout_line = in->lines;
    in->outcomes++;
    d->timeouts_total++;
    if (d->ntimeouts >= NT_TIMEOUTS)
        return;
    nt_timeout_t *t = &d->timeouts[d->ntimeouts++];
    t->rank = nt_pg_rank(l);
    t->seq = nt_num_after(w, "Timeout at NCCL work: ");
    t->timeout_ms = -1;
    t->op[0] = '\0';
    nt_timeout_work(t, w);
    nt_ev_set(&t->ev, d->cur, in->lines, line);
}

static void nt_feed_line(nt_doctor_t *d, const char *line)
{
    nt_logline_t l;
    int nccl = 0;
    const char *body, *host;
    d->seq++;
    d->cur_line = line;
    if (nt_op_line(d, line, &body, &host))
        return; /* an operator file's line (read_operator.c) */
    nt_line_parse(body, &l);
    /* the launcher labels the job's lines carry; the operator reader has already taken pdsh's
     * "host: " off when every line of the file has one */
    d->labels_seen |= l.prefix_rows;
    if (body != line && d->pdsh_row >= 0 && nt_line_pdsh_host(line))
        d->labels_seen |= 1ul << d->pdsh_row;
    nt_input_t *in = &d->inputs[d->cur];
    /* PyTorch prints NCCL's last WARN after "Last error:" without NCCL's prefix: it is that WARN */
    if (in->last_error && l.level == NT_LVL_NONE && *l.body) {
        l.level = NT_LVL_WARN;
        l.msg = l.body;
    }
    /* "Last error:" ends PyTorch's line; NCCL's lines never do */
    size_t blen = strlen(l.body);
    in->last_error = l.level == NT_LVL_NONE && blen >= 11 && strcmp(l.body + blen - 11, "Last error:") == 0;
    if (*l.body && !nt_is_comment(l.body)) {
        if (!in->start)
            in->start = nt_is_start(&l) ? 1 : 2;
        if (strcmp(l.body, "...") != 0) {
            size_t n = strlen(line);
            if (n > NT_EVIDENCE_TEXT)
                n = NT_EVIDENCE_TEXT;
            memcpy(in->last, line, n);
            in->last[n] = '\0';
            in->last_no = in->lines;
        }
    }
    if (l.level == NT_LVL_WARN)
        in->outcomes++;
    if (l.level == NT_LVL_NONE &&
        (strstr(l.body, "ProcessGroupNCCL") || strstr(l.body, "Watchdog") ||
         strstr(l.body, "light recorder") || strstr(l.body, "FlightRecorder") ||
         strstr(l.body, "NCCLPG debug info") ||
         (d->ntimeouts && strstr(l.body, "WorkNCCL("))))
        nt_feed_pytorch(d, &l, line);
    if (l.level != NT_LVL_NONE && d->inputs[d->cur].log)
        nt_nccllog_feed(d->inputs[d->cur].log, &l, d->inputs[d->cur].lines);
    if (nt_is_comment(l.body))
        return;
    if (l.body[0] == '#' && nt_starts(l.body + 1 + strspn(l.body + 1, " "), "Avg bus bandwidth")) {
        /* one job prints one footer per run, after its table; a second footer with no run or
         * table begun since the first is another process's end of the same sweep */
        if (d->footer_input == d->cur + 1 && !d->run_since_footer)
            d->footers_together++;
        d->footer_input = d->cur + 1;
        d->run_since_footer = 0;
        nt_evlist_add(&d->footer_ev, d->cur, d->inputs[d->cur].lines, line);
    }
    if (nt_feed_tests(d, l.body, line)) {
        d->inputs[d->cur].nccl_lines++;
        if (d->open_table)
            in->outcomes++; /* a row of results */
        return;
    }
    int sig = nt_feed_signatures(d, &l, line, &nccl);
    if (sig && l.level == NT_LVL_NONE)
        in->outcomes++; /* a known error line without NCCL's prefix (PyTorch's, nccl-tests') */
    if (l.level != NT_LVL_NONE)
        sig |= nt_feed_messages(d, &l, line);
    if (l.level != NT_LVL_NONE || strstr(l.body, "NCCL version "))
        nccl = 1;
    if (l.level == NT_LVL_NONE && strstr(l.body, " via ") && strstr(l.body, " -> "))
        nccl = 1;
    if (nccl) {
        nt_feed_nccl(d, &l, line);
    } else {
        nt_ncclt_reader_scan_coll(d->ncclt, l.body);
        if (strstr(l.body, "NCCL_"))
            nt_scan_cmdline_env(d, l.body, line);
    }
    if (l.level == NT_LVL_WARN && !sig)
        nt_evlist_add(&d->warn_unexplained, d->cur, d->inputs[d->cur].lines, line);
    if (nccl)
        d->inputs[d->cur].nccl_lines++;
    else if (l.level == NT_LVL_NONE && isdigit((unsigned char)l.body[strspn(l.body, " ")])) {
        /* a pasted run of nccl-tests rows without the table's header: nccl-tests output too
         * (not judged as a table: its collective and sizes' header are missing) */
        nt_ncclt_row_t row;
        if (nt_ncclt_parse_row(l.body, &row) == 1)
            d->inputs[d->cur].nccl_lines++;
    }
}

/* ---- inputs ------------------------------------------------------------------------------ */

static nt_input_t *nt_input_add(nt_doctor_t *d, const char *name)
{
    if (d->ninputs >= NT_MAX_INPUTS)
        return NULL;
    if (d->ninputs == d->cap_inputs) {
        size_t nc = d->cap_inputs ? d->cap_inputs * 2 : 8;
        nt_input_t *n = realloc(d->inputs, nc * sizeof(*n));
        if (!n)
            return NULL;
        d->inputs = n;
        d->cap_inputs = nc;
    }
    nt_input_t *in = &d->inputs[d->ninputs];
    memset(in, 0, sizeof(*in));
    in->path = strdup(name);
    if (!in->path)
        return NULL;
    in->status = "ok";
    /* NCCL facts for tuning (NIC speeds, per-call TUNING lines) of the first 256 inputs */
    if (d->ninputs < 256 && (in->log = malloc(sizeof(*in->log))))
        nt_nccllog_init(in->log);
    d->cur = (unsigned)d->ninputs++;
    return in;
}

static int nt_input_fail(nt_input_t *in, const char *status, char *msg, size_t msglen,
                         const char *fmt, const char *name, const char *reason)
{
    snprintf(msg, msglen, fmt, name, reason);
    in->status = status;
    free(in->message);
    in->message = strdup(msg);
    return 1;
}

static int nt_read_reader(nt_doctor_t *d, nt_input_t *in, nt_linereader_t *r, const char *name,
                       char *msg, size_t msglen)
{
    const char *line;
    size_t len;
    int rc;
    char nul[64] = "";
    int first = 1;
    d->open_table = NULL;
    nt_op_begin(d, d->next_host);
    nt_ncclt_reader_new_input(d->ncclt, d->cur);
    while ((rc = nt_linereader_next(r, &line, &len)) == 1) {
        if (first && nt_linereader_is_binary(r))
            break;
        first = 0;
        in->lines = nt_linereader_lineno(r); /* evidence quotes the line grep -n and editors show */
        nt_feed_line(d, line);
    }
    in->bytes = nt_linereader_bytes(r);
    in->truncated = nt_linereader_truncated(r);
    in->nul_bytes = nt_linereader_nul_bytes(r);
    in->gzip = nt_linereader_gzip(r);
    if (d->next_host)
        in->host = strdup(d->next_host);
    d->open_table = NULL;
    int op_bad = 0;
    char op_msg[600] = "";
    in->op_lines = 0;
    if (rc >= 0 && !nt_linereader_is_binary(r) && nt_op_end(d, op_msg, sizeof(op_msg), &op_bad))
        in->op_lines = d->op.op_lines ? d->op.op_lines : 1;
    if (op_bad)
        return nt_input_fail(in, "bad_format", msg, msglen, "%s%s", op_msg, "");
    if (in->nul_bytes)
        snprintf(nul, sizeof(nul), " (%llu NUL byte%s skipped)", (unsigned long long)in->nul_bytes,
                 in->nul_bytes == 1 ? "" : "s");
    if (rc < 0 && nt_linereader_gzip_damaged(r)) {
        char why[200];
        snprintf(why, sizeof(why),
                 "gzip data damaged or cut short after line %lu (copy the file again); the lines "
                 "before it are diagnosed",
                 in->lines);
        return nt_input_fail(in, "read_error", msg, msglen, "'%s': %s", name, why);
    }
    if (rc < 0)
        return nt_input_fail(in, "read_error", msg, msglen, "cannot read '%s': %s", name,
                          strerror(errno));
    if (nt_linereader_is_binary(r) == 2)
        return nt_input_fail(
            in, "binary", msg, msglen,
            "'%s' is UTF-16 text: convert it to UTF-8 first (iconv -f UTF-16 -t UTF-8 '%s')", name,
            name);
    if (nt_linereader_is_binary(r))
        return nt_input_fail(in, "binary", msg, msglen, "'%s' is a binary file%s, not an NCCL log",
                          name, "");
    if (in->bytes == 0)
        return nt_input_fail(in, "empty", msg, msglen, "'%s' is empty%s", name, "");
    if (in->nul_bytes == in->bytes)
        return nt_input_fail(in, "empty", msg, msglen, "'%s' is empty%s", name,
                          " (nothing but NUL bytes)");
    if (in->nccl_lines == 0 && in->op_lines == 0)
        return nt_input_fail(in, "no_nccl_lines", msg, msglen,
                          "no NCCL, nccl-tests or operator-file lines found in '%s'%s (see nettune "
                          "doctor --help for the inputs it reads)",
                          name, nul);
    return 0;
}

void nt_doctor_set_host(nt_doctor_t *d, const char *host)
{
    d->next_host = host;
}

int nt_doctor_read_stream(nt_doctor_t *d, const char *name, FILE *fp, char *msg, size_t msglen)
{
    nt_input_t *in = nt_input_add(d, name);
    if (!in) {
        snprintf(msg, msglen, "cannot read '%s': too many inputs or out of memory", name);
        return 1;
    }
    nt_linereader_t *r = nt_linereader_open_stream(fp);
    if (!r)
        return nt_input_fail(in, "read_error", msg, msglen, "cannot read '%s': %s", name,
                          strerror(errno));
    int rc = nt_read_reader(d, in, r, name, msg, msglen);
    nt_linereader_close(r);
    return rc;
}

int nt_doctor_read_file(nt_doctor_t *d, const char *path, char *msg, size_t msglen)
{
    nt_input_t *in = nt_input_add(d, path);
    if (!in) {
        snprintf(msg, msglen, "cannot read '%s': too many inputs or out of memory", path);
        return 1;
    }
    nt_linereader_t *r = nt_linereader_open(path);
    if (!r && errno == EISDIR) {
        char how[300];
        snprintf(how, sizeof(how), " (e.g. %s%s*.log)", path,
                 path[0] && path[strlen(path) - 1] == '/' ? "" : "/");
        return nt_input_fail(in, "unreadable", msg, msglen,
                          "'%s' is a directory: give the files in it%s", path, how);
    }
    if (!r)
        return nt_input_fail(in, "unreadable", msg, msglen, "cannot open '%s': %s", path,
                          strerror(errno));
    int rc = nt_read_reader(d, in, r, path, msg, msglen);
    nt_linereader_close(r);
    return rc;
}

/* ---- --report ------------------------------------------------------------------------------ */

int nt_doctor_load_report(nt_doctor_t *d, const char *path, char *err, size_t errlen)
{
    nt_rdoc_t doc;
    char why[256] = "";
    /* lib/rdoc.c: the one report reader; its reason and the fix make one line */
    nt_status_t st = nt_rdoc_open_why(path, &doc, why, sizeof(why));
    if (st != NT_OK || doc.kind != NT_DOC_REPORT) {
        if (st == NT_OK) /* a nettune.tuning/1 file */
            snprintf(why, sizeof(why), "'%s' is a %s file", path, doc.schema);
        snprintf(err, errlen,
                 "--report %s; give the nettune.report/1 JSON that nettune probe --output wrote",
                 why);
        nt_rdoc_close(&doc);
        return -1;
    }
    free(d->report_path);
    d->report_path = strdup(path);
    int min_active = -1, max_gpus = -1;
    double min_rate = -1;
    const char *model = NULL;
    /* file order, as the evidence names nodes[i] */
    int nfile = 0;
    for (size_t i = 0; i < doc.nnodes; i++)
        if (doc.nodes[i].index + 1 > nfile)
            nfile = doc.nodes[i].index + 1;
    for (int ni = 0; ni < nfile; ni++) {
        const nt_rnode_t *nd = NULL;
        for (size_t i = 0; i < doc.nnodes && !nd; i++)
            if (doc.nodes[i].index == ni)
                nd = &doc.nodes[i];
        if (!nd)
            continue;
        if (nd->host && *nd->host)
            nt_map_put(&d->report_all_hosts, nd->host, strlen(nd->host));
        for (int k = 0; k < nd->nnics && nd->nics; k++) {
            const nt_rnic_t *c = &nd->nics[k];
            if (strcmp(c->state, "ACTIVE") != 0)
                continue;
            char text[300];
            d->report_active_ports++;
            snprintf(text, sizeof(text), "nodes[%d].nics[%d]: %s %s port %d state ACTIVE", ni, k,
                     nd->host, *c->name ? c->name : "?", c->port > 0 ? c->port : 0);
            nt_evlist_add(&d->report_ev, (unsigned)-1, 0, text);
            nt_map_put(&d->report_hosts, nd->host, strlen(nd->host));
            if (!isnan(c->rate_Gbps) && (min_rate < 0 || c->rate_Gbps < min_rate))
                min_rate = c->rate_Gbps;
        }
        if (cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(nd->j, "nics")) &&
            (min_active < 0 || nd->nics_active < min_active))
            min_active = nd->nics_active;
        if (cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(nd->j, "gpus"))) {
            if (nd->ngpus > max_gpus)
                max_gpus = nd->ngpus;
            if (!model && nd->gpu_model)
                model = nd->gpu_model;
        }
    }
    /* applied at the diagnosis, once the log's hosts are known */
    d->report_gpus = max_gpus;
    d->report_nics = min_active;
    d->report_rate_Gbps = min_rate;
    free(d->report_model);
    d->report_model = model ? strdup(model) : NULL;
    nt_rdoc_close(&doc);
    return 0;
}
