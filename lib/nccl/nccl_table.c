/* Reader of NCCL's printed tuning table (include/nettune/nccl_table.h).
 * Layouts: v2.14.3-1 src/graph/tuning.cc:224-249 ("Latency/AlgBw |" header, one row per
 * function, every algorithm x protocol in one row; 2.6-2.13 print 9 cells, CollNet = algorithm
 * 2); v2.28.9-1 tuning.cc:499-539 (blocks of 3 algorithms: "Algorithm", "Protocol",
 * "Max NThreads" rows, then one row per function; 2 blocks before 2.23, 3 from 2.23). */
#include "nettune/nccl_table.h"
#include "nettune/nccllog.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const func_names[NT_NCCL_TABLE_COLLS] = {"Broadcast", "Reduce", "AllGather",
                                                            "ReduceScatter", "AllReduce"};
/* ncclAlgoStr over the versions: "CollNet" is algorithm 2 before 2.14 */
static int nt_algo_index(const char *s, size_t n)
{
    static const struct {
        const char *name;
        int algo;
    } names[] = {{"Tree", 0},    {"Ring", 1},     {"CollNetDirect", 2}, {"CollNetChain", 3},
                 {"CollNet", 2}, {"NVLSTree", 5}, {"NVLS", 4},          {"PAT", 6}};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strlen(names[i].name) == n && strncasecmp(s, names[i].name, n) == 0)
            return names[i].algo;
    return -1;
}

typedef struct parser {
    nt_nccl_table_t *t;
    int col_algo[NT_NCCL_TABLE_ALGOS *
                 NT_NCCL_TABLE_PROTOS]; /* row layout: column -> algo (proto = col % 3) */
    int ncols_hdr;
    int block_algo[3]; /* block layout: the current block's algorithms (-1 none) */
    int block;         /* index of the current block, -1 before the first */
    int rows_seen;     /* function rows in the current table */
    int done;
    char pending[4096]; /* a table row that may continue on the next (hard-wrapped) line */
    int has_pending;
} parser_t;

/* The text after NCCL's "NCCL INFO " prefix, or the line itself (trimmed) without one. */
static const char *nt_strip_prefix(const char *line, int *had_prefix)
{
    const char *p = strstr(line, "NCCL INFO ");
    *had_prefix = p != NULL;
    if (p)
        return p + strlen("NCCL INFO ");
    while (*line == ' ' || *line == '\t')
        line++;
    return line;
}

static int nt_starts_word(const char *s, const char *w)
{
    while (*s == ' ')
        s++;
    size_t n = strlen(w);
    if (strncmp(s, w, n) != 0)
        return 0;
    s += n;
    while (*s == ' ')
        s++;
    return *s == '|';
}

/* Which function a row is for: "%13s |" -> index, or -1. */
static int nt_row_func(const char *s)
{
    for (int c = 0; c < NT_NCCL_TABLE_COLLS; c++)
        if (nt_starts_word(s, func_names[c]))
            return c;
    return -1;
}

/* Complete cells of a row (each ended by '|'), after the row's first '|'. */
static int nt_split_cells(const char *s, char cells[][64], int max)
{
    const char *p = strchr(s, '|');
    if (!p)
        return 0;
    p++;
    int n = 0;
    for (;;) {
        const char *q = strchr(p, '|');
        if (!q || n >= max)
            break;
        size_t len = (size_t)(q - p);
        if (len >= 63)
            len = 63;
        memcpy(cells[n], p, len);
        cells[n][len] = '\0';
        n++;
        p = q + 1;
    }
    return n;
}

static void nt_default_columns(parser_t *ps, int ncols)
{
    /* header missing: 9 cells = Tree/Ring/CollNet, 12 = + CollNetChain, 15 = + NVLS */
    ps->ncols_hdr = ncols;
    for (int i = 0; i < ncols && i < NT_NCCL_TABLE_ALGOS * NT_NCCL_TABLE_PROTOS; i++)
        ps->col_algo[i] = i / 3;
    ps->t->layout = NT_NCCL_TABLE_ROWS;
    ps->t->ncols = ncols;
}

static void nt_cell_target(parser_t *ps, int i, int *a, int *p)
{
    *a = -1;
    *p = i % 3;
    if (ps->t->layout == NT_NCCL_TABLE_ROWS) {
        if (i < ps->ncols_hdr && i < NT_NCCL_TABLE_ALGOS * NT_NCCL_TABLE_PROTOS)
            *a = ps->col_algo[i];
    } else if (i / 3 < 3) {
        *a = ps->block_algo[i / 3];
    }
}

static void nt_parse_row(parser_t *ps, const char *s)
{
    char cells[NT_NCCL_TABLE_ALGOS * NT_NCCL_TABLE_PROTOS + 2][64];
    int n = nt_split_cells(s, cells, NT_NCCL_TABLE_ALGOS * NT_NCCL_TABLE_PROTOS + 2);
    if (nt_starts_word(s, "Max NThreads")) {
        if (ps->t->layout == NT_NCCL_TABLE_NONE)
            nt_default_columns(ps, n);
        for (int i = 0; i < n; i++) {
            int a, p;
            nt_cell_target(ps, i, &a, &p);
            char *end;
            long v = strtol(cells[i], &end, 10);
            if (a < 0 || end == cells[i])
                continue;
            ps->t->max_threads[a][p] = (int)v;
            ps->t->has_threads[a][p] = 1;
        }
        return;
    }
    int c = nt_row_func(s);
    if (c < 0)
        return;
    /* Every cell of the tuning table is "latency/bandwidth" (v2.24.3-1 src/graph/tuning.cc:471,
     * "%8.1f/%6.1f |"). A function row without a '/' is another table: the "Enabled NCCL
     * Func/Proto/Algo Matrix" of 0/1/2 flags (INFO(NCCL_ENV), v2.24.3-1
     * src/graph/tuning.cc:396, printed before the tuning table) has the same function names and '|'
     * separators. Taken for a table row it made a log without any tuning table read as a
     * 9-cell one, and in a log with both it counted as rows of the first table, so that the
     * tuning table's own "Algorithm" header read as the next communicator's and was dropped. */
    const char *bar = strchr(s, '|');
    if (!bar || !strchr(bar, '/'))
        return;
    if (ps->t->layout == NT_NCCL_TABLE_NONE) {
        /* a row with no header at all: count its cells (a full row has 9, 12 or 15) */
        int k = n >= 15 ? 15 : n >= 12 ? 12 : 9;
        nt_default_columns(ps, k);
    }
    if (ps->t->layout == NT_NCCL_TABLE_BLOCKS && ps->block < 0) {
        ps->block = 0;
        for (int b = 0; b < 3; b++)
            ps->block_algo[b] = b;
        ps->t->nblocks = 1;
    }
    ps->rows_seen++;
    for (int i = 0; i < n; i++) {
        int a, p;
        nt_cell_target(ps, i, &a, &p);
        float lat, bw;
        char extra;
        if (a < 0 || sscanf(cells[i], " %f / %f %c", &lat, &bw, &extra) != 2)
            continue;
        if (!ps->t->has[c][a][p])
            ps->t->ncells++;
        ps->t->has[c][a][p] = 1;
        ps->t->lat_us[c][a][p] = lat;
        ps->t->bw_GBps[c][a][p] = bw;
    }
}

static void nt_parse_row_header(parser_t *ps, const char *s)
{
    char cells[NT_NCCL_TABLE_ALGOS * NT_NCCL_TABLE_PROTOS + 2][64];
    int n = nt_split_cells(s, cells, NT_NCCL_TABLE_ALGOS * NT_NCCL_TABLE_PROTOS + 2);
    ps->t->layout = NT_NCCL_TABLE_ROWS;
    ps->t->ncols = n;
    ps->ncols_hdr = n;
    /* nt_split_cells gives up to 2 cells more than col_algo holds: those have no algorithm
     * (found by fuzz-nccl: a header of 23 cells wrote past col_algo). */
    for (int i = 0; i < n && i < NT_NCCL_TABLE_ALGOS * NT_NCCL_TABLE_PROTOS; i++) {
        char *q = cells[i];
        while (*q == ' ')
            q++;
        char *slash = strchr(q, '/');
        ps->col_algo[i] = slash ? nt_algo_index(q, (size_t)(slash - q)) : -1;
    }
}

static void nt_parse_algo_header(parser_t *ps, const char *s)
{
    char cells[4][64];
    int n = nt_split_cells(s, cells, 4);
    int algos[3] = {-1, -1, -1};
    for (int i = 0; i < n && i < 3; i++) {
        char *q = cells[i];
        while (*q == ' ')
            q++;
        size_t len = strlen(q);
        while (len && q[len - 1] == ' ')
            len--;
        algos[i] = nt_algo_index(q, len);
    }
    if (ps->rows_seen && algos[0] == 0) { /* block 0 again: the next communicator's table */
        ps->done = 1;
        return;
    }
    ps->t->layout = NT_NCCL_TABLE_BLOCKS;
    memcpy(ps->block_algo, algos, sizeof(algos));
    ps->block = algos[0] >= 0 ? algos[0] / 3 : ps->block + 1;
    if (ps->block + 1 > ps->t->nblocks)
        ps->t->nblocks = ps->block + 1;
}

static void nt_flush_pending(parser_t *ps)
{
    if (!ps->has_pending)
        return;
    nt_parse_row(ps, ps->pending);
    ps->has_pending = 0;
}

static void nt_parse_line(parser_t *ps, const char *line)
{
    int had_prefix;
    const char *s = nt_strip_prefix(line, &had_prefix);
    if (ps->has_pending && !had_prefix && *s && *s != '#' && strchr(s, '|')) {
        /* a hard-wrapped continuation of the pending row */
        size_t used = strlen(ps->pending);
        snprintf(ps->pending + used, sizeof(ps->pending) - used, " %s", s);
        return;
    }
    nt_flush_pending(ps);
    if (ps->done)
        return;
    if (strncmp(s, "NCCL version ", 13) == 0 && !ps->t->version) {
        int v = nt_nccllog_version_parse(s + 13); /* the one NCCL version parser */
        if (v > 0)
            ps->t->version = v;
        return;
    }
    if (nt_starts_word(s, "Latency/AlgBw")) {
        if (ps->rows_seen) {
            ps->done = 1;
            return;
        }
        nt_parse_row_header(ps, s);
        return;
    }
    if (nt_starts_word(s, "Algorithm")) {
        nt_parse_algo_header(ps, s);
        return;
    }
    if (nt_starts_word(s, "Protocol")) {
        if (ps->t->layout != NT_NCCL_TABLE_BLOCKS) { /* a block whose "Algorithm" row is missing */
            ps->t->layout = NT_NCCL_TABLE_BLOCKS;
            if (ps->block < 0) {
                ps->block = 0;
                for (int b = 0; b < 3; b++)
                    ps->block_algo[b] = b;
                ps->t->nblocks = 1;
            }
        }
        return;
    }
    if (nt_starts_word(s, "Max NThreads") || nt_row_func(s) >= 0) {
        snprintf(ps->pending, sizeof(ps->pending), "%s", s);
        ps->has_pending = 1;
    }
}

nt_status_t nt_nccl_table_parse(const char *text, size_t len, nt_nccl_table_t *t, char *err,
                                size_t errlen)
{
    if (!t || (!text && len))
        return NT_ERR_INVALID;
    memset(t, 0, sizeof(*t));
    parser_t ps;
    memset(&ps, 0, sizeof(ps));
    ps.t = t;
    ps.block = -1;
    size_t i = 0;
    char line[4096];
    while (i < len) {
        size_t j = i;
        while (j < len && text[j] != '\n')
            j++;
        size_t n = j - i;
        if (n >= sizeof(line))
            n = sizeof(line) - 1;
        memcpy(line, text + i, n);
        line[n] = '\0';
        if (n && line[n - 1] == '\r')
            line[n - 1] = '\0';
        nt_parse_line(&ps, line);
        i = j + 1;
    }
    nt_flush_pending(&ps);
    if (t->layout == NT_NCCL_TABLE_NONE) {
        if (err && errlen)
            snprintf(err, errlen,
                     "no NCCL tuning table (run with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING)");
        return NT_ERR_NOT_FOUND;
    }
    return NT_OK;
}

nt_status_t nt_nccl_table_read(const char *path, nt_nccl_table_t *t, char *err, size_t errlen)
{
    if (!path || !t)
        return NT_ERR_INVALID;
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (err && errlen)
            snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return errno == ENOENT ? NT_ERR_NOT_FOUND : NT_ERR_IO;
    }
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    if (!buf) {
        fclose(f);
        return NT_ERR_NOMEM;
    }
    size_t r;
    while ((r = fread(buf + len, 1, cap - len, f)) > 0) {
        len += r;
        if (len == cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                fclose(f);
                return NT_ERR_NOMEM;
            }
            buf = nb;
            cap *= 2;
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        if (err && errlen)
            snprintf(err, errlen, "%s: read failed", path);
        return NT_ERR_IO;
    }
    nt_status_t rc = nt_nccl_table_parse(buf, len, t, err, errlen);
    free(buf);
    return rc;
}
