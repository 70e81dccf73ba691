/* The fabric judge over a report's "fabric" section (include/nettune/fabric.h,
 * nt_fabric_judge_doc): the section read into the engine's structs (fabric.c), the groups,
 * cuts, checks and not_judged written back, and the groups held against the switches. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge_int.h"
#include "nettune/fabric.h"

/* The check table rows of the fabric judge (include/nettune/checks.def). */
#define NT_FAB_CODE_CUT "NT-FAB-201"
#define NT_FAB_CODE_RAIL_SLOW "NT-FAB-202"
#define NT_FAB_CODE_RAIL_SHARED "NT-FAB-203"
#define NT_FAB_CODE_TOPOLOGY "NT-FAB-204"
/* Unconfirmed cuts named under not_judged; the rest are counted in one line. */
#define NT_FAB_UNCONFIRMED_SHOWN 8

static int nt_fab_phase_of(const char *s)
{
    for (int i = 0; s && i < NT_FAB_NPHASES; i++)
        if (strcmp(s, nt_fab_phase_name((nt_fab_phase_t)i)) == 0)
            return i;
    return -1;
}

typedef struct {
    nt_fab_mflow_t *flows;
    size_t nflows, capf;
    nt_fab_mround_t *rounds;
    size_t nrounds, capr;
    const char **hosts;
    int nnodes, nrails;
    int bad_flows, unknown_phases;
} nt_fab_read_t;

static void nt_fab_read_free(nt_fab_read_t *r)
{
    free(r->flows);
    free(r->rounds);
    free(r->hosts);
}

/* The section's flows and rounds; a flow with an index out of range or without its fields is
 * counted in bad_flows and left out, a phase of another name in unknown_phases. */
static nt_status_t nt_fab_read(const cJSON *fab, nt_fab_read_t *r)
{
    const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(fab, "nodes"), *ph, *it;
    int i = 0;

    memset(r, 0, sizeof(*r));
    r->nnodes = cJSON_IsArray(nodes) ? cJSON_GetArraySize(nodes) : 0;
    r->nrails = nt_json_get_int(fab, "rails", 1);
    if (r->nrails < 1 || r->nrails > 64)
        r->nrails = 1;
    if (r->nnodes > 0 && !(r->hosts = calloc((size_t)r->nnodes, sizeof(*r->hosts))))
        return NT_ERR_NOMEM;
    cJSON_ArrayForEach (it, nodes)
        r->hosts[i++] = cJSON_IsString(it) ? it->valuestring : "?";
    cJSON_ArrayForEach (ph, cJSON_GetObjectItemCaseSensitive(fab, "phases")) {
        int phase = nt_fab_phase_of(nt_json_get_str(ph, "phase", NULL));
        const cJSON *rd;
        if (phase < 0) {
            r->unknown_phases++;
            continue;
        }
        cJSON_ArrayForEach (rd, cJSON_GetObjectItemCaseSensitive(ph, "rounds")) {
            const cJSON *f;
            size_t first = r->nflows;
            cJSON_ArrayForEach (f, cJSON_GetObjectItemCaseSensitive(rd, "flows")) {
                int src = nt_json_get_int(f, "src", -1), dst = nt_json_get_int(f, "dst", -1);
                int rail = nt_json_get_int(f, "rail", 0);
                const cJSON *ok = cJSON_GetObjectItemCaseSensitive(f, "ok");
                double bw = nt_json_get_num(f, "bw_GBps", NAN);
                if (src < 0 || src >= r->nnodes || dst < 0 || dst >= r->nnodes || rail < 0 ||
                    rail >= r->nrails) {
                    r->bad_flows++;
                    continue;
                }
                if (cJSON_IsFalse(ok) || !(bw > 0))
                    bw = NAN;
                if (r->nflows == r->capf) {
                    size_t n = r->capf ? 2 * r->capf : 64;
                    nt_fab_mflow_t *g = realloc(r->flows, n * sizeof(*g));
                    if (!g)
                        return NT_ERR_NOMEM;
                    r->flows = g;
                    r->capf = n;
                }
                r->flows[r->nflows++] = (nt_fab_mflow_t){src, dst, rail, bw};
            }
            if (r->nrounds == r->capr) {
                size_t n = r->capr ? 2 * r->capr : 16;
                nt_fab_mround_t *g = realloc(r->rounds, n * sizeof(*g));
                if (!g)
                    return NT_ERR_NOMEM;
                r->rounds = g;
                r->capr = n;
            }
            r->rounds[r->nrounds++] =
                (nt_fab_mround_t){(nt_fab_phase_t)phase, first, r->nflows - first};
        }
    }
    return NT_OK;
}

static cJSON *nt_fab_not_judged(cJSON *arr, const char *what, const char *reason)
{
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddItemToArray(arr, o)) {
        cJSON_Delete(o);
        return NULL;
    }
    nt_json_add_str(o, "what", what);
    nt_json_add_str(o, "reason", reason);
    return o;
}

static cJSON *nt_fab_check(cJSON *arr, const char *check, const char *code, const char *status,
                           const char *message)
{
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddItemToArray(arr, o)) {
        cJSON_Delete(o);
        return NULL;
    }
    nt_json_add_str(o, "check", check);
    nt_json_add_str(o, "status", status);
    nt_json_add_str(o, "message", message);
    nt_judge_code_add(o, code);
    return o;
}

/* The members of group g, in node order; returns their count. */
static int nt_fab_members(const nt_fab_result_t *res, int nnodes, int g, int *m)
{
    int n = 0;
    for (int i = 0; i < nnodes; i++)
        if (res->group[i] == g)
            m[n++] = i;
    return n;
}

/* "between {h1..h4} and {h5..h8}: 4 flows at once get 0.9 GB/s each, 2.8 alone: a shared
 * bottleneck of about 3.6 GB/s" */
static void nt_fab_cut_detail(const nt_fab_read_t *rd, const nt_fab_result_t *res,
                              const nt_fab_cut_t *c, int *m, char *buf, size_t len)
{
    char a[200], b[200];
    int na = nt_fab_members(res, rd->nnodes, c->ga, m);
    nt_fab_group_name(rd->hosts, m, na, a, sizeof(a));
    int nb = nt_fab_members(res, rd->nnodes, c->gb, m);
    nt_fab_group_name(rd->hosts, m, nb, b, sizeof(b));
    if (c->confirmed && c->parallel)
        snprintf(buf, len,
                 "between %s and %s: %d of %d cross pairs slow (%.2f of alone, slowed in %d "
                 "rounds or more each), %d at full speed every time: one of the parallel links "
                 "between them is slow (the pairs hashed onto it)",
                 a, b, c->pairs_slow, c->pairs, c->slow_pairs_ratio,
                 nt_fab_rules_default().min_rounds, c->pairs_fast);
    else if (c->confirmed)
        snprintf(buf, len,
                 "between %s and %s: %d flow%s at once get %.2g GB/s each, %.2g alone: a shared "
                 "bottleneck of about %.2g GB/s (slowed in %d rounds, %d cross flows)",
                 a, b, c->flows, c->flows == 1 ? "" : "s", c->loaded_bw, c->alone_bw,
                 c->bottleneck, c->rounds, c->nflows);
    else
        snprintf(buf, len,
                 "between %s and %s: cross flows slowed in %d round%s of %d flows: not "
                 "confirmed (%d flows in %d rounds needed)",
                 a, b, c->rounds, c->rounds == 1 ? "" : "s", c->nflows,
                 nt_fab_rules_default().min_flows, nt_fab_rules_default().min_rounds);
}

static void nt_fab_write_groups(cJSON *fab, const nt_fab_read_t *rd, const nt_fab_result_t *res,
                                int *m)
{
    cJSON *groups = nt_json_add_arr(fab, "groups");
    for (int g = 0; groups && g < res->ngroups; g++) {
        cJSON *a = cJSON_CreateArray();
        int n = nt_fab_members(res, rd->nnodes, g, m);
        if (!a || !cJSON_AddItemToArray(groups, a)) {
            cJSON_Delete(a);
            return;
        }
        for (int i = 0; i < n; i++)
            cJSON_AddItemToArray(a, cJSON_CreateString(rd->hosts[m[i]]));
    }
}

static void nt_fab_write_cuts(cJSON *fab, cJSON *checks, cJSON *nj, const nt_fab_read_t *rd,
                              const nt_fab_result_t *res, int *m)
{
    cJSON *cuts = nt_json_add_arr(fab, "cuts");
    int found = 0;
    char d[600];

    int unconfirmed = 0;
    for (int i = 0; cuts && i < res->ncuts; i++) {
        const nt_fab_cut_t *c = &res->cuts[i];
        cJSON *o, *g;
        if (!c->confirmed) {
            /* a few named, the rest counted: thousands of small groups at scale would bury
             * the findings */
            if (unconfirmed++ < NT_FAB_UNCONFIRMED_SHOWN) {
                nt_fab_cut_detail(rd, res, c, m, d, sizeof(d));
                nt_fab_not_judged(nj, "cut", d);
            }
            continue;
        }
        nt_fab_cut_detail(rd, res, c, m, d, sizeof(d));
        if (!(o = cJSON_CreateObject()) || !cJSON_AddItemToArray(cuts, o)) {
            cJSON_Delete(o);
            return;
        }
        g = nt_json_add_arr(o, "groups");
        cJSON_AddItemToArray(g, cJSON_CreateNumber(c->ga));
        cJSON_AddItemToArray(g, cJSON_CreateNumber(c->gb));
        nt_json_add_num(o, "flows", c->flows);
        nt_json_add_num(o, "cross_flows", c->nflows);
        nt_json_add_num(o, "rounds", c->rounds);
        nt_json_add_num(o, "loaded_bw_GBps", c->loaded_bw);
        nt_json_add_num(o, "alone_bw_GBps", c->alone_bw);
        nt_json_add_num(o, "bottleneck_GBps", c->bottleneck);
        nt_json_add_num(o, "cross_pairs", c->pairs);
        nt_json_add_num(o, "slow_pairs", c->pairs_slow);
        nt_json_add_num(o, "fast_pairs", c->pairs_fast);
        nt_json_add_bool(o, "parallel", c->parallel);
        nt_json_add_str(o, "status", "warn");
        nt_json_add_str(o, "detail", d);
        nt_judge_code_add(o, NT_FAB_CODE_CUT);
        nt_fab_check(checks, "fabric_cut", NT_FAB_CODE_CUT, "warn", d);
        found++;
    }
    if (unconfirmed > NT_FAB_UNCONFIRMED_SHOWN) {
        snprintf(d, sizeof(d), "%d more pairs of groups whose cross flows were not confirmed slow",
                 unconfirmed - NT_FAB_UNCONFIRMED_SHOWN);
        nt_fab_not_judged(nj, "cut", d);
    }
    /* Every node a group of its own: every flow under load shares one bottleneck (one
     * switch, or the one machine's CPU where the nodes share a machine), so there is no cut
     * between groups to draw, and "no shared bottleneck" would be untrue. One line, not one a
     * node. */
    int singletons = 0;
    for (int g = 0; g < res->ngroups; g++)
        singletons += nt_fab_members(res, rd->nnodes, g, m) == 1;
    if (!found && res->ngroups > 1 && singletons == res->ngroups && !res->why[0]) {
        snprintf(d, sizeof(d),
                 "every node is a group of its own: %d of %d flows under load slowed below "
                 "%.2f of their pair alone, as when every flow shares one bottleneck (one "
                 "switch, or one machine's CPU where the nodes share a machine); no cut "
                 "between groups can be drawn",
                 res->nslowed, res->nloaded, res->slow_limit);
        nt_fab_not_judged(nj, "cut", d);
        return;
    }
    if (!found && res->ngroups >= 1 && !res->why[0]) {
        snprintf(d, sizeof(d),
                 "no shared bottleneck: %d flows under load, %d slowed below %.2f of their "
                 "pair alone; %d group%s",
                 res->nloaded, res->nslowed, res->slow_limit, res->ngroups,
                 res->ngroups == 1 ? "" : "s");
        nt_fab_check(checks, "fabric_cut", NT_FAB_CODE_CUT, "pass", d);
    }
    /* a node alone in its group is slow with everyone under load: the node's matter */
    for (int g = 0; g < res->ngroups && res->ngroups > 1; g++) {
        if (nt_fab_members(res, rd->nnodes, g, m) == 1) {
            snprintf(d, sizeof(d),
                     "%s: a group of its own (none of its flows under load was at full speed "
                     "to a node of another group); one node is no cut: a slow node is the "
                     "probe's node verdict, too few flows a matter of more rounds",
                     rd->hosts[m[0]]);
            nt_fab_not_judged(nj, "group", d);
        }
    }
}

/* A rail check's fields beside its message: the rail, the node named (NULL: none) and the
 * figure it was judged on (GB/s per flow: the node's flows on the rail, the rail's own flows,
 * or its flows while all rails run), which nettune report --diff compares. */
static void nt_fab_rail_fields(cJSON *o, int rail, const char *node, double bw)
{
    if (!o)
        return;
    nt_json_add_num(o, "rail", rail);
    if (node)
        nt_json_add_str(o, "node", node);
    if (isfinite(bw))
        nt_json_add_num(o, "bw_GBps", bw);
}

static void nt_fab_write_rails(cJSON *checks, cJSON *nj, const nt_fab_read_t *rd,
                               const nt_fab_result_t *res, int have_rail_phases)
{
    char d[400];
    if (rd->nrails < 2)
        return;
    /* a node's slow rail, from its flows one at a time (alone rounds and rail_one) */
    for (int r = 0; r < res->nrails; r++) {
        const nt_fab_rail_t *rl = &res->rails[r];
        cJSON *o;
        if (rl->node < 0)
            continue;
        snprintf(d, sizeof(d),
                 "rail %d of %s: its flows on rail %d get %.2g GB/s (median of %d, one flow at "
                 "a time on its link), the other nodes' rail-%d flows %.2g, its other rails at "
                 "full speed: that node's rail-%d NIC, cable or switch port",
                 r, rd->hosts[rl->node], r, rl->node_bw, rl->node_flows, r, rl->others_bw, r);
        if ((o = nt_fab_check(checks, "fabric_rail", NT_FAB_CODE_RAIL_SLOW, "warn", d)))
            nt_fab_rail_fields(o, r, rd->hosts[rl->node], rl->node_bw);
    }
    if (!have_rail_phases) {
        nt_fab_not_judged(nj, "rails", "no rail_all or rail_one phase in this run");
        return;
    }
    for (int r = 0; r < res->nrails; r++) {
        const nt_fab_rail_t *rl = &res->rails[r];
        if (rl->node >= 0 && (rl->slow_node == rl->node || rl->slow_node < 0) &&
            !(rl->one_bw < nt_fab_rules_default().slow_ratio * rl->best_bw))
            continue; /* named above: the rail itself is not slow */
        if (!isfinite(rl->one_bw)) {
            snprintf(d, sizeof(d), "rail %d: no flow of its own (rail_one)", r);
            nt_fab_not_judged(nj, "rail", d);
            continue;
        }
        if (rl->slow && rl->slow_node >= 0)
            snprintf(d, sizeof(d),
                     "rail %d: every slow flow of it touches %s (%.2g GB/s per flow on its own "
                     "rail at best, median %.2g): that node's rail-%d NIC, cable or switch port",
                     r, rd->hosts[rl->slow_node], rl->best_bw, rl->one_bw, r);
        else if (rl->slow)
            snprintf(d, sizeof(d),
                     "rail %d: %.2g GB/s per flow on its own (median of %d), the best rail "
                     "%.2g: the rail is slow",
                     r, rl->one_bw, rl->nflows, rl->best_bw);
        if (rl->slow) {
            nt_fab_rail_fields(nt_fab_check(checks, "fabric_rail", NT_FAB_CODE_RAIL_SLOW, "warn", d),
                               r, rl->slow_node >= 0 ? rd->hosts[rl->slow_node] : NULL,
                               rl->one_bw);
            continue;
        }
        if (rl->shared) {
            snprintf(d, sizeof(d),
                     "rail %d slows when all rails run at once: %.2g GB/s per flow, %.2g on its "
                     "own: it shares a link with another rail (rails cross-wired, or one uplink)",
                     r, rl->all_bw, rl->one_bw);
            nt_fab_rail_fields(
                nt_fab_check(checks, "fabric_rail", NT_FAB_CODE_RAIL_SHARED, "warn", d), r, NULL,
                rl->all_bw);
            continue;
        }
        snprintf(d, sizeof(d), "rail %d: %.2g GB/s per flow on its own, %.2g with all rails",
                 r, rl->one_bw, rl->all_bw);
        nt_fab_rail_fields(nt_fab_check(checks, "fabric_rail", NT_FAB_CODE_RAIL_SLOW, "pass", d),
                           r, NULL, rl->one_bw);
    }
}

/* The groups against the switches: they agree when no leaf's hosts are split between two
 * groups (a group may hold several leaves: no bottleneck between those leaves was seen). The
 * row is information (category info, include/nettune/checks.def): a disagreement never makes
 * the run warn (the bottleneck a split leaf has inside it is a cut's finding, NT-FAB-201), and
 * groups of one node each hold nothing to compare: not judged. */
static void nt_fab_write_topology(cJSON *fab, cJSON *checks, const nt_fab_read_t *rd,
                                  const nt_fab_result_t *res, const nt_ibtopo_t *topo)
{
    cJSON *o = nt_json_add_obj(fab, "topology");
    int *leafgroup = calloc(topo->nswitches ? topo->nswitches : 1, sizeof(int));
    int missing = 0, split = -1, matched = 0;
    char d[400];

    if (!o || !leafgroup) {
        free(leafgroup);
        return;
    }
    for (size_t s = 0; s < topo->nswitches; s++)
        leafgroup[s] = -1;
    for (int i = 0; i < rd->nnodes; i++) {
        int leaf = nt_ibtopo_leaf_of(topo, rd->hosts[i]);
        if (leaf < 0) {
            missing++;
            continue;
        }
        if (res->group[i] < 0)
            continue;
        matched++;
        if (leafgroup[leaf] < 0)
            leafgroup[leaf] = res->group[i];
        else if (leafgroup[leaf] != res->group[i] && split < 0)
            split = leaf;
    }
    nt_json_add_str(o, "format", topo->format);
    nt_json_add_num(o, "leaf_switches", 0);
    {
        int nleaf = 0;
        for (size_t s = 0; s < topo->nswitches; s++)
            nleaf += topo->switches[s].nhosts > 0;
        cJSON_SetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "leaf_switches"), nleaf);
    }
    nt_json_add_num(o, "hosts_matched", matched);
    nt_json_add_num(o, "hosts_missing", missing);
    if (matched && res->ngroups == rd->nnodes) {
        nt_json_add_str(o, "agree", "unknown");
        snprintf(d, sizeof(d),
                 "every node is a group of its own: no group of the fabric phases to hold "
                 "against the leaf switches (%d of the run's nodes found)",
                 matched);
        nt_fab_check(checks, "fabric_topology", NT_FAB_CODE_TOPOLOGY, "not_judged", d);
    } else if (!matched) {
        nt_json_add_str(o, "agree", "unknown");
        snprintf(d, sizeof(d),
                 "no node of the run is a host of the topology file (%zu hosts on %zu switches): "
                 "the names differ",
                 topo->nhosts, topo->nswitches);
        nt_fab_check(checks, "fabric_topology", NT_FAB_CODE_TOPOLOGY, "not_judged", d);
    } else if (split >= 0) {
        nt_json_add_str(o, "agree", "no");
        snprintf(d, sizeof(d),
                 "information: the groups disagree with the switches: the hosts of leaf %s%s%s "
                 "fall into several groups (is the file current? a bottleneck inside the leaf "
                 "is a cut's finding)",
                 topo->switches[split].guid, topo->switches[split].desc[0] ? " " : "",
                 topo->switches[split].desc);
        nt_fab_check(checks, "fabric_topology", NT_FAB_CODE_TOPOLOGY, "pass", d);
    } else {
        nt_json_add_str(o, "agree", "yes");
        snprintf(d, sizeof(d),
                 "the groups agree with the switches: %d of the run's nodes found, no leaf "
                 "split between groups%s",
                 matched, missing ? " (some nodes are not in the file)" : "");
        nt_fab_check(checks, "fabric_topology", NT_FAB_CODE_TOPOLOGY, "pass", d);
    }
    nt_json_add_str(o, "detail", d);
    free(leafgroup);
}

typedef struct {
    const char *addr;
    int node, rail;
} nt_fab_addr_ref_t;

static int nt_fab_cmp_addr(const void *pa, const void *pb)
{
    const nt_fab_addr_ref_t *a = pa, *b = pb;
    int c = strcmp(a->addr, b->addr);
    return c ? c : (a->node > b->node) - (a->node < b->node);
}

/* Whether two nodes of the section bound one address (its rail_addresses): they share a
 * network stack, one machine, and the flows between them never cross a fabric (fake nodes on
 * one host, or one host under two names). d gets the reason naming the address and its
 * nodes. Returns 1 when shared, 0 when not or unknown (no rail_addresses: older reports),
 * -1 when out of memory. */
static int nt_fab_shared_stack(const cJSON *fab, const nt_fab_read_t *rd, char *d, size_t len)
{
    const cJSON *addrs = cJSON_GetObjectItemCaseSensitive(fab, "rail_addresses"), *per, *a;
    size_t n = 0, cap = 0;
    nt_fab_addr_ref_t *v = NULL;
    int node = 0, found = 0;

    cJSON_ArrayForEach (per, addrs) {
        int rail = 0;
        cJSON_ArrayForEach (a, per) {
            if (node < rd->nnodes && cJSON_IsString(a) && a->valuestring[0]) {
                if (n == cap) {
                    nt_fab_addr_ref_t *g = realloc(v, (cap = cap ? 2 * cap : 64) * sizeof(*g));
                    if (!g) {
                        free(v);
                        return -1;
                    }
                    v = g;
                }
                v[n++] = (nt_fab_addr_ref_t){a->valuestring, node, rail};
            }
            rail++;
        }
        node++;
    }
    if (n > 1)
        qsort(v, n, sizeof(*v), nt_fab_cmp_addr);
    for (size_t i = 0; i + 1 < n && !found; i++) {
        size_t j = i + 1, k, nodes = 1;
        while (j < n && strcmp(v[j].addr, v[i].addr) == 0) {
            nodes += v[j].node != v[j - 1].node;
            j++;
        }
        if (nodes < 2) {
            i = j - 1;
            continue;
        }
        /* up to 6 names, then how many more: the reason stays whole */
        int off = snprintf(d, len, "%zu nodes (", nodes), shown = 0;
        for (k = i; k < j && shown < 6 && off >= 0 && (size_t)off < len; k++)
            if (k == i || v[k].node != v[k - 1].node)
                off += snprintf(d + off, len - (size_t)off, "%s%s", shown++ ? ", " : "",
                                rd->hosts[v[k].node]);
        if (off >= 0 && (size_t)off < len)
            off += snprintf(d + off, len - (size_t)off, "%s)", (size_t)shown < nodes ? ", ..." : "");
        if (off >= 0 && (size_t)off < len)
            snprintf(d + off, len - (size_t)off,
                     " share the address %s (rail %d): one network stack, one machine; their "
                     "flows never cross a fabric, so no cut, group or rail is judged",
                     v[i].addr, v[i].rail);
        found = 1;
    }
    free(v);
    return found;
}

nt_status_t nt_fabric_judge_doc(cJSON *fab, const nt_ibtopo_t *topo)
{
    static const char *const added[] = {"groups", "cuts", "checks", "not_judged", "topology"};
    nt_fab_read_t rd;
    nt_fab_result_t res = {0};
    nt_fab_input_t in;
    cJSON *checks, *nj;
    int *m = NULL, rail_phases = 0;
    const char *status = nt_json_get_str(fab, "status", "ran");
    nt_status_t st;
    char d[300];

    if (!cJSON_IsObject(fab))
        return NT_ERR_INVALID;
    for (size_t i = 0; i < sizeof(added) / sizeof(added[0]); i++)
        cJSON_DeleteItemFromObjectCaseSensitive(fab, added[i]);
    checks = nt_json_add_arr(fab, "checks");
    nj = nt_json_add_arr(fab, "not_judged");
    if (!checks || !nj)
        return NT_ERR_NOMEM;
    if (strcmp(status, "skipped") == 0) {
        snprintf(d, sizeof(d), "the fabric phases were skipped: %s",
                 nt_json_get_str(fab, "reason", "no reason given"));
        nt_fab_not_judged(nj, "fabric", d);
        return NT_OK;
    }
    if ((st = nt_fab_read(fab, &rd)) != NT_OK)
        goto out;
    if (rd.bad_flows) {
        snprintf(d, sizeof(d), "%d flows with a node or rail index out of range were left out",
                 rd.bad_flows);
        nt_fab_not_judged(nj, "flows", d);
    }
    if (rd.unknown_phases) {
        snprintf(d, sizeof(d), "%d phases of unknown names were left out", rd.unknown_phases);
        nt_fab_not_judged(nj, "phases", d);
    }
    if (rd.nnodes < 2) {
        nt_fab_not_judged(nj, "fabric", "too few nodes: the section names fewer than 2");
        st = NT_OK;
        goto out;
    }
    switch (nt_fab_shared_stack(fab, &rd, d, sizeof(d))) {
    case 1:
        nt_fab_not_judged(nj, "fabric", d);
        st = NT_OK;
        goto out;
    case -1:
        st = NT_ERR_NOMEM;
        goto out;
    default:
        break;
    }
    for (size_t r = 0; r < rd.nrounds; r++)
        rail_phases |= rd.rounds[r].phase == NT_FAB_RAIL_ONE;
    in = (nt_fab_input_t){rd.nnodes, rd.nrails, rd.flows, rd.nflows, rd.rounds, rd.nrounds};
    if ((st = nt_fab_judge(&in, NULL, &res)) != NT_OK)
        goto out;
    st = NT_ERR_NOMEM;
    if (!(m = malloc((size_t)rd.nnodes * sizeof(int))))
        goto out;
    if (res.why[0])
        nt_fab_not_judged(nj, "groups", res.why);
    else if (res.no_alone) {
        snprintf(d, sizeof(d), "%d loaded flows had no alone reference of their pair",
                 res.no_alone);
        nt_fab_not_judged(nj, "flows", d);
    }
    nt_fab_write_groups(fab, &rd, &res, m);
    nt_fab_write_cuts(fab, checks, nj, &rd, &res, m);
    nt_fab_write_rails(checks, nj, &rd, &res, rail_phases);
    if (topo && !res.why[0])
        nt_fab_write_topology(fab, checks, &rd, &res, topo);
    if (strcmp(status, "partial") == 0)
        nt_fab_not_judged(nj, "fabric",
                          "the fabric phases stopped before their end: judged on what ran");
    st = NT_OK;
out:
    free(m);
    nt_fab_result_free(&res);
    nt_fab_read_free(&rd);
    return st;
}

/* Phase "fabric" of nt_judge_finish: a report with a "fabric" section gets it judged, and the
 * section's checks count in the summary as the other checks do: a warned cut is a warning of
 * the run (it names no node and drains nothing), what could not be judged is not judged: each
 * line of the section's not_judged counts once in summary.counts.not_judged. */
nt_status_t nt_finish_fabric(nt_finish_t *f)
{
    cJSON *fab = cJSON_GetObjectItemCaseSensitive(f->doc, "fabric"), *it;
    nt_status_t st;

    if (!cJSON_IsObject(fab))
        return NT_OK;
    if ((st = nt_fabric_judge_doc(fab, f->j->fabric_topo)) != NT_OK) {
        f->usage = 1;
        return st;
    }
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive(fab, "checks")) {
        nt_verdict_t v;
        char w[700];
        if (nt_verdict_parse(nt_json_get_str(it, "status", ""), &v) != NT_OK)
            continue;
        f->cnt[v]++;
        snprintf(w, sizeof(w), "fabric: %s", nt_json_get_str(it, "message", ""));
        if (v == NT_WARN || v == NT_FAIL)
            cJSON_AddItemToArray(f->warnings, cJSON_CreateString(w));
        else if (v == NT_NOT_JUDGED)
            cJSON_AddItemToArray(f->not_judged, cJSON_CreateString(w));
        if (v != NT_NOT_JUDGED && v != NT_SKIPPED)
            f->overall = nt_verdict_worse(f->overall, v);
    }
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive(fab, "not_judged")) {
        char w[700];
        const char *what = nt_json_get_str(it, "what", "");
        /* "fabric: ..." for the section as a whole, "fabric cut: ..." for a part of it */
        snprintf(w, sizeof(w), "fabric%s%s: %s", what[0] && strcmp(what, "fabric") ? " " : "",
                 strcmp(what, "fabric") ? what : "", nt_json_get_str(it, "reason", ""));
        cJSON_AddItemToArray(f->not_judged, cJSON_CreateString(w));
        /* counted as the checks' not judged are: the summary's "N not judged" is its lines */
        f->cnt[NT_NOT_JUDGED]++;
    }
    return NT_OK;
}
