/* GPU probe rules without CUDA (include/nettune/gpu.h; docs/gpu.md). */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nettune/gpu.h"
#include "nettune/pcie.h"

nt_status_t nt_gpu_probes_parse(const char *s, unsigned *mask, char *err, size_t errlen)
{
    static const struct {
        const char *name;
        unsigned bit;
    } names[] = {{"h2d", NT_GPU_PROBE_H2D},         {"d2h", NT_GPU_PROBE_D2H},
                 {"bidir", NT_GPU_PROBE_BIDIR},     {"p2p", NT_GPU_PROBE_P2P},
                 {"latency", NT_GPU_PROBE_LATENCY}, {"local", NT_GPU_PROBE_LOCAL},
                 {"all", NT_GPU_PROBE_ALL}};
    char buf[256], *save = NULL, *t;

    *mask = 0;
    if (!s || !*s) {
        snprintf(err, errlen, "--gpu-probes is empty: give h2d, d2h, bidir, p2p, latency, local");
        return NT_ERR_INVALID;
    }
    snprintf(buf, sizeof(buf), "%s", s);
    for (t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        size_t i;
        for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
            if (strcmp(t, names[i].name) == 0)
                break;
        if (i == sizeof(names) / sizeof(names[0])) {
            snprintf(err, errlen,
                     "unknown GPU probe '%s' in --gpu-probes (use h2d, d2h, bidir, p2p, latency, "
                     "local)",
                     t);
            *mask = 0;
            return NT_ERR_INVALID;
        }
        *mask |= names[i].bit;
    }
    if (!*mask) {
        snprintf(err, errlen, "--gpu-probes is empty: give h2d, d2h, bidir, p2p, latency, local");
        return NT_ERR_INVALID;
    }
    return NT_OK;
}

double nt_nvlink_link_GBps(int version)
{
    static const double rate[] = {NAN, 20.0, 25.0, 25.0, 25.0, 50.0};
    return version >= 1 && version <= 5 ? rate[version] : NAN;
}

/* Case-insensitive substring. */
static int nt_has(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++)
        if (strncasecmp(hay, needle, n) == 0)
            return 1;
    return 0;
}

int nt_gpu_model_nvlinks(const char *name)
{
    /* Order matters: the more specific names first. */
    static const struct {
        const char *sub;
        int links;
    } models[] = {{"PCIe", 0},
                  {"H100 NVL", -1},
                  {"GB200", 18},
                  {"B200", 18},
                  {"H200", 18},
                  {"H800", 8},
                  {"H100 80GB HBM3", 18},
                  {"H100 SXM", 18},
                  {"A800", 8},
                  {"A100-SXM", 12},
                  {"A100 SXM", 12},
                  {"A100", -1},
                  {"V100-SXM", 6},
                  {"L40", 0},
                  {"L4", 0},
                  {"T4", 0},
                  {"A10", 0},
                  {"A30", -1},
                  {"A40", -1}};
    if (!name || !*name)
        return -1;
    for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++)
        if (nt_has(name, models[i].sub))
            return models[i].links;
    return -1;
}

int nt_gpu_nearest_numa(const char *distance_line, int local, const int *nodes, int n)
{
    int dist[256], nd = 0, best = -1, bestd = 1 << 30;
    const char *q = distance_line ? distance_line : "";
    char *e;

    while (nd < 256) {
        long v = strtol(q, &e, 10);
        if (e == q)
            break;
        dist[nd++] = (int)v;
        q = e;
    }
    for (int i = 0; i < n; i++) {
        int id = nodes[i], d;
        if (id == local || id < 0)
            continue;
        d = id < nd ? dist[id] : (1 << 20) + id;
        if (d < bestd) {
            bestd = d;
            best = id;
        }
    }
    return best;
}

double nt_gpu_pcie_line_GBps(const nt_gpu_info_t *g)
{
    return nt_pcie_link_GBps(nt_pcie_gen_gts(g->pcie_max_gen), g->pcie_max_width);
}

int nt_gpu_nvlinks_between(const nt_gpu_info_t *a, const nt_gpu_info_t *b, int *version)
{
    int direct = 0, sw_a = 0, sw_b = 0, vmin = 0;

    for (int l = 0; l < a->nlinks; l++) {
        const nt_nvlink_info_t *k = &a->links[l];
        if (!k->active)
            continue;
        if (k->remote == NT_NVLINK_REMOTE_SWITCH) {
            sw_a++;
        } else if (nt_pci_bus_id_equal(k->remote_bus_id, b->bus_id)) {
            direct++;
            if (k->version > 0 && (vmin == 0 || k->version < vmin))
                vmin = k->version;
        }
    }
    if (!direct) {
        for (int l = 0; l < b->nlinks; l++)
            if (b->links[l].active && b->links[l].remote == NT_NVLINK_REMOTE_SWITCH)
                sw_b++;
        if (sw_a && sw_b) {
            for (int s = 0; s < 2; s++) {
                const nt_gpu_info_t *g = s ? b : a;
                for (int l = 0; l < g->nlinks; l++)
                    if (g->links[l].active && g->links[l].remote == NT_NVLINK_REMOTE_SWITCH &&
                        g->links[l].version > 0 && (vmin == 0 || g->links[l].version < vmin))
                        vmin = g->links[l].version;
            }
            direct = sw_a < sw_b ? sw_a : sw_b;
        }
    }
    if (version)
        *version = direct ? vmin : 0;
    return direct;
}

void nt_gpu_pair_path(const nt_gpu_info_t *a, const nt_gpu_info_t *b, const char *pcie_path,
                      char *path, size_t len, double *line_GBps)
{
    int ver = 0, n = nt_gpu_nvlinks_between(a, b, &ver);

    *line_GBps = NAN;
    if (n > 0) {
        snprintf(path, len, "NV%d", n);
        *line_GBps = n * nt_nvlink_link_GBps(ver);
        return;
    }
    snprintf(path, len, "%s", pcie_path && *pcie_path ? pcie_path : "unknown");
    if (strcmp(path, "PIX") == 0 || strcmp(path, "PXB") == 0) {
        double x = nt_gpu_pcie_line_GBps(a), y = nt_gpu_pcie_line_GBps(b);
        *line_GBps = isnan(x) ? y : isnan(y) ? x : (x < y ? x : y);
    }
}

static int nt_plan_push(nt_gpu_test_t **v, size_t *n, size_t *cap, nt_gpu_test_t t)
{
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 64;
        nt_gpu_test_t *x = realloc(*v, c * sizeof(*x));
        if (!x)
            return -1;
        *v = x;
        *cap = c;
    }
    (*v)[(*n)++] = t;
    return 0;
}

int nt_gpu_owners(const unsigned char *sees, int nranks, int ngpus, int *owner)
{
    int all = -1, n = 0;

    if (!sees || !owner || nranks <= 0 || ngpus < 0)
        return -1;
    for (int r = 0; r < nranks && all < 0; r++) {
        int covers = 1;
        for (int g = 0; g < ngpus && covers; g++) {
            int any = 0;
            for (int q = 0; q < nranks; q++)
                any |= sees[q * ngpus + g];
            covers = !any || sees[r * ngpus + g];
        }
        if (covers)
            all = r;
    }
    for (int g = 0; g < ngpus; g++) {
        owner[g] = -1;
        for (int r = 0; r < nranks && owner[g] < 0; r++)
            if (sees[r * ngpus + g] && (all < 0 || r == all))
                owner[g] = r;
    }
    for (int r = 0; r < nranks; r++) {
        int has = 0;
        for (int g = 0; g < ngpus; g++)
            has |= owner[g] == r;
        n += has;
    }
    return n;
}

void nt_gpu_test_ranks(const nt_gpu_test_t *t, const int *owner, int *issuer, int *partner)
{
    int a = owner[t->gpu], b = t->peer >= 0 ? owner[t->peer] : -1;

    *partner = -1;
    switch (t->kind) {
    case NT_GPU_T_P2P_READ: /* issued on the destination, reading the source's memory */
        *issuer = b;
        break;
    case NT_GPU_T_P2P_BIDIR:
    case NT_GPU_T_P2P_LAT:
        *issuer = a;
        *partner = b != a ? b : -1;
        break;
    default:
        *issuer = a;
        break;
    }
}

nt_status_t nt_gpu_plan(const nt_gpu_plan_params_t *pp, nt_gpu_test_t **out, size_t *n)
{
    nt_gpu_test_t *v = NULL;
    size_t cap = 0;
    double f = pp->full ? 2.0 : 1.0;
    unsigned pr = pp->probes;
    int ng = pp->ngpus;

    *out = NULL;
    *n = 0;
    if (ng < 0)
        return NT_ERR_INVALID;
#define PUSH(...)                                                                                  \
    do {                                                                                           \
        if (nt_plan_push(&v, n, &cap, (nt_gpu_test_t){__VA_ARGS__}))                               \
            goto nomem;                                                                            \
    } while (0)
    for (int g = 0; g < ng; g++) {
        for (int remote = 0; remote <= (pp->remote_numa ? 1 : 0); remote++) {
            if (pr & NT_GPU_PROBE_H2D)
                PUSH(NT_GPU_T_H2D, g, -1, remote, 0, NT_GPU_BUDGET_HOST * f);
            if (pr & NT_GPU_PROBE_D2H)
                PUSH(NT_GPU_T_D2H, g, -1, remote, 0, NT_GPU_BUDGET_HOST * f);
            if ((pr & NT_GPU_PROBE_BIDIR) && (!remote || pp->full))
                PUSH(NT_GPU_T_BIDIR, g, -1, remote, 0, NT_GPU_BUDGET_HOST * f);
        }
        if (pp->sm_ok) {
            if (pr & NT_GPU_PROBE_H2D)
                PUSH(NT_GPU_T_H2D, g, -1, 0, 1, NT_GPU_BUDGET_HOST * f);
            if (pr & NT_GPU_PROBE_D2H)
                PUSH(NT_GPU_T_D2H, g, -1, 0, 1, NT_GPU_BUDGET_HOST * f);
            if (pr & NT_GPU_PROBE_LATENCY)
                PUSH(NT_GPU_T_HOST_LAT, g, -1, 0, 1, NT_GPU_BUDGET_HOST_LAT * f);
        }
        if (pr & NT_GPU_PROBE_LOCAL)
            PUSH(NT_GPU_T_LOCAL, g, -1, 0, 0, NT_GPU_BUDGET_LOCAL * f);
    }
    if (pr & NT_GPU_PROBE_P2P) {
        for (int a = 0; a < ng; a++)
            for (int b = 0; b < ng; b++) {
                if (a == b || (pp->peer_ok && !pp->peer_ok[a * ng + b]))
                    continue;
                PUSH(NT_GPU_T_P2P_WRITE, a, b, 0, 0, NT_GPU_BUDGET_PAIR * f);
                PUSH(NT_GPU_T_P2P_READ, a, b, 0, 0, NT_GPU_BUDGET_PAIR * f);
                if (pp->sm_ok)
                    PUSH(NT_GPU_T_P2P_SM, a, b, 0, 1, NT_GPU_BUDGET_PAIR * f);
                if (a < b && (!pp->peer_ok || pp->peer_ok[b * ng + a]))
                    PUSH(NT_GPU_T_P2P_BIDIR, a, b, 0, 0, NT_GPU_BUDGET_PAIR * f);
                if (pp->sm_ok && (pr & NT_GPU_PROBE_LATENCY))
                    PUSH(NT_GPU_T_P2P_LAT, a, b, 0, 1, NT_GPU_BUDGET_PAIR_LAT * f);
            }
    }
#undef PUSH
    *out = v;
    return NT_OK;
nomem:
    free(v);
    *n = 0;
    return NT_ERR_NOMEM;
}

double nt_gpu_plan_budget(const nt_gpu_test_t *t, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += t[i].budget_s;
    return s;
}

int nt_gpu_copies_per_sample(double budget_s, int samples, double first_s, int max_copies)
{
    double c;
    if (samples < 1)
        samples = 1;
    if (!(first_s > 0))
        return 1;
    c = budget_s / (samples * first_s);
    if (!(c >= 1))
        return 1;
    return c > max_copies ? max_copies : (int)c;
}

void nt_gpu_link_id(char *buf, size_t len, const char *kind, const char *variant, const char *host,
                    const char *src, const char *dst)
{
    if (dst)
        snprintf(buf, len, "%s%s%s:%s/%s->%s/%s", kind, variant ? "." : "", variant ? variant : "",
                 host, src, host, dst);
    else
        snprintf(buf, len, "%s%s%s:%s/%s", kind, variant ? "." : "", variant ? variant : "", host,
                 src);
}

nt_verdict_t nt_gpu_nvlink_verdict(const nt_gpu_info_t *g, int expect_nvlinks, int has_peers,
                                   char *msg, size_t len)
{
    int want = expect_nvlinks >= 0 ? expect_nvlinks : nt_gpu_model_nvlinks(g->name);
    int up = 0, down = 0;
    char list[128] = "";

    for (int l = 0; l < g->nlinks; l++) {
        if (g->links[l].active) {
            up++;
        } else {
            size_t u = strlen(list);
            down++;
            if (u + 8 < sizeof(list))
                snprintf(list + u, sizeof(list) - u, "%s%d", u ? ", " : "", g->links[l].link);
        }
    }
    if (!has_peers) {
        snprintf(msg, len, "not judged: a single GPU has no NVLink peer (%d of %d links up)", up,
                 g->nlinks);
        return NT_SKIPPED;
    }
    if (want < 0) {
        snprintf(msg, len,
                 "not judged: the model '%s' states no NVLink count (give --expect nvlinks=N); "
                 "%d of %d up",
                 g->name, up, g->nlinks);
        return NT_SKIPPED;
    }
    if (want == 0 && g->nlinks == 0) {
        snprintf(msg, len, "no NVLink expected and none present");
        return NT_SKIPPED;
    }
    if (up < want) {
        if (down)
            snprintf(msg, len, "%d of %d NVLinks up, %d expected (down: %s)", up, g->nlinks, want,
                     list);
        else
            snprintf(msg, len, "%d NVLinks up, %d expected", up, want);
        return NT_FAIL;
    }
    snprintf(msg, len, "%d NVLinks up (%d expected)", up, want);
    return NT_PASS;
}

nt_verdict_t nt_gpu_pcie_verdict(int gen, int width, int max_gen, int max_width, int under_load,
                                 char *msg, size_t len)
{
    nt_verdict_t v = NT_PASS;
    char w[128], gtxt[160];

    if (max_width <= 0 || width <= 0) {
        snprintf(msg, len, "NVML gives no PCIe width: not judged");
        return NT_NOT_JUDGED; /* unknown, not unmeasured */
    }
    if (width < max_width) {
        snprintf(w, sizeof(w), "PCIe x%d, the link can run x%d", width, max_width);
        v = NT_FAIL;
    } else {
        snprintf(w, sizeof(w), "PCIe x%d", width);
    }
    if (!under_load || gen <= 0 || max_gen <= 0)
        snprintf(gtxt, sizeof(gtxt), "generation not judged (%s)",
                 under_load ? "unknown" : "read without load: an idle GPU trains down");
    else if (gen < max_gen) {
        snprintf(gtxt, sizeof(gtxt), "Gen%d under load, the link can run Gen%d", gen, max_gen);
        v = NT_FAIL;
    } else
        snprintf(gtxt, sizeof(gtxt), "Gen%d under load", gen);
    snprintf(msg, len, "%s; %s", w, gtxt);
    return v;
}

nt_verdict_t nt_gpu_counters_verdict(const nt_gpu_info_t *before, const nt_gpu_info_t *after,
                                     char *msg, size_t len)
{
    int n = before->nlinks < after->nlinks ? before->nlinks : after->nlinks, read = 0, grew = 0;
    size_t u = 0;

    msg[0] = '\0';
    for (int l = 0; l < n; l++) {
        const nt_nvlink_info_t *a = &before->links[l], *b = &after->links[l];
        if (!a->counters_ok || !b->counters_ok)
            continue;
        read++;
        for (int c = 0; c < NT_NVLINK_COUNTERS; c++)
            if (b->counters[c] > a->counters[c]) {
                grew++;
                if (u + 40 < len) {
                    snprintf(msg + u, len - u, "%slink %d %s +%llu", u ? ", " : "", a->link,
                             nt_nvlink_counter_names[c], b->counters[c] - a->counters[c]);
                    u = strlen(msg);
                }
            }
    }
    if (!read) {
        snprintf(msg, len, "not judged: no NVLink error counters");
        return NT_SKIPPED;
    }
    if (!grew) {
        snprintf(msg, len, "no NVLink error counter grew on %d links", read);
        return NT_PASS;
    }
    return NT_FAIL;
}

nt_verdict_t nt_gpu_peer_verdict(const char *path, int nvml_p2p_ok, int cuda_can_access, char *msg,
                                 size_t len)
{
    int nv = path && strncmp(path, "NV", 2) == 0;
    if (cuda_can_access) {
        snprintf(msg, len, "peer access");
        return NT_PASS;
    }
    if (nv || nvml_p2p_ok) {
        snprintf(msg, len, "no peer access although %s",
                 nv ? "NVLink connects the pair" : "NVML reports P2P supported");
        return NT_FAIL;
    }
    snprintf(msg, len,
             "no peer access: the path (%s) does not support P2P (copies go through "
             "host memory)",
             path && *path ? path : "unknown");
    return NT_SKIPPED;
}

int nt_gpu_blame(const int (*pairs)[2], const int *failed, size_t n, int ngpus, int *blamed,
                 int *partners, int *fails)
{
    unsigned char *seen, *bad;
    int nb = 0;

    if (ngpus <= 0 || (n && (!pairs || !failed)) || !blamed)
        return -1;
    seen = calloc((size_t)ngpus * ngpus, 1);
    bad = calloc((size_t)ngpus * ngpus, 1);
    if (!seen || !bad) {
        free(seen);
        free(bad);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        int a = pairs[i][0], b = pairs[i][1];
        if (a < 0 || b < 0 || a >= ngpus || b >= ngpus || a == b) {
            free(seen);
            free(bad);
            return -1;
        }
        seen[a * ngpus + b] = seen[b * ngpus + a] = 1;
        if (failed[i])
            bad[a * ngpus + b] = bad[b * ngpus + a] = 1;
    }
    for (int g = 0; g < ngpus; g++) {
        int p = 0, f = 0;
        for (int h = 0; h < ngpus; h++) {
            p += seen[g * ngpus + h];
            f += bad[g * ngpus + h];
        }
        blamed[g] = f >= 2 && 2 * f > p;
        nb += blamed[g];
        if (partners)
            partners[g] = p;
        if (fails)
            fails[g] = f;
    }
    free(seen);
    free(bad);
    return nb;
}
