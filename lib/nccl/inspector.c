/* The one reader of NCCL Inspector's outputs (include/nettune/jobrec.h): its JSON logs, compact
 * one record a line as the plugin writes them (v2.30.7-1 inspector_json.cc:308-320: an object,
 * then jsonNewline) or pretty-printed as in its README, and its Prometheus textfiles. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "nettune/jobrec.h"
#include "nettune/logline.h"

const char *nt_timing_name(nt_timing_t t)
{
    switch (t) {
    case NT_TIMING_KERNEL_GPU:
        return "kernel_gpu";
    case NT_TIMING_KERNEL_CPU:
        return "kernel_cpu";
    case NT_TIMING_COLLECTIVE_CPU:
        return "collective_cpu";
    default:
        return "unknown";
    }
}

static nt_timing_t nt_timing_parse(const char *s)
{
    for (nt_timing_t t = NT_TIMING_KERNEL_GPU; t <= NT_TIMING_COLLECTIVE_CPU; t++)
        if (s && strcmp(s, nt_timing_name(t)) == 0)
            return t;
    return NT_TIMING_UNKNOWN;
}

const char *nt_jobfmt_name(nt_jobfmt_t f)
{
    return f == NT_JOBFMT_INSPECTOR_JSON ? "inspector_json"
           : f == NT_JOBFMT_INSPECTOR_PROM ? "inspector_prom"
           : f == NT_JOBFMT_RAS_JSON       ? "ras_json"
                                           : "unknown";
}

nt_jobfmt_t nt_jobfmt_sniff(const char *head)
{
    while (*head && isspace((unsigned char)*head))
        head++;
    if (*head == '{')
        return NT_JOBFMT_INSPECTOR_JSON;
    if (strncmp(head, "nccl_", 5) == 0 || (head[0] == '#' && strstr(head, " nccl_")))
        return NT_JOBFMT_INSPECTOR_PROM;
    return NT_JOBFMT_UNKNOWN;
}

static void nt_jobrec_clear(nt_jobrec_t *rec)
{
    memset(rec, 0, sizeof(*rec));
    rec->rank = rec->nranks = rec->nnodes = rec->peer = -1;
    rec->pid = -1;
    rec->bytes = rec->exec_us = rec->algbw_GBps = rec->busbw_GBps = NAN;
    rec->dump_ts_us = rec->seen_us = rec->start_ts_us = rec->stop_ts_us = NAN;
    rec->coll_count = NAN;
}

static void nt_insp_str_copy(char *dst, size_t cap, const char *s)
{
    snprintf(dst, cap, "%s", s ? s : "");
}

static const char *nt_insp_json_str(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static double nt_insp_json_num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* A count or id that must be a whole number in range; -1 otherwise. */
static long nt_insp_json_int(const cJSON *o, const char *k, long max)
{
    double d = nt_insp_json_num(o, k);
    return isfinite(d) && d >= 0 && d <= (double)max && d == floor(d) ? (long)d : -1;
}

/* The op object: "coll_perf" with keys coll_* or "p2p_perf" with keys p2p_* (v2.30.7-1
 * inspector_json.cc:204-258; before 2.30.3 only coll_perf, v2.28.3-1 inspector.cc:477-489). */
static int nt_insp_op_parse(const cJSON *op, const char *pfx, nt_jobrec_t *rec)
{
    char k[40];
    const char *name = nt_insp_json_str(op, pfx); /* "coll": "AllReduce", "p2p": "Send" */
    snprintf(k, sizeof(k), "%s_sn", pfx);
    double sn = nt_insp_json_num(op, k);
    if (!name || !isfinite(sn) || sn < 0 || sn > 1.8e19)
        return -1;
    nt_insp_str_copy(rec->op, sizeof(rec->op), name);
    rec->has_seq = 1;
    rec->seq = (uint64_t)sn;
    snprintf(k, sizeof(k), "%s_msg_size_bytes", pfx);
    rec->bytes = nt_insp_json_num(op, k);
    snprintf(k, sizeof(k), "%s_exec_time_us", pfx);
    rec->exec_us = nt_insp_json_num(op, k);
    snprintf(k, sizeof(k), "%s_timing_source", pfx);
    rec->timing = nt_timing_parse(nt_insp_json_str(op, k));
    snprintf(k, sizeof(k), "%s_algobw_gbs", pfx);
    rec->algbw_GBps = nt_insp_json_num(op, k);
    snprintf(k, sizeof(k), "%s_busbw_gbs", pfx);
    rec->busbw_GBps = nt_insp_json_num(op, k);
    if (strcmp(pfx, "p2p") == 0)
        rec->peer = (int)nt_insp_json_int(op, "p2p_peer", 1 << 30);
    /* Verbose mode (NCCL_INSPECTOR_DUMP_VERBOSE=1): inspector_json.cc:116-134, timestamps from
     * the writing host's clock. */
    const cJSON *ts = cJSON_GetObjectItemCaseSensitive(op, "event_trace_ts");
    if (cJSON_IsObject(ts)) {
        snprintf(k, sizeof(k), "%s_start_ts", pfx);
        rec->start_ts_us = nt_insp_json_num(ts, k);
        snprintf(k, sizeof(k), "%s_stop_ts", pfx);
        rec->stop_ts_us = nt_insp_json_num(ts, k);
        rec->nchannels = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(ts, "kernel_events"));
    }
    return 0;
}

int nt_inspector_parse(const char *text, size_t len, nt_jobrec_t *rec)
{
    nt_jobrec_clear(rec);
    cJSON *doc = cJSON_ParseWithLength(text, len);
    if (!doc)
        return -1;
    int rc = -1;
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(doc, "header");
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(doc, "metadata");
    const cJSON *coll = cJSON_GetObjectItemCaseSensitive(doc, "coll_perf");
    const cJSON *p2p = cJSON_GetObjectItemCaseSensitive(doc, "p2p_perf");
    const char *id = nt_insp_json_str(h, "id");
    long rank = nt_insp_json_int(h, "rank", 1 << 30);
    if (!cJSON_IsObject(h) || !id || rank < 0)
        goto out;
    nt_insp_str_copy(rec->comm_id, sizeof(rec->comm_id), id);
    nt_insp_str_copy(rec->comm_name, sizeof(rec->comm_name), nt_insp_json_str(h, "comm_name"));
    rec->rank = (int)rank;
    rec->nranks = (int)nt_insp_json_int(h, "n_ranks", 1 << 30);
    rec->nnodes = (int)nt_insp_json_int(h, "nnodes", 1 << 30);
    if (rec->nranks >= 0 && rec->rank >= rec->nranks)
        goto out;
    if (cJSON_IsObject(m)) {
        nt_insp_str_copy(rec->host, sizeof(rec->host), nt_insp_json_str(m, "hostname"));
        rec->pid = nt_insp_json_int(m, "pid", 1L << 40);
        rec->dump_ts_us = nt_insp_json_num(m, "dump_timestamp_us");
    }
    if (cJSON_IsObject(coll)) {
        rec->kind = NT_JOBREC_COLL;
        rc = nt_insp_op_parse(coll, "coll", rec);
    } else if (cJSON_IsObject(p2p)) {
        rec->kind = NT_JOBREC_P2P;
        rc = nt_insp_op_parse(p2p, "p2p", rec);
    }
out:
    cJSON_Delete(doc);
    return rc;
}

/* One label's value from a Prometheus label set `{a="x",b="y"}`; Inspector writes values without
 * escapes (inspector_prom.cc:246-259), so a value ends at the next '"'. */
static int nt_insp_prom_label_get(const char *labels, const char *key, char *dst, size_t cap)
{
    size_t kl = strlen(key);
    for (const char *p = labels; (p = strstr(p, key)) != NULL; p += kl) {
        if ((p == labels || p[-1] == ',' || p[-1] == '{') && p[kl] == '=' && p[kl + 1] == '"') {
            const char *v = p + kl + 2, *e = strchr(v, '"');
            if (!e)
                return -1;
            size_t n = (size_t)(e - v) < cap - 1 ? (size_t)(e - v) : cap - 1;
            memcpy(dst, v, n);
            dst[n] = '\0';
            return 0;
        }
    }
    return -1;
}

int nt_inspector_prom_parse(const char *line, nt_jobrec_t *rec)
{
    static const struct {
        const char *name;
        int exec, p2p;
    } metrics[] = {
        /* v2.30.7-1 inspector_prom.cc:457-458 and the P2P writer after it */
        {"nccl_bus_bandwidth_gbs", 0, 0},
        {"nccl_collective_exec_time_microseconds", 1, 0},
        {"nccl_p2p_bus_bandwidth_gbs", 0, 1},
        {"nccl_p2p_exec_time_microseconds", 1, 1},
    };
    nt_jobrec_clear(rec);
    while (*line == ' ' || *line == '\t')
        line++;
    if (strncmp(line, "nccl_", 5) != 0)
        return 0;
    const char *brace = strchr(line, '{');
    const char *close = brace ? strchr(brace, '}') : NULL;
    if (!brace || !close)
        return -1;
    size_t nl = (size_t)(brace - line);
    int which = -1;
    for (size_t i = 0; i < sizeof(metrics) / sizeof(metrics[0]); i++)
        if (strlen(metrics[i].name) == nl && strncmp(line, metrics[i].name, nl) == 0)
            which = (int)i;
    if (which < 0)
        return 0;
    char *end;
    errno = 0;
    double v = strtod(close + 1, &end);
    if (end == close + 1 || errno == ERANGE)
        return -1;
    size_t ll = (size_t)(close - brace) + 1;
    char labels[1024];
    if (ll >= sizeof(labels))
        return -1;
    memcpy(labels, brace, ll);
    labels[ll] = '\0';
    char num[24];
    rec->kind = NT_JOBREC_AGG;
    if (nt_insp_prom_label_get(labels, "node", rec->host, sizeof(rec->host)) < 0 ||
        nt_insp_prom_label_get(labels, "gpu", rec->gpu, sizeof(rec->gpu)) < 0)
        return -1;
    nt_insp_prom_label_get(labels, "comm_name", rec->comm_name, sizeof(rec->comm_name));
    nt_insp_prom_label_get(labels, metrics[which].p2p ? "p2p_operation" : "collective", rec->op,
               sizeof(rec->op));
    nt_insp_prom_label_get(labels, "message_size", rec->size_range, sizeof(rec->size_range));
    if (nt_insp_prom_label_get(labels, "nranks", num, sizeof(num)) == 0)
        rec->nranks = atoi(num);
    if (nt_insp_prom_label_get(labels, "n_nodes", num, sizeof(num)) == 0)
        rec->nnodes = atoi(num);
    if (metrics[which].exec)
        rec->exec_us = v;
    else
        rec->busbw_GBps = v;
    return 1;
}

int nt_ras_rank_parse(const char *text, size_t len, const char *comm, int size, int missing,
                      nt_jobrec_t *rec)
{
    nt_jobrec_clear(rec);
    cJSON *o = cJSON_ParseWithLength(text, len);
    long rank = o ? nt_insp_json_int(o, "rank", 1 << 30) : -1;
    if (rank < 0) {
        cJSON_Delete(o);
        return -1;
    }
    rec->kind = NT_JOBREC_RAS;
    nt_insp_str_copy(rec->comm_id, sizeof(rec->comm_id), comm);
    rec->nranks = size;
    rec->rank = (int)rank;
    nt_insp_str_copy(rec->host, sizeof(rec->host), nt_insp_json_str(o, "host"));
    rec->pid = nt_insp_json_int(o, "pid", 1L << 40);
    rec->ras_missing = missing;
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(o, "status");
    rec->ras_unresponsive = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(st, "unresponsive"));
    rec->ras_dead = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(st, "considered_dead"));
    rec->ras_abort = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(st, "abort_flag"));
    double ae = nt_insp_json_num(st, "async_error");
    rec->ras_async_error = isfinite(ae) && ae != 0;
    const cJSON *cc = cJSON_GetObjectItemCaseSensitive(o, "collective_counts"), *it;
    if (cJSON_IsObject(cc)) {
        rec->coll_count = 0;
        cJSON_ArrayForEach(it, cc) if (cJSON_IsNumber(it) && it->valuedouble >= 0)
            rec->coll_count += it->valuedouble;
    }
    cJSON_Delete(o);
    return 0;
}

/* Read block of a followed file (nt_jobreader_follow). */
#define NT_JOBREADER_FOLLOW_BLOCK 8192

struct nt_jobreader {
    nt_linereader_t *lr;
    nt_jobfmt_t fmt;
    char *text; /* the JSON record being assembled */
    size_t len, cap;
    int depth, in_str, esc, overflow;
    unsigned long start_line, first_bad, records, skipped, partial;
    int lines;               /* lines read: RAS is told by its second */
    int follow;              /* the end of the file is not the end of the input */
    int continues;           /* the last chunk read was a piece: the next one is mid-line */
    int ras_section;         /* 1 in a "ranks" list, 2 in "missing_ranks", 0 elsewhere */
    char ras_comm[NT_JOBREC_ID_MAX];
    int ras_size;
};

static nt_jobreader_t *nt_jobreader_wrap(nt_linereader_t *lr)
{
    nt_jobreader_t *r = lr ? calloc(1, sizeof(*r)) : NULL;
    if (!r) {
        int e = errno;
        nt_linereader_close(lr);
        errno = e;
        return NULL;
    }
    r->lr = lr;
    nt_linereader_set_split(r->lr, 1);
    return r;
}

nt_jobreader_t *nt_jobreader_open(const char *path)
{
    return nt_jobreader_wrap(nt_linereader_open(path));
}

nt_jobreader_t *nt_jobreader_open_stream(FILE *fp)
{
    return nt_jobreader_wrap(nt_linereader_open_stream(fp));
}

void nt_jobreader_close(nt_jobreader_t *r)
{
    if (!r)
        return;
    nt_linereader_close(r->lr);
    free(r->text);
    free(r);
}

void nt_jobreader_follow(nt_jobreader_t *r, int on)
{
    r->follow = on;
    /* A followed file is read a dump at a time, a few KiB each, and thousands of ranks' files
     * stay open: a small read block keeps each reader at tens of KiB instead of a quarter MiB
     * (64 KiB block, zlib's 64 KiB in and 128 KiB out). Only before the first read. */
    if (on)
        (void)nt_linereader_set_block(r->lr, NT_JOBREADER_FOLLOW_BLOCK);
}

int nt_jobreader_skip(nt_jobreader_t *r, int64_t bytes)
{
    return nt_linereader_skip(r->lr, bytes);
}

int nt_jobreader_fd(const nt_jobreader_t *r)
{
    return nt_linereader_fd(r->lr);
}

int64_t nt_jobreader_offset(const nt_jobreader_t *r)
{
    return nt_linereader_offset(r->lr);
}

unsigned long nt_jobreader_pending(const nt_jobreader_t *r)
{
    return r->depth > 0;
}

nt_jobfmt_t nt_jobreader_format(const nt_jobreader_t *r)
{
    return r->fmt;
}
unsigned long nt_jobreader_records(const nt_jobreader_t *r)
{
    return r->records;
}
unsigned long nt_jobreader_skipped(const nt_jobreader_t *r)
{
    return r->skipped;
}
unsigned long nt_jobreader_partial(const nt_jobreader_t *r)
{
    return r->partial;
}
unsigned long nt_jobreader_first_bad_line(const nt_jobreader_t *r)
{
    return r->first_bad;
}

static void nt_jobreader_bad(nt_jobreader_t *r, unsigned long line)
{
    r->skipped++;
    if (!r->first_bad)
        r->first_bad = line;
}

/* Appends `s` to the record being assembled, tracking the object depth outside strings. Returns
 * the offset just past the byte that closed the outermost object, or 0 if it is still open. */
static size_t nt_jobreader_json_feed(nt_jobreader_t *r, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (r->depth == 0 && c != '{')
            continue; /* whitespace or debris between records */
        if (!r->overflow) {
            if (r->len + 2 > r->cap) {
                size_t cap = r->cap ? r->cap * 2 : 4096;
                char *t = cap <= NT_JOBREC_TEXT_MAX ? realloc(r->text, cap) : NULL;
                if (!t)
                    r->overflow = 1;
                else {
                    r->text = t;
                    r->cap = cap;
                }
            }
            if (!r->overflow)
                r->text[r->len++] = c;
        }
        if (r->in_str) {
            if (r->esc)
                r->esc = 0;
            else if (c == '\\')
                r->esc = 1;
            else if (c == '"')
                r->in_str = 0;
        } else if (c == '"')
            r->in_str = 1;
        else if (c == '{' || c == '[')
            r->depth++;
        else if ((c == '}' || c == ']') && --r->depth == 0)
            return i + 1;
    }
    return 0;
}

static void nt_jobreader_json_reset(nt_jobreader_t *r)
{
    r->len = 0;
    r->depth = r->in_str = r->esc = r->overflow = 0;
}

/* One line of an ncclras -f json document in the writer's layout (client_support.cc:1919-2017:
 * one key a line, each rank object opened by a line "{"). Returns 1 with a record. */
static int nt_jobreader_ras_line(nt_jobreader_t *r, const char *line, size_t n, nt_jobrec_t *rec)
{
    if (r->depth == 0) {
        while (n && isspace((unsigned char)*line))
            line++, n--;
        char v[NT_JOBREC_ID_MAX];
        if (sscanf(line, "\"hash\": \"%39[^\"]\"", v) == 1) {
            nt_insp_str_copy(r->ras_comm, sizeof(r->ras_comm), v);
            r->ras_section = 0;
        } else if (sscanf(line, "\"size\": %d", &r->ras_size) == 1)
            ;
        else if (strncmp(line, "\"ranks\": [", 10) == 0)
            r->ras_section = 1;
        else if (strncmp(line, "\"missing_ranks\": [", 18) == 0)
            r->ras_section = 2;
        else if (strncmp(line, "\"communicators\": [", 18) == 0 || line[0] == ']')
            r->ras_section = 0;
        if (!r->ras_section || line[0] != '{')
            return 0;
        r->start_line = nt_linereader_lineno(r->lr);
    }
    if (!nt_jobreader_json_feed(r, line, n)) {
        if (!nt_linereader_piece(r->lr))
            nt_jobreader_json_feed(r, "\n", 1);
        return 0;
    }
    int ok = !r->overflow && nt_ras_rank_parse(r->text, r->len, r->ras_comm, r->ras_size,
                                               r->ras_section == 2, rec) == 0;
    nt_jobreader_json_reset(r);
    if (!ok) {
        nt_jobreader_bad(r, r->start_line);
        return 0;
    }
    r->records++;
    return 1;
}

int nt_jobreader_next(nt_jobreader_t *r, nt_jobrec_t *rec)
{
    const char *line;
    size_t n;
    int got;
    for (;;) {
        /* A JSON line may hold the end of one record and the start of the next: keep the rest. */
        got = nt_linereader_next(r->lr, &line, &n);
        if (got <= 0)
            break;
        if (r->fmt == NT_JOBFMT_UNKNOWN) {
            r->fmt = nt_jobfmt_sniff(line);
            if (r->fmt == NT_JOBFMT_UNKNOWN) {
                const char *p = line;
                while (*p && isspace((unsigned char)*p))
                    p++;
                if (*p)
                    return nt_jobreader_bad(r, nt_linereader_lineno(r->lr)), 0; /* not ours: stop at once */
                continue;
            }
        }
        r->lines++;
        if (r->fmt == NT_JOBFMT_INSPECTOR_JSON && r->lines == 2 && r->records == 0) {
            const char *p = line;
            while (*p && isspace((unsigned char)*p))
                p++;
            if (strncmp(p, "\"nccl_version\"", 14) == 0) {
                r->fmt = NT_JOBFMT_RAS_JSON; /* the document's own "{" is not a rank's */
                nt_jobreader_json_reset(r);
            }
        }
        if (r->fmt == NT_JOBFMT_RAS_JSON) {
            if (nt_jobreader_ras_line(r, line, n, rec))
                return 1;
            continue;
        }
        if (r->fmt == NT_JOBFMT_INSPECTOR_PROM) {
            int rc = nt_inspector_prom_parse(line, rec);
            if (rc < 0 && nt_linereader_piece(r->lr)) {
                rc = 0; /* cut at the end of the file, or a label set longer than a line */
                r->partial++;
            }
            if (rc < 0)
                nt_jobreader_bad(r, nt_linereader_lineno(r->lr));
            if (rc == 1) {
                r->records++;
                return 1;
            }
            continue;
        }
        size_t off = 0;
        /* A line between records that does not start one (debris, a message or a crash trace
         * written into the dump file): counted as skipped with its line, not passed over in
         * silence. Only a whole line's start is judged: the rest of a line read in pieces is
         * not. Blank lines are the writer's own (the README's pretty-printed records). */
        if (r->depth == 0 && !r->continues) {
            size_t k = 0;
            while (k < n && isspace((unsigned char)line[k]))
                k++;
            if (k < n && line[k] != '{') {
                nt_jobreader_bad(r, nt_linereader_lineno(r->lr));
                r->continues = nt_linereader_piece(r->lr);
                continue;
            }
        }
        /* A record open since an earlier line, and a line that starts a new one at column 0
         * (the writer starts every record there; inside a pretty-printed record lines are
         * indented): the open one was broken mid-file (a torn write). It is counted as skipped
         * and dropped here, so that it does not swallow every record after it. */
        if (r->depth > 0 && !r->continues && n && line[0] == '{') {
            nt_jobreader_bad(r, r->start_line);
            nt_jobreader_json_reset(r);
        }
        r->continues = nt_linereader_piece(r->lr);
        while (off < n) {
            if (r->depth == 0)
                r->start_line = nt_linereader_lineno(r->lr);
            size_t end = nt_jobreader_json_feed(r, line + off, n - off);
            if (!end)
                break;
            off += end;
            int ok = !r->overflow && nt_inspector_parse(r->text, r->len, rec) == 0;
            if (!ok)
                nt_jobreader_bad(r, r->start_line);
            nt_jobreader_json_reset(r);
            if (ok) {
                r->records++;
                /* Records sharing a line with the next one are rare (the writer ends each with a
                 * newline); the rest of this line is dropped with a count rather than held. */
                for (size_t i = off; i < n; i++)
                    if (line[i] == '{') {
                        nt_jobreader_bad(r, nt_linereader_lineno(r->lr));
                        break;
                    }
                return 1;
            }
        }
        if (r->depth > 0 && !nt_linereader_piece(r->lr))
            nt_jobreader_json_feed(r, "\n", 1); /* the newline between lines of a pretty-printed record */
    }
    if (r->follow && got == 0) {
        nt_linereader_rearm(r->lr); /* keep a record cut at the end: the rest comes later */
        return 0;
    }
    if (r->depth > 0)
        r->partial++; /* the file ends inside a record: the writer is still at it */
    nt_jobreader_json_reset(r);
    return got < 0 ? -1 : 0;
}
