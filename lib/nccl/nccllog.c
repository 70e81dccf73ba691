/* The one reader of an NCCL debug log's tuning facts: see include/nettune/nccllog.h. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nettune/nccllog.h"

void nt_nccllog_init(nt_nccllog_t *g)
{
    memset(g, 0, sizeof(*g));
    g->nranks = g->nnodes = g->local_ranks = -1;
}

void nt_nccllog_cleanup(nt_nccllog_t *g)
{
    for (size_t i = 0; i < g->nenv; i++) {
        free(g->env[i].name);
        free(g->env[i].value);
    }
    free(g->env);
    free(g->nic_Gbps);
    free(g->calls);
    nt_nccllog_init(g);
}

int nt_nccllog_version_parse(const char *s)
{
    if (!s)
        return -1;
    while (*s == ' ')
        s++;
    if (!isdigit((unsigned char)*s))
        return -1;
    char *end;
    long maj = strtol(s, &end, 10);
    if (*end != '.' || !isdigit((unsigned char)end[1]))
        return -1;
    long min = strtol(end + 1, &end, 10), patch = 0;
    if (*end == '.') {
        if (!isdigit((unsigned char)end[1]))
            return -1;
        patch = strtol(end + 1, &end, 10);
    }
    /* what may follow: "-1" (the package release), "+cuda12.9" (NCCL_VERSION_STRING), a word */
    if (*end && *end != '-' && *end != '+' && !isspace((unsigned char)*end))
        return -1;
    if (maj < 2 || maj > 99 || min > 99 || patch > 99)
        return -1;
    /* NCCL_VERSION(X,Y,Z): X*10000 + Y*100 + Z from 2.9 on (NVIDIA/nccl src/nccl.h.in) */
    return (int)(maj * 10000 + min * 100 + patch);
}

const char *nt_nccllog_env_get(const nt_nccllog_t *g, const char *name)
{
    for (size_t i = 0; i < g->nenv; i++)
        if (strcmp(g->env[i].name, name) == 0)
            return g->env[i].value;
    return NULL;
}

static void nt_env_add(nt_nccllog_t *g, const char *name, size_t nl, const char *val, size_t vl,
                    unsigned long line)
{
    for (size_t i = 0; i < g->nenv; i++)
        if (strlen(g->env[i].name) == nl && memcmp(g->env[i].name, name, nl) == 0)
            return; /* NCCL echoes once per process: the first is kept */
    if (g->nenv >= NT_NCCLLOG_MAX_ENV)
        return;
    nt_nccllog_env_t *n = realloc(g->env, (g->nenv + 1) * sizeof(*n));
    if (!n)
        return;
    g->env = n;
    char *a = strndup(name, nl), *b = strndup(val, vl);
    if (!a || !b) {
        free(a);
        free(b);
        return;
    }
    g->env[g->nenv].name = a;
    g->env[g->nenv].value = b;
    g->env[g->nenv].line = line;
    g->nenv++;
}

/* "NCCL_X set by environment to V[.]" */
static int nt_feed_env(nt_nccllog_t *g, const char *m, unsigned long line)
{
    const char *p = strstr(m, " set by environment to ");
    if (!p || strncmp(m, "NCCL_", 5) != 0)
        return 0;
    for (const char *q = m; q < p; q++)
        if (!(isupper((unsigned char)*q) || isdigit((unsigned char)*q) || *q == '_'))
            return 0;
    const char *v = p + strlen(" set by environment to ");
    size_t vl = strlen(v);
    while (vl && (v[vl - 1] == ' ' || v[vl - 1] == '\r'))
        vl--;
    if (vl && v[vl - 1] == '.') /* src/misc/param.cc ends the sentence with a period */
        vl--;
    nt_env_add(g, m, (size_t)(p - m), v, vl, line);
    return 1;
}

/* "KEY N" at *p, blanks before either allowed: 1, *v and *p past N when N is a decimal in
 * 0..INT_MAX; else 0. (sscanf's %d of a longer number is undefined behaviour: glibc truncated
 * "nRanks 4294967298" to 2.) */
static int nt_key_int(const char **p, const char *key, int *v)
{
    const char *s = *p;
    while (*s == ' ')
        s++;
    size_t n = strlen(key);
    if (strncmp(s, key, n) != 0)
        return 0;
    s += n;
    while (*s == ' ')
        s++;
    if (!isdigit((unsigned char)*s))
        return 0;
    char *end;
    errno = 0;
    long x = strtol(s, &end, 10);
    if (errno || x > INT_MAX)
        return 0;
    *v = (int)x;
    *p = end;
    return 1;
}

static void nt_copy_word(char *dst, size_t cap, const char *s)
{
    size_t n = 0;
    while (s[n] && !isspace((unsigned char)s[n]) && s[n] != ',' && n + 1 < cap)
        n++;
    memcpy(dst, s, n);
    dst[n] = '\0';
}

static int nt_feed_graph(nt_nccllog_t *g, const nt_logline_t *l, unsigned long line)
{
    const char *m = l->msg;
    if (strncmp(m, "Pattern ", 8) != 0)
        return 0;
    nt_nccllog_graph_t gr;
    memset(&gr, 0, sizeof(gr));
    const char *bw = strstr(m, ", bw ");
    if (!bw)
        bw = strstr(m, ", speed ");
    const char *ty = strstr(m, ", type ");
    const char *q = m;
    if (!nt_key_int(&q, "Pattern", &gr.pattern) || !nt_key_int(&q, ", crossNic", &gr.cross_nic) ||
        !nt_key_int(&q, ", nChannels", &gr.nchannels) || !bw || !ty)
        return 0;
    bw = strchr(bw + 2, ' ');
    if (!bw || sscanf(bw, " %lf/%lf", &gr.bw_intra_GBps, &gr.bw_inter_GBps) != 2)
        return 0;
    ty += 7;
    const char *slash = strchr(ty, '/');
    if (!slash)
        return 0;
    size_t n = (size_t)(slash - ty) < sizeof(gr.type_intra) ? (size_t)(slash - ty)
                                                            : sizeof(gr.type_intra) - 1;
    memcpy(gr.type_intra, ty, n);
    gr.type_intra[n] = '\0';
    nt_copy_word(gr.type_inter, sizeof(gr.type_inter), slash + 1);
    const char *sc = strstr(m, "sameChannels ");
    if (!sc || !nt_key_int(&sc, "sameChannels", &gr.same_channels))
        gr.same_channels = 0;
    gr.present = 1;
    gr.line = line;

    char proc[128];
    snprintf(proc, sizeof(proc), "%.*s:%ld", (int)(l->host_len < 100 ? l->host_len : 100),
             l->host ? l->host : "", l->pid);
    if (!g->graph_proc[0])
        snprintf(g->graph_proc, sizeof(g->graph_proc), "%s", proc);
    else if (strcmp(g->graph_proc, proc) != 0)
        return 1; /* another process: its graphs repeat the first one's */
    int slot;
    switch (gr.pattern) {
    case 4:
        slot = NT_NCCLLOG_RING;
        break;
    case 5:
        slot = NT_NCCLLOG_NVLS;
        break;
    case 6:
        slot = NT_NCCLLOG_COLLNET_DIRECT;
        break;
    case 1:
    case 2:
        slot = NT_NCCLLOG_TREE;
        break;
    default: /* 3 (TREE): the tree graph fell back to it, or the CollNet chain graph */
        slot = g->graph[NT_NCCLLOG_TREE].present ? NT_NCCLLOG_COLLNET_CHAIN : NT_NCCLLOG_TREE;
    }
    if (!g->graph[slot].present)
        g->graph[slot] = gr;
    return 1;
}

/* "NET/IB: [0] mlx5_0:uverbs0:1/IB provider=Mlx5 speed=400000 context=..." */
static int nt_feed_nic(nt_nccllog_t *g, const nt_logline_t *l)
{
    const char *m = l->msg;
    if (strncmp(m, "NET/IB: [", 9) != 0)
        return 0;
    const char *sp = strstr(m, " speed=");
    if (!sp)
        return 0;
    char proc[128];
    snprintf(proc, sizeof(proc), "%.*s:%ld", (int)(l->host_len < 100 ? l->host_len : 100),
             l->host ? l->host : "", l->pid);
    /* NICs of the first process only: every process lists the same devices */
    if (g->nnics && g->graph_proc[0] && strcmp(g->graph_proc, proc) != 0)
        return 1;
    double mbps = atof(sp + 7);
    if (mbps <= 0)
        return 1;
    double *n = realloc(g->nic_Gbps, (g->nnics + 1) * sizeof(*n));
    if (!n)
        return 1;
    g->nic_Gbps = n;
    g->nic_Gbps[g->nnics++] = mbps / 1000.0;
    return 1;
}

static int nt_feed_call(nt_nccllog_t *g, const char *m, unsigned long line)
{
    const char *b = strstr(m, " Bytes -> Algo ");
    if (!b)
        return 0;
    nt_nccllog_call_t c;
    memset(&c, 0, sizeof(c));
    const char *colon = strchr(m, ':');
    const char *num = m;
    if (colon && colon < b) {
        size_t n = (size_t)(colon - m) < sizeof(c.coll) ? (size_t)(colon - m) : sizeof(c.coll) - 1;
        memcpy(c.coll, m, n);
        c.coll[n] = '\0';
        num = colon + 1;
    }
    while (*num == ' ')
        num++;
    if (!isdigit((unsigned char)*num))
        return 0;
    c.bytes = strtoull(num, NULL, 10);
    const char *a = b + strlen(" Bytes -> Algo ");
    nt_copy_word(c.algo, sizeof(c.algo), a);
    const char *p = strstr(a, " proto ");
    if (!p)
        return 0;
    nt_copy_word(c.proto, sizeof(c.proto), p + 7);
    c.line = line;
    if (g->ncalls >= NT_NCCLLOG_MAX_CALLS)
        return 1;
    if ((g->ncalls & (g->ncalls - 1)) == 0) {
        size_t nc = g->ncalls ? g->ncalls * 2 : 16;
        nt_nccllog_call_t *n = realloc(g->calls, nc * sizeof(*n));
        if (!n)
            return 1;
        g->calls = n;
    }
    g->calls[g->ncalls++] = c;
    return 1;
}

/* Which tuner plugin NCCL loaded, and what nettune's plugin said of its file (nccllog.h). */
static int nt_feed_tuner(nt_nccllog_t *g, const char *m)
{
    static const char loaded[] = "Successfully loaded external tuner plugin ";
    static const char file[] = "TUNER/nettune: tuning file '";
    const char *p;
    if ((p = strstr(m, loaded))) {
        if (!g->tuner_loaded[0])
            nt_copy_word(g->tuner_loaded, sizeof(g->tuner_loaded), p + strlen(loaded));
        return 1;
    }
    if (strstr(m, "External tuner plugin ") && strstr(m, " is unsupported")) {
        g->tuner_unsupported = 1;
        return 1;
    }
    if ((p = strstr(m, file))) {
        const char *q = strchr(p + strlen(file), '\'');
        size_t n = q ? (size_t)(q - p - strlen(file)) : 0;
        if (n && !g->nettune_file) {
            g->nettune_file = 1;
            snprintf(g->tuner_file, sizeof(g->tuner_file), "%.*s", (int)n, p + strlen(file));
        }
        return 1;
    }
    if (strstr(m, "TUNER/nettune: no tuning file")) {
        if (!g->nettune_file)
            g->nettune_file = -1;
        return 1;
    }
    return 0;
}

int nt_nccllog_feed(nt_nccllog_t *g, const nt_logline_t *l, unsigned long lineno)
{
    const char *v = strstr(l->body, "NCCL version ");
    if (v && !g->version) {
        int code = nt_nccllog_version_parse(v + 13);
        if (code > 0) {
            g->version = code;
            const char *cu = strstr(v, "+cuda");
            char *e = NULL;
            long cmaj = cu ? strtol(cu + 5, &e, 10) : -1, cmin = -1;
            if (cu && e != cu + 5 && *e == '.' && isdigit((unsigned char)e[1]))
                cmin = strtol(e + 1, NULL, 10);
            /* CUDA_VERSION numbering, X*1000 + Y*10; a part out of range is not a version */
            if (cmaj > 0 && cmaj < 1000 && cmin >= 0 && cmin < 100)
                g->cuda_runtime = (int)(cmaj * 1000 + cmin * 10);
            return 1;
        }
    }
    if (l->level == NT_LVL_NONE)
        return 0;
    g->nccl_lines++;
    const char *m = l->msg;
    if (strncmp(m, "comm ", 5) == 0 && strstr(m, " nRanks ")) {
        int r, nr, nn, lr;
        const char *q = strstr(m, " rank ");
        if (g->nranks < 0 && q && nt_key_int(&q, "rank", &r) && nt_key_int(&q, "nRanks", &nr) &&
            nt_key_int(&q, "nNodes", &nn) && nt_key_int(&q, "localRanks", &lr)) {
            g->nranks = nr;
            g->nnodes = nn;
            g->local_ranks = lr;
            g->comm_line = lineno;
        }
        return 1;
    }
    return nt_feed_env(g, m, lineno) || nt_feed_graph(g, l, lineno) || nt_feed_nic(g, l) ||
           nt_feed_call(g, m, lineno) || nt_feed_tuner(g, m);
}
