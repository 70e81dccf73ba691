/* make bench-scale, the fabric judge's part: the judge (nt_fab_judge, its inference of the
 * groups and cuts) and the report glue (nt_fabric_judge_doc over the JSON section) at NODES
 * nodes on a synthetic leaf-spine fabric of tests/unit/fabric_gen.c: LEAVES leaves, each leaf
 * pair's direction a cut at a quarter of what a bisection round asks of it, 10 % noise,
 * ROUNDS bisection and as many ring rounds (default 4), the loaded pairs sampled alone (3 x
 * their count, with repeats).
 * Prints one line: time and the process's peak RSS growth of each step, whether the groups are
 * the leaves, and how many groups hold nodes of two leaves (a wrong merge: exit 1 then). Usage: bench_fabric NODES LEAVES [ROUNDS]. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "fabric_gen.h"
#include "nettune/fabric.h"

static double nt_bf_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double nt_bf_rss_mb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0;
}

int main(int argc, char **argv)
{
    nt_fabgen_t g = nt_fabgen_default();
    nt_fab_input_t in;
    nt_fab_result_t r;
    double t0, t_judge, t_doc, rss0, rss1, rss2;
    int right = 1, mixed = 0, *leaf_of_group;
    cJSON *fab;

    g.nodes = argc > 1 ? atoi(argv[1]) : 1000;
    g.leaves = argc > 2 ? atoi(argv[2]) : 8;
    if (g.nodes < 4 || g.leaves < 1 || g.leaves > g.nodes) {
        fprintf(stderr, "bench_fabric: give NODES >= 4 and LEAVES in 1..NODES\n");
        return 2;
    }
    g.bisections = g.rings = argc > 3 ? atoi(argv[3]) : 4;
    g.alltoall = 0; /* N^2 flows: the schedule bounds it by bytes per pair; left out here */
    g.alone_pairs = 3 * (g.bisections + g.rings) * g.nodes;
    /* a bisection round sends about nodes / leaves^2 flows each way between two leaves */
    g.cut_GBps = 0.25 * g.host_GBps * g.nodes / ((double)g.leaves * g.leaves);
    nt_fabgen_input(&g, &in);
    rss0 = nt_bf_rss_mb();
    t0 = nt_bf_now();
    if (nt_fab_judge(&in, NULL, &r) != NT_OK) {
        fprintf(stderr, "bench_fabric: the judge failed\n");
        return 1;
    }
    t_judge = nt_bf_now() - t0;
    rss1 = nt_bf_rss_mb();
    for (int i = 0; i < g.nodes && right; i++)
        right = r.group[i] == r.group[(i / (g.nodes / g.leaves)) * (g.nodes / g.leaves)] &&
                r.ngroups == g.leaves;
    leaf_of_group = malloc((size_t)(r.ngroups + 1) * sizeof(int));
    for (int k = 0; leaf_of_group && k < r.ngroups; k++)
        leaf_of_group[k] = -1;
    for (int i = 0; leaf_of_group && i < g.nodes; i++) {
        int k = r.group[i], leaf = (int)((long)i * g.leaves / g.nodes);
        if (k < 0)
            continue;
        if (leaf_of_group[k] == -1)
            leaf_of_group[k] = leaf;
        else if (leaf_of_group[k] != leaf && leaf_of_group[k] != -2) {
            leaf_of_group[k] = -2;
            mixed++;
        }
    }
    free(leaf_of_group);
    printf("%6d %6d %6d %8zu %8.3f %8.1f %7d %5d %-5s %5d", g.nodes, g.leaves, g.bisections,
           in.nflows, t_judge, rss1 - rss0, r.ngroups, r.ncuts, right ? "yes" : "no", mixed);
    nt_fab_result_free(&r);
    nt_fabgen_input_free(&in);
    fab = nt_fabgen_doc(&g);
    rss1 = nt_bf_rss_mb();
    t0 = nt_bf_now();
    if (!fab || nt_fabric_judge_doc(fab, NULL) != NT_OK) {
        fprintf(stderr, "bench_fabric: the report glue failed\n");
        return 1;
    }
    t_doc = nt_bf_now() - t0;
    rss2 = nt_bf_rss_mb();
    printf(" %8.3f %8.1f\n", t_doc, rss2 - rss1);
    cJSON_Delete(fab);
    return mixed ? 1 : 0;
}
