/* The probe engine: see run.h. Rank 0 collects everything, judges and writes the report; the
 * other ranks measure and send. Every wait has a deadline (the launcher's), so a dead peer
 * costs a timeout and leaves a partial report instead of a hang. */
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fabric/fabric.h"
#include "inventory.h"
#include "judge/judge.h"
#include "rpt.h"
#include "nettune/version.h"
#include "nettune/bench.h"
#include "nettune/clock.h"
#include "nettune/log.h"
#include "probe_util.h"
#include "run.h"

volatile sig_atomic_t nt_probe_interrupt;

/* The end of the line rank 0 prints when a signal stops the run (nt_probe_stop_line): the
 * partial report's path and the steps done, as the stashed report says them. Armed by each
 * progress snapshot, written from the signal handler. */
static char nt_stop_tail[1200];
static volatile sig_atomic_t nt_stop_armed;

/* The steps a progress text says were done, without its "run in progress: " (a stopped
 * report's text must not read as a run still going to whoever greps for it). */
static const char *nt_progress_steps(const char *progress)
{
    static const char prefix[] = "run in progress: ";
    return strncmp(progress, prefix, sizeof(prefix) - 1) == 0 ? progress + sizeof(prefix) - 1
                                                                : progress;
}

static void nt_stop_line_arm(const char *output, const char *progress)
{
    progress = nt_progress_steps(progress);
    nt_stop_armed = 0;
    /* The stashed snapshot is what is on disk when the signal comes; rank 0 then writes the
     * final report if it still can, which may hold more: say which the line describes. */
    snprintf(nt_stop_tail, sizeof(nt_stop_tail),
             ": partial report '%s' (its last snapshot: %s; the final write may add more)\n", output,
             progress);
    nt_stop_armed = 1;
}

void nt_probe_stop_line(int sig)
{
    static const char head[] = "nettune probe: stopped by ";
    const char *name = sig == SIGINT    ? "SIGINT"
                       : sig == SIGTERM ? "SIGTERM"
                       : sig == SIGHUP  ? "SIGHUP"
                                        : "a signal";
    ssize_t w;

    if (!nt_stop_armed)
        return;
    /* write(2) only: this runs in the signal handler */
    w = write(STDERR_FILENO, head, sizeof(head) - 1);
    w = write(STDERR_FILENO, name, strlen(name));
    w = write(STDERR_FILENO, nt_stop_tail, strlen(nt_stop_tail));
    (void)w;
}
volatile sig_atomic_t nt_probe_lost;

#define NT_TAG_LINKS 100
#define NT_TAG_NODE 101
#define NT_TAG_CHECKS 102
#define NT_PROGRESS_EVERY_S 3.0 /* the progressive rewrite is rate-limited */

/* Rank 0's view of the run. */
typedef struct nt_collect {
    cJSON *doc, *nodes, *links, *checks, *not_done;
    cJSON **node_objs; /* per node index, owned by doc once attached */
    double started, last_write;
    double snap_cost_s; /* what the last progress snapshot took */
    const char *output;
    nt_judge_t *judge; /* for the provisional verdicts of progress snapshots */
    int direct_output; /* written in place (stdout, a device, a FIFO): no progress snapshots */
    const nt_probe_t *probe;
} nt_collect_t;

/* Non-root ranks wait for rank 0 longer than rank 0 waits for anybody, so that rank 0 can
 * notice a dead peer, write the report and end the job itself. */
static double nt_follow_timeout(const nt_probe_t *p)
{
    return p->pair_budget_s + 3.0 * p->params->peer_timeout_s + 15.0;
}

/* How long rank 0 waits for the results of a pair's initiator: the pair's budgets, then the
 * time its partner takes to call a silent peer dead (--peer-timeout without progress), then
 * one more --peer-timeout, so that the partner's report names the silent rank first. */
static double nt_collect_wait(const nt_probe_t *p, double pair_budget_s)
{
    return pair_budget_s + 2.0 * p->params->peer_timeout_s + 1.0;
}

/* The time budget of one pair of probe ops: its own figure, or every size in both directions
 * with a 4x margin (probes with several variants or rails per pair). */
static double nt_pair_budget(const nt_probe_t *p, const nt_link_probe_ops_t *ops)
{
    const nt_probe_params_t *pa = p->params;
    if (ops->pair_budget_s)
        return ops->pair_budget_s(p);
    return 4.0 * nt_bench_deadline_s((unsigned)(2 * (pa->nlat_sizes + pa->nbw_sizes)), pa->budget_s,
                                     0, 0);
}

/* This kernel's boot id: ranks that print the same one share a machine (namespaces, pods).
 * "" when unreadable (then the launcher's shared-memory group stands in). */
static void nt_boot_id(char *buf, size_t len)
{
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    buf[0] = '\0';
    if (f) {
        if (!fgets(buf, (int)len, f))
            buf[0] = '\0';
        fclose(f);
    }
    buf[strcspn(buf, "\n")] = '\0';
}

/* Phase: identify the nodes of the job (host names and boot ids from every rank,
 * NETTUNE_FAKE_NODES) and the machines under them (boot ids). */
static nt_status_t nt_identify(nt_probe_t *p)
{
    char me[NT_HOST_MAX] = "", boot[NT_BOOT_ID_MAX];
    int lr = 0, ls = 1, fake = 0, machine = 0;
    const char *fk = getenv("NETTUNE_FAKE_NODES");
    nt_status_t st;

    gethostname(me, sizeof(me) - 1);
    nt_boot_id(boot, sizeof(boot));
    p->launcher->ops->local_group(p->launcher, &lr, &ls);
    if (fk && *fk) {
        char why[200];
        fake = nt_fake_nodes_parse(fk, p->size, why, sizeof(why));
        if (why[0] && p->rank == 0)
            NT_WARN(INIT, "%s", why);
    }
    st = nt_nodes_identify(p->launcher, me, boot, fake, p->params->peer_timeout_s, &p->nodes,
                           &p->nnodes, &machine);
    if (st == NT_OK)
        nt_probe_locate(p, p->rank, &p->my_node, &p->local_rank);
    /* p->cores_per_node: set by nt_run_concurrency, once the live topology is known. */
    /* Concurrency is judged per machine: its probe ranks (one kernel: one boot id) against
     * its cores; without a boot id, the launcher's shared-memory group. */
    p->host_ranks = machine > 0 ? machine : ls;
    return st;
}

/* Write the report: on progress (rate-limited) or for good. */
/* Write the report: a progress snapshot (rate-limited, judged on a copy so that it carries
 * provisional verdicts and a summary) or the final document. Returns the write status. */
static nt_status_t nt_collect_write(nt_collect_t *c, int completed, int force, const char *progress)
{
    cJSON *run = cJSON_GetObjectItemCaseSensitive(c->doc, "run");
    double now = nt_clock_s();
    nt_status_t st;

    if (progress) {
        cJSON *copy, *cr;
        /* stdout, a pipe or a device gets one document only: the final one. */
        /* At most every 3 s, and at most 10% of rank 0's time: a snapshot of 1,000 nodes
         * (19,000 links) costs 0.4-0.55 s to copy, judge and write. */
        /* A SIGCONT wrote the stopped report, but no SIGTERM followed: the run goes on, so the
         * report on disk says so again at once (main.c). */
        int written_before = nt_output_stash_written();
        int resumed = written_before && !*c->probe->stop;
        if (c->direct_output ||
            (!force && !resumed &&
             now - c->last_write < fmax(NT_PROGRESS_EVERY_S, 10.0 * c->snap_cost_s)))
            return NT_OK;
        copy = cJSON_Duplicate(c->doc, 1);
        if (!copy)
            return NT_ERR_NOMEM;
        cr = cJSON_GetObjectItemCaseSensitive(copy, "run");
        cJSON_ReplaceItemInObjectCaseSensitive(cr, "completed", cJSON_CreateBool(0));
        cJSON_ReplaceItemInObjectCaseSensitive(
            cr, "duration_s", cJSON_CreateNumber(round((now - c->started) * 1000) / 1000));
        /* If the job is killed now (SIGKILL after SIGTERM), this is the report that stays on
         * disk: it says what is still to come, and its verdicts are those of the links so far. */
        cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(cr, "not_done"),
                             cJSON_CreateString(progress));
        nt_judge_finish(c->judge, c->probe, copy, 1, c->probe->params);
        st = nt_json_write_atomic(copy, c->output);
        /* The same state, as the report a signal leaves (written by the handler, main.c). */
        {
            cJSON *nd = cJSON_GetObjectItemCaseSensitive(cr, "not_done");
            char msg[300];
            snprintf(msg, sizeof(msg),
                     "stopped by a signal (SIGTERM, SIGINT, SIGHUP, or the launcher ending the job) "
                     "while in progress: the report holds what was measured until its last "
                     "snapshot (%s)",
                     nt_progress_steps(progress));
            cJSON_ReplaceItemInArray(nd, cJSON_GetArraySize(nd) - 1, cJSON_CreateString(msg));
            /* streamed into an unnamed file: no text of the whole report in memory */
            nt_output_stash_json(c->output, copy);
            nt_stop_line_arm(c->output, progress);
            if (resumed && st == NT_OK)
                nt_output_stash_rearm();
            /* A signal during this write wrote the previous stopped report (a SIGCONT's early
             * notice), or found it written already and wrote nothing (a SIGTERM after the
             * SIGCONT), and this write then put "in progress" back on disk: the stopped report
             * goes back now. Measured on the namespace cluster, SIGTERM to mpirun: 1 try in 6
             * left "run in progress" on disk without the SIGTERM case; a SIGCONT during the
             * write left it too, and the SIGTERM after it then found its report written. */
            if (st == NT_OK &&
                (*c->probe->stop || (nt_output_stash_written() && !written_before))) {
                nt_output_stash_rearm();
                nt_output_write_stash();
            }
        }
        cJSON_Delete(copy);
        c->snap_cost_s = nt_clock_s() - now;
        if (st == NT_OK)
            c->last_write = now;
        return st;
    }
    cJSON_ReplaceItemInObjectCaseSensitive(run, "completed", cJSON_CreateBool(completed));
    cJSON_ReplaceItemInObjectCaseSensitive(
        run, "duration_s", cJSON_CreateNumber(round((now - c->started) * 1000) / 1000));
    /* The final document replaces the one a signal would have left. */
    nt_output_stash_drop();
    nt_stop_armed = 0;
    st = nt_json_write_atomic(c->doc, c->output);
    if (st == NT_OK)
        c->last_write = now;
    return st;
}

static nt_status_t nt_collect_init(nt_collect_t *c, nt_probe_t *p, int argc, char **argv)
{
    char ts[32], cmd[2048] = "", id[160];
    cJSON *run, *tool;
    size_t off = 0;

    memset(c, 0, sizeof(*c));
    c->started = nt_clock_s();
    c->output = p->params->output;
    {
        char real[4096];
        if (nt_output_resolve(c->output, real, sizeof(real), &c->direct_output) != NT_OK)
            c->direct_output = 1;
    }
    c->probe = p;
    nt_clock_rfc3339(ts, sizeof(ts));
    for (int i = 0; i < argc && off < sizeof(cmd) - 1; i++)
        off += (size_t)snprintf(cmd + off, sizeof(cmd) - off, "%s%s", i ? " " : "", argv[i]);
    snprintf(id, sizeof(id), "%s-%s-%ld", ts, p->nodes[0].host, (long)getpid());
    c->doc = cJSON_CreateObject();
    if (!c->doc || nt_json_add_str(c->doc, "schema", NT_REPORT_SCHEMA))
        return NT_ERR_NOMEM;
    tool = nt_json_add_obj(c->doc, "tool");
    run = nt_json_add_obj(c->doc, "run");
    if (!tool || !run || nt_json_add_str(tool, "name", "nettune") ||
        nt_json_add_str(tool, "version", nt_version()) || nt_json_add_str(run, "id", id) ||
        nt_json_add_str(run, "started_at", ts) || nt_json_add_num(run, "duration_s", 0) ||
        nt_json_add_str(run, "mode",
                        p->params->local                   ? "local"
                        : p->params->mode == NT_SCHED_FULL ? "full"
                                                           : "quick") ||
        nt_json_add_str(run, "command_line", cmd) ||
        nt_json_add_str(run, "launcher", p->launcher->ops->name) ||
        nt_json_add_num(run, "nranks", p->size) || nt_json_add_num(run, "nnodes", p->nnodes) ||
        (p->params->time_limit_s > 0 ? nt_json_add_num(run, "time_limit_s", p->params->time_limit_s)
                                     : nt_json_add_num(run, "time_limit_s", NAN)) ||
        nt_json_add_bool(run, "completed", 0))
        return NT_ERR_NOMEM;
    c->not_done = nt_json_add_arr(run, "not_done");
    c->nodes = nt_json_add_arr(c->doc, "nodes");
    c->links = nt_json_add_arr(c->doc, "links");
    c->checks = nt_json_add_arr(c->doc, "checks");
    c->node_objs = calloc((size_t)p->nnodes, sizeof(cJSON *));
    if (!c->not_done || !c->nodes || !c->links || !c->checks || !c->node_objs)
        return NT_ERR_NOMEM;
    /* Placeholders keep the nodes in hostname order while their inventories arrive. */
    for (int n = 0; n < p->nnodes; n++) {
        cJSON *o = cJSON_CreateObject();
        if (!o || nt_json_add_str(o, "hostname", p->nodes[n].host) ||
            !cJSON_AddItemToArray(c->nodes, o))
            return NT_ERR_NOMEM;
        c->node_objs[n] = o;
    }
    return NT_OK;
}

/* Rank 0: receive one JSON blob from rank src (itself: the local object is used directly). */
static nt_status_t nt_recv_json(nt_probe_t *p, int src, int tag, double wait_s, cJSON **out)
{
    char *buf;
    size_t len;
    /* Longer than any wait of a measurement (nt_collect_wait): when the initiator's own
     * partner died, the initiator's deadline passes first and it still reports, so the silent
     * rank is named (not the initiator that waited for it). */
    nt_status_t st = nt_launcher_recv_blob(p->launcher, src, tag, &buf, &len, wait_s);
    *out = NULL;
    if (st != NT_OK)
        return st;
    *out = cJSON_ParseWithLength(buf, len);
    free(buf);
    return *out ? NT_OK : NT_ERR_PEER;
}

static nt_status_t nt_send_json(nt_probe_t *p, int tag, const cJSON *obj)
{
    char *txt = cJSON_PrintUnformatted(obj);
    nt_status_t st;
    if (!txt)
        return NT_ERR_NOMEM;
    st = nt_launcher_send_blob(p->launcher, 0, tag, txt, strlen(txt), nt_follow_timeout(p));
    free(txt);
    return st;
}

/* Append every item of arr (moved) to dst. */
static void nt_move_items(cJSON *dst, cJSON *arr)
{
    while (arr && arr->child)
        cJSON_AddItemToArray(dst, cJSON_DetachItemFromArray(arr, 0));
}

/* Move every item of arr to the report's links, held as their text (nt_json_freeze: ~600 B
 * a link against ~4 KB as a tree; 499,500 links at 1,000 nodes --full), which the judge opens
 * one at a time. An item that cannot be frozen (out of memory) stays a tree. */
static void nt_move_frozen(cJSON *dst, cJSON *arr)
{
    cJSON *it;
    while (arr && (it = cJSON_DetachItemFromArray(arr, 0))) {
        cJSON *raw = nt_json_freeze(it);
        cJSON_AddItemToArray(dst, raw ? raw : it);
    }
}

/* Node inventories: every node leader sends {node, checks}; rank 0 files them in order. */
static nt_status_t nt_exchange_nodes(nt_probe_t *p, nt_collect_t *c, cJSON *node, cJSON *checks)
{
    nt_status_t st = NT_OK;

    if (p->rank != 0) {
        if (p->local_rank != 0)
            return NT_OK;
        st = nt_send_json(p, NT_TAG_NODE, node);
        return st == NT_OK ? nt_send_json(p, NT_TAG_CHECKS, checks) : st;
    }
    for (int n = 0; n < p->nnodes && st == NT_OK; n++) {
        int src = p->nodes[n].ranks[0];
        cJSON *nj = NULL, *cj = NULL;
        if (src == 0) {
            nj = cJSON_Duplicate(node, 1);
            cj = cJSON_Duplicate(checks, 1);
        } else if ((st = nt_recv_json(p, src, NT_TAG_NODE, nt_collect_wait(p, 0), &nj)) == NT_OK) {
            st = nt_recv_json(p, src, NT_TAG_CHECKS, nt_collect_wait(p, 0), &cj);
        }
        if (st != NT_OK) {
            char msg[256];
            snprintf(msg, sizeof(msg), "inventory of %s: rank %d did not answer (%s)",
                     p->nodes[n].host, src, nt_status_string(st));
            cJSON_AddItemToArray(c->not_done, cJSON_CreateString(msg));
            if (st != NT_ERR_INTERRUPTED)
                nt_judge_node_silent(c->judge, p->nodes[n].host, msg);
            cJSON_Delete(nj);
            cJSON_Delete(cj);
            break;
        }
        if (nj) {
            cJSON_ReplaceItemViaPointer(c->nodes, c->node_objs[n], nj);
            c->node_objs[n] = nj;
        }
        /* Checks of a node are replaced as a whole when it reports again (after finish): one
         * walk of the list (by index it was O(checks^2) a node: minutes at 4,096 nodes). */
        for (cJSON *ck = c->checks->child, *next; ck; ck = next) {
            next = ck->next;
            if (strcmp(nt_json_get_str(ck, "host", ""), p->nodes[n].host) == 0)
                cJSON_Delete(cJSON_DetachItemViaPointer(c->checks, ck));
        }
        nt_move_items(c->checks, cj);
        cJSON_Delete(cj);
    }
    return st;
}

/* One step: each rank finds its part, runs it, initiators send their links to rank 0. */
static nt_status_t nt_run_step(nt_probe_t *p, nt_collect_t *c, const nt_link_probe_ops_t *ops,
                               void *state, const int *avail, const nt_step_t *s, cJSON *dest_links)
{
    double wait_s = nt_collect_wait(p, nt_pair_budget(p, ops));
    cJSON *mine = cJSON_CreateArray();
    nt_status_t st = NT_OK, rst = NT_OK;
    int peer_lost = 0;

    if (!mine)
        return NT_ERR_NOMEM;
    for (int i = 0; i < s->npairs; i++) {
        int a = s->pairs[i][0], b = s->pairs[i][1], before = cJSON_GetArraySize(mine);
        if (s->local) {
            int na = -1, la = -1;
            if (a != p->rank && ops->run_local_all)
                nt_probe_locate(p, a, &na, &la);
            if ((a == p->rank ? avail[a] : na == p->my_node && avail[p->rank]) && ops->run_local) {
                cJSON *chk = cJSON_CreateArray();
                rst = ops->run_local(state, p, mine, chk);
                /* Local checks travel with the links, as a pseudo-link the collector files. */
                if (chk && cJSON_GetArraySize(chk) > 0) {
                    cJSON *wrap = cJSON_CreateObject();
                    cJSON_AddItemToObject(wrap, "checks", chk);
                    cJSON_AddItemToArray(mine, wrap);
                } else {
                    cJSON_Delete(chk);
                }
            }
            continue;
        }
        if (a != p->rank && b != p->rank)
            continue;
        if (!avail[a] || !avail[b]) {
            /* One end lacks the hardware: nothing to measure. The node's "skipped" entry
             * already says why; a link would need endpoints (NIC ports) that do not exist. */
            continue;
        }
        {
            /* Pairs that run one after another share an oversubscribed host with idle ranks:
             * the two ends go to different CPUs for the measurement, so that the figures
             * measure the link, not the scheduler (two ranks on one CPU ping-pong through
             * sched_yield at 2-3x the latency). */
            cpu_set_t saved, one;
            int pinned = 0;
            if (p->serialized && sched_getaffinity(0, sizeof(saved), &saved) == 0 &&
                CPU_COUNT(&saved) >= 2) {
                int want = a == p->rank ? 0 : 1, seen = 0;
                CPU_ZERO(&one);
                for (int c = 0; c < CPU_SETSIZE; c++) {
                    if (!CPU_ISSET(c, &saved))
                        continue;
                    if (seen++ == want) {
                        CPU_SET(c, &one);
                        break;
                    }
                }
                pinned = sched_setaffinity(0, sizeof(one), &one) == 0;
            }
            {
                double t0 = nt_clock_s();
                before = cJSON_GetArraySize(mine);
                rst =
                    ops->run_pair(state, p, a == p->rank ? b : a, a == p->rank, s->scopes[i], mine);
                /* The time of each pair, so a serial run can tell what a concurrent one would
                 * take (the slowest pair of each round). */
                for (int k = before; k < cJSON_GetArraySize(mine); k++)
                    nt_json_add_num(cJSON_GetArrayItem(mine, k), "elapsed_s",
                                    round((nt_clock_s() - t0) * 1e4) / 1e4);
            }
            if (pinned)
                sched_setaffinity(0, sizeof(saved), &saved);
        }
        if ((rst == NT_ERR_TIMEOUT || rst == NT_ERR_PEER) && a == p->rank) {
            /* Tell rank 0 which peer of this pair stopped answering: on this pair's own links
             * (an earlier pair's link would carry its own peer's error), or on an entry without
             * an id (dropped by the collector) when the pair reported none. */
            cJSON *first = cJSON_GetArrayItem(mine, before);
            if (!first) {
                first = cJSON_CreateObject();
                if (first)
                    cJSON_AddItemToArray(mine, first);
            }
            if (first)
                nt_json_add_num(first, "peer_lost", b);
        }
        if ((rst == NT_ERR_TIMEOUT || rst == NT_ERR_PEER) && p->rank == 0)
            peer_lost = 1;
        if (rst == NT_ERR_INTERRUPTED)
            break;
    }
    /* Collect at rank 0 from every initiator of the step (and local-step rank). */
    if (p->rank != 0) {
        int sends = 0;
        for (int i = 0; i < s->npairs; i++)
            if (s->pairs[i][0] == p->rank)
                sends = 1;
        if (sends)
            st = nt_send_json(p, NT_TAG_LINKS, mine);
    } else {
        for (int i = 0; i < s->npairs && st == NT_OK; i++) {
            int a = s->pairs[i][0];
            cJSON *arr = NULL;
            int dup = 0;
            for (int j = 0; j < i; j++)
                dup |= s->pairs[j][0] == a;
            if (dup)
                continue;
            if (a == 0) {
                arr = mine;
                mine = NULL;
            } else if ((st = nt_recv_json(p, a, NT_TAG_LINKS, wait_s, &arr)) != NT_OK) {
                char msg[256];
                int na, la;
                nt_probe_locate(p, a, &na, &la);
                if (st == NT_ERR_INTERRUPTED)
                    snprintf(msg, sizeof(msg),
                             "%s: collecting the results of rank %d on %s was "
                             "interrupted by a signal",
                             ops->kind, a, na >= 0 ? p->nodes[na].host : "?");
                else
                    snprintf(msg, sizeof(msg), "%s: rank %d on %s did not answer within %g s (%s)",
                             ops->kind, a, na >= 0 ? p->nodes[na].host : "?", wait_s,
                             nt_status_string(st));
                cJSON_AddItemToArray(c->not_done, cJSON_CreateString(msg));
                if (st != NT_ERR_INTERRUPTED && na >= 0) {
                    char why[200];
                    snprintf(why, sizeof(why), "rank %d sent no %s results within %.3g s", a,
                             ops->kind, wait_s);
                    nt_judge_node_silent(c->judge, p->nodes[na].host, why);
                }
                break;
            }
            for (cJSON *it = arr ? arr->child : NULL; it; it = it->next) {
                cJSON *chk = cJSON_GetObjectItemCaseSensitive(it, "checks");
                if (chk && !cJSON_GetObjectItemCaseSensitive(it, "id"))
                    nt_move_items(c->checks, chk);
                /* A measurement that timed out means a peer stopped answering: Open MPI 4.1
                 * cannot carry on around a dead rank, so the run ends (report first). */
                const cJSON *lost = cJSON_GetObjectItemCaseSensitive(it, "peer_lost");
                if (lost) {
                    int nl, ll;
                    const cJSON *e0 =
                        cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(it, "errors"), 0);
                    peer_lost = 1;
                    nt_probe_locate(p, nt_json_get_int(it, "peer_lost", -1), &nl, &ll);
                    if (nl >= 0)
                        nt_judge_node_silent(c->judge, p->nodes[nl].host,
                                             cJSON_IsString(e0) ? e0->valuestring
                                                                : "stopped answering");
                    /* peer_lost ends the run (nt_continue); the key is internal: removed here,
                     * from the step's own links (not from every link after every step). */
                    cJSON_DeleteItemFromObjectCaseSensitive(it, "peer_lost");
                }
            }
            for (int k = cJSON_GetArraySize(arr) - 1; k >= 0; k--)
                if (!cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(arr, k), "id"))
                    cJSON_DeleteItemFromArray(arr, k);
            for (cJSON *it = arr ? arr->child : NULL; it; it = it->next)
                if (s->round >= 0)
                    nt_json_add_num(it, "round", s->round);
            if (dest_links == c->links)
                nt_move_frozen(dest_links, arr);
            else
                nt_move_items(dest_links, arr);
            cJSON_Delete(arr);
        }
    }
    cJSON_Delete(mine);
    if (st != NT_OK)
        return st;
    if (peer_lost)
        return NT_ERR_PEER;
    return rst == NT_ERR_INTERRUPTED ? rst : NT_OK;
}

/* Rank 0, after a control collective timed out (not a signal): which ranks are gone, asked
 * through the launcher's liveness check, and named as silent (no_answer). A rank killed while
 * it waited for the next step is in no pair in flight: without this nobody would be named. */
static void nt_name_lost(nt_probe_t *p, nt_collect_t *c)
{
    unsigned char *alive;
    if (p->rank != 0 || *p->stop || !p->launcher->ops->alive || !c->judge)
        return;
    alive = calloc((size_t)p->size, 1);
    if (!alive)
        return;
    if (p->launcher->ops->alive(p->launcher, p->params->peer_timeout_s, alive) == NT_OK)
        for (int r = 1; r < p->size; r++) {
            int n, lr;
            char why[200];
            if (alive[r])
                continue;
            nt_probe_locate(p, r, &n, &lr);
            if (n < 0)
                continue;
            snprintf(why, sizeof(why),
                     "rank %d on %s did not answer within %g s (the run's control broadcast "
                     "timed out)",
                     r, p->nodes[n].host, p->params->peer_timeout_s);
            nt_judge_node_silent(c->judge, p->nodes[n].host, why);
        }
    free(alive);
}

/* Rank 0 decides whether the run goes on; everybody follows. more: whether anything of the
 * schedule is left after this step (the time limit stops only what is left: a run whose last
 * step ends past it is complete). */
static int nt_continue(nt_probe_t *p, nt_status_t my_status, int more, const char **why)
{
    int go = 1;
    *why = NULL;
    if (p->rank == 0) {
        if (nt_probe_interrupt) {
            go = 0;
            *why = "stopped by a signal";
        } else if (more && p->deadline > 0 && nt_clock_s() >= p->deadline) {
            go = 0;
            *why = "time limit reached";
        } else if (my_status != NT_OK) {
            go = 0;
            *why = "a peer did not answer";
        }
    }
    if (p->launcher->ops->bcast(p->launcher, &go, sizeof(go), 0,
                                p->rank == 0 ? p->params->peer_timeout_s : nt_follow_timeout(p)) !=
        NT_OK)
        return -1;
    return go;
}

static void nt_not_done(nt_collect_t *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void nt_not_done(nt_collect_t *c, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (c->doc)
        cJSON_AddItemToArray(c->not_done, cJSON_CreateString(msg));
}

/* What a file given to --topology is, when it is not an hwloc export: NCCL's own topology or
 * graph XML are the usual mix-ups (NCCL_TOPO_FILE / NCCL_GRAPH_FILE formats). */
static const char *nt_topology_file_hint(const char *path)
{
    char head[4096];
    size_t n;
    FILE *f = fopen(path, "r");

    if (!f)
        return "";
    n = fread(head, 1, sizeof(head) - 1, f);
    fclose(f);
    head[n] = '\0';
    if (strstr(head, "<system"))
        return " (this is an NCCL topology file, NCCL_TOPO_FILE format, not an hwloc export)";
    if (strstr(head, "<graphs"))
        return " (this is an NCCL graph file, NCCL_GRAPH_FILE format, not an hwloc export)";
    if (strstr(head, "GPU0") && strstr(head, "Legend"))
        return " (this is nvidia-smi topo -m output, not an hwloc export)";
    return "";
}

static void nt_collect_free(nt_collect_t *c)
{
    cJSON_Delete(c->doc);
    free(c->node_objs);
    memset(c, 0, sizeof(*c));
}

/* The whole run on one rank: what every phase reads and sets. */
typedef struct nt_run {
    nt_probe_t p;
    nt_collect_t c; /* rank 0 only */
    nt_judge_t *judge;
    const nt_link_probe_ops_t *const *probes; /* the registry */
    int nprobes;
    void **states;                  /* per probe: its state (NULL: not initialised here) */
    int **avail;                    /* per probe: availability of every rank */
    cJSON *node_json, *node_checks; /* this node's report object and checks (node leader) */
    int concurrent;                 /* pairs of a round run at the same time */
    int stopped, aborted; /* ended early: by a signal/time limit/lost peer, or cannot go on */
} nt_run_t;

/* Whether any rank can run probe k. */
static int nt_run_any(const nt_run_t *r, int k)
{
    for (int i = 0; i < r->p.size; i++)
        if (r->avail[k][i])
            return 1;
    return 0;
}

/* Phase: retest. Rank 0 picks the failing pairs (judge), everybody measures them again one pair
 * at a time, and rank 0 files the second figures beside the first. Returns the number of pair
 * measurements (0: nothing waited for a retest). */
static int nt_run_retest(nt_run_t *r)
{
    nt_probe_t *p = &r->p;
    int n = 0, (*pairs)[3] = NULL;
    cJSON *again = p->rank == 0 ? cJSON_CreateArray() : NULL;
    const char *why;

    if (p->rank == 0 &&
        nt_judge_retest_pairs(r->judge, p, r->c.doc, r->probes, r->nprobes, &pairs, &n) != NT_OK)
        n = 0;
    if (p->launcher->ops->bcast(p->launcher, &n, sizeof(n), 0,
                                p->rank == 0 ? p->params->peer_timeout_s : nt_follow_timeout(p)) !=
        NT_OK) {
        r->aborted = 1;
        nt_name_lost(p, &r->c);
        goto out;
    }
    if (n == 0)
        goto out;
    if (p->rank != 0 && !(pairs = calloc((size_t)n, sizeof(*pairs)))) {
        r->aborted = 1; /* cannot follow rank 0 any more */
        goto out;
    }
    if (p->launcher->ops->bcast(p->launcher, pairs, (size_t)n * sizeof(*pairs), 0,
                                p->rank == 0 ? p->params->peer_timeout_s : nt_follow_timeout(p)) !=
        NT_OK) {
        r->aborted = 1;
        nt_name_lost(p, &r->c);
        goto out;
    }
    NT_INFO(VERDICT, "retesting %d failing pair(s)", n);
    for (int i = 0; i < n; i++) {
        int pr[1][2] = {{pairs[i][0], pairs[i][1]}}, na, nb, la, go, k = pairs[i][2];
        nt_scope_t scope;
        nt_step_t s = {0};
        nt_status_t st;
        nt_probe_locate(p, pairs[i][0], &na, &la);
        nt_probe_locate(p, pairs[i][1], &nb, &la);
        scope = na == nb ? NT_SCOPE_INTRA : NT_SCOPE_INTER;
        s.npairs = 1;
        s.pairs = pr;
        s.scopes = &scope;
        s.round = -1;
        st = nt_run_step(p, &r->c, r->probes[k], r->states[k], r->avail[k], &s, again);
        go = nt_continue(p, st, i + 1 < n, &why);
        if (go < 0) {
            r->aborted = 1;
            nt_name_lost(p, &r->c);
            break;
        }
        if (!go) {
            r->stopped = 1;
            /* a pair whose own step was cut short counts as not retested, as in the rounds */
            if (p->rank == 0)
                nt_not_done(&r->c, "retest: %d of %d pairs not run (%s)", n - i - 1 + (st != NT_OK),
                            n, why);
            break;
        }
    }
    if (p->rank == 0)
        nt_judge_apply_retest(r->judge, r->c.doc, again);
out:
    cJSON_Delete(again);
    free(pairs);
    return n;
}

/* Phase: set-up. Thresholds, the report path, the report skeleton and the inventory source.
 * Returns NT_EXIT_OK to go on, or the exit code (the error is said once, by rank 0). */
static int nt_run_setup(nt_run_t *r, int argc, char **argv)
{
    nt_probe_t *p = &r->p;
    const nt_probe_params_t *params = p->params;
    nt_launcher_t *l = p->launcher;
    nt_status_t st;

    /* Thresholds and expectations: every rank loads them, so a bad file stops every rank with
     * the same exit code before anything runs. They are the job's own input: rank 0 reads them
     * first and says what is wrong, once; the others follow its word (one that still fails
     * reads another file than rank 0 did, and says so). */
    {
        int ok = 1;
        if (p->rank == 0)
            ok = nt_judge_create(params, &r->judge) == NT_OK;
        if (l->ops->bcast(l, &ok, sizeof(ok), 0, params->peer_timeout_s) != NT_OK || !ok)
            return NT_EXIT_USAGE;
        if (p->rank != 0 && nt_judge_create(params, &r->judge) != NT_OK)
            return NT_EXIT_USAGE;
    }

    /* The report must be writable, and none of the files the run reads, before anything is
     * measured: a prolog that measured for a minute and then could not write would lose it all,
     * and one writing over its --baseline would lose the known-good run. Rank 0 checks,
     * everybody follows. */
    {
        const char *in[] = {params->thresholds, params->baseline, params->fabric_topology,
                            params->tuning_file, params->topology};
        char why[8192];
        int ok = 1;
        if (p->rank == 0 &&
            nt_output_preflight(&(nt_output_opt_t){"--output", params->output}, 1, in,
                                sizeof(in) / sizeof(in[0]), NULL, why, sizeof(why)) != NT_OK) {
            NT_ERROR(REPORT, "nothing measured: %s", why);
            ok = 0;
        }
        /* a FIFO without a reader, which the preflight does not open; nt_output_check says
         * why, in one line */
        ok = ok && (p->rank != 0 || nt_output_check(params->output) == NT_OK);
        if (l->ops->bcast(l, &ok, sizeof(ok), 0, params->peer_timeout_s) != NT_OK || !ok)
            return NT_EXIT_USAGE;
    }
    if (p->rank == 0 && nt_collect_init(&r->c, p, argc, argv) != NT_OK) {
        NT_ERROR(REPORT, "out of memory building the report");
        return NT_EXIT_USAGE;
    }
    r->c.judge = r->judge;

    /* Inventory on every rank (probes need it); the node leader reports it. A --topology file
     * is the job's input: rank 0 loads it first and names what is wrong with it, once. */
    {
        int ok = 1;
        if (p->rank == 0) {
            st = nt_topo_load(params->topology, &p->topo);
            ok = st == NT_OK || !params->topology;
            /* nt_topo_load said what is wrong, with the fix; say more only when the file is
             * another tool's (an NCCL topology file given for an hwloc one). */
            if (!ok && nt_topology_file_hint(params->topology)[0])
                NT_ERROR(TOPO, "topology '%s'%s: give an hwloc XML export (lstopo file.xml)",
                         params->topology, nt_topology_file_hint(params->topology));
        }
        if (params->topology &&
            (l->ops->bcast(l, &ok, sizeof(ok), 0, params->peer_timeout_s) != NT_OK || !ok))
            return NT_EXIT_USAGE;
        if (p->rank != 0) {
            st = nt_topo_load(params->topology, &p->topo);
            if (st != NT_OK && params->topology) {
                NT_ERROR(TOPO, "cannot load topology '%s' on this node (rank 0 could): %s",
                         params->topology, nt_status_string(st));
                return NT_EXIT_USAGE;
            }
        }
    }
    /* --fabric-ifaces names interfaces of every node: a mistyped one stops the run here, as a
     * bad option does, not as a skipped fabric section after the pairwise rounds. */
    {
        char err[NT_FAB_IFACE_ERR_MAX];
        st = nt_fabric_ifaces_check(p, err, sizeof(err));
        if (st == NT_ERR_NOT_FOUND && p->rank == 0)
            NT_ERROR(INIT, "%s", err);
        if (st != NT_OK)
            return NT_EXIT_USAGE;
    }
    r->states = calloc((size_t)r->nprobes, sizeof(*r->states));
    r->avail = calloc((size_t)r->nprobes, sizeof(*r->avail));
    if (!r->states || !r->avail)
        return NT_EXIT_USAGE;
    if (p->local_rank == 0) {
        r->node_json = cJSON_CreateObject();
        r->node_checks = cJSON_CreateArray();
        if (!r->node_json || !r->node_checks)
            return NT_EXIT_USAGE;
        nt_inventory_node(p, r->judge, r->node_json, r->node_checks);
    }
    return NT_EXIT_OK;
}

/* Phase: initialise every probe of the registry and agree who can run what. NT_ERR_NOMEM, or
 * a failed exchange (the run is aborted). */
static nt_status_t nt_run_init_probes(nt_run_t *r)
{
    nt_probe_t *p = &r->p;
    const nt_probe_params_t *params = p->params;

    for (int k = 0; k < r->nprobes; k++) {
        const nt_link_probe_ops_t *ops = r->probes[k];
        char why_buf[256] = "";
        int ok = 0;
        r->avail[k] = calloc((size_t)p->size, sizeof(int));
        if (!r->avail[k])
            return NT_ERR_NOMEM;
        if (!nt_probe_selected(params->probes, ops->kind)) {
            snprintf(why_buf, sizeof(why_buf), "not selected (--probes %s)", params->probes);
        } else if (params->topology && ops->live_hw) {
            snprintf(why_buf, sizeof(why_buf),
                     "--topology: the node's hardware comes from '%s', so this host's own %s "
                     "devices are not probed (the node lists the file's devices)",
                     params->topology, ops->kind);
        } else {
            nt_status_t st =
                ops->init(p, &r->states[k], r->node_json, r->node_checks, why_buf, sizeof(why_buf));
            ok = st == NT_OK;
            if (!ok && !why_buf[0])
                snprintf(why_buf, sizeof(why_buf), "%s", nt_status_string(st));
        }
        if (!ok && r->node_json) {
            cJSON *sk = cJSON_GetObjectItemCaseSensitive(r->node_json, "skipped");
            if (!sk)
                sk = nt_json_add_arr(r->node_json, "skipped");
            if (sk)
                nt_skipped_add(sk, ops->kind, why_buf);
        }
        if (!ok)
            NT_INFO(INIT, "%s probe skipped: %s", ops->kind, why_buf);
        /* --checks-only runs no probe step: a probe that could run says why it measured nothing
         * (its checks, such as port states and counters, are still reported). */
        if (ok && params->checks_only && r->node_json) {
            cJSON *sk = cJSON_GetObjectItemCaseSensitive(r->node_json, "skipped");
            if (!sk)
                sk = nt_json_add_arr(r->node_json, "skipped");
            if (sk)
                nt_skipped_add(sk, ops->kind, "--checks-only: no traffic, no links measured");
        }
        if (p->launcher->ops->allgather(p->launcher, &ok, r->avail[k], sizeof(int),
                                        params->peer_timeout_s) != NT_OK) {
            r->aborted = 1;
            return NT_ERR_PEER;
        }
    }
    return NT_OK;
}

/* Phase: how pairs are scheduled. They run at the same time only where every host has a core
 * per probe rank; else one after another, pinned. */
static nt_status_t nt_run_concurrency(nt_run_t *r)
{
    nt_probe_t *p = &r->p;
    int mine, all = 1;
    /* The machine's CPUs for the job: hwloc's allowed PUs of the live machine (its cgroup
     * cpuset; unknown with a --topology file), not this rank's binding. */
    p->cores_per_node =
        nt_machine_cpus(p->topo && strcmp(p->topo->source, "live") == 0 ? p->topo->npus : 0);
    mine = p->cores_per_node >= p->host_ranks;
    int *v = calloc((size_t)p->size, sizeof(int));

    if (!v || p->launcher->ops->allgather(p->launcher, &mine, v, sizeof(int),
                                          p->params->peer_timeout_s) != NT_OK) {
        free(v);
        r->aborted = 1;
        return NT_ERR_PEER;
    }
    for (int i = 0; i < p->size; i++)
        all &= v[i];
    free(v);
    r->concurrent = all;
    p->serialized = !all;
    if (p->rank == 0) {
        cJSON *run = cJSON_GetObjectItemCaseSensitive(r->c.doc, "run");
        nt_json_add_bool(run, "concurrent_pairs", all);
        nt_json_add_bool(run, "serialized", !all);
        if (!all)
            NT_INFO(SCHED,
                    "pairs run one after another, pinned: a machine has fewer cores (%d) "
                    "than probe ranks (%d)",
                    p->cores_per_node, p->host_ranks);
    }
    return NT_OK;
}

/* Rank 0: the schedule of probe k in the report (rounds, pairs, steps). */
static void nt_run_note_schedule(nt_run_t *r, int k, const nt_step_t *steps, int nsteps)
{
    cJSON *run = cJSON_GetObjectItemCaseSensitive(r->c.doc, "run");
    cJSON *sch = cJSON_GetObjectItemCaseSensitive(run, "schedule"), *one;
    int npairs = 0;

    if (!sch)
        sch = nt_json_add_obj(run, "schedule");
    for (int s = 0; s < nsteps; s++)
        if (!steps[s].local)
            npairs += steps[s].npairs;
    one = sch ? nt_json_add_obj(sch, r->probes[k]->kind) : NULL;
    if (one) {
        nt_json_add_num(one, "rounds", nt_steps_rounds(steps, nsteps));
        nt_json_add_num(one, "pairs", npairs);
        nt_json_add_num(one, "steps", nsteps);
    }
}

/* Rank 0: what a run that stops at step s of probe k leaves out; cut is 1 when step s itself
 * was cut short (a signal, a silent peer: its pairs are not fully measured), 0 when it ended. */
static void nt_run_note_left(nt_run_t *r, int k, const nt_step_t *steps, int nsteps, int s, int cut,
                             const char *why)
{
    int left = 0, all = 0;
    for (int s2 = 0; s2 < nsteps; s2++) {
        if (steps[s2].local)
            continue;
        all += steps[s2].npairs;
        if (s2 > s || (cut && s2 == s))
            left += steps[s2].npairs;
    }
    /* "in full": the pairs of a step cut short keep the sizes they measured, as links */
    if (left > 0)
        nt_not_done(&r->c, "%s: %d of %d pairs not measured in full (%s)", r->probes[k]->kind, left,
                    all, why);
    else
        nt_not_done(&r->c, "%s: all %d pairs measured, the rest of the run not done (%s)",
                    r->probes[k]->kind, all, why);
    for (int k2 = k + 1; k2 < r->nprobes; k2++)
        if (nt_run_any(r, k2))
            nt_not_done(&r->c, "%s: not started (%s)", r->probes[k2]->kind, why);
}

/* Phase: the rounds of probe k, step by step; rank 0 decides after each whether the run goes
 * on. NT_ERR_NOMEM; an early end is in r->stopped / r->aborted. */
static nt_status_t nt_run_rounds(nt_run_t *r, int k)
{
    nt_probe_t *p = &r->p;
    const nt_probe_params_t *params = p->params;
    nt_step_t *steps = NULL;
    int nsteps = 0;
    const char *why = NULL;

    if (!nt_run_any(r, k))
        return NT_OK;
    if (nt_steps_build(p->nodes, p->nnodes, params->local ? NT_SCHED_QUICK : params->mode,
                       r->concurrent, &steps, &nsteps) != NT_OK)
        return NT_ERR_NOMEM;
    if (p->rank == 0)
        nt_run_note_schedule(r, k, steps, nsteps);
    for (int s = 0; s < nsteps; s++) {
        nt_status_t st =
            nt_run_step(p, &r->c, r->probes[k], r->states[k], r->avail[k], &steps[s], r->c.links);
        int go;
        /* The progress snapshot is written while the others wait (asleep) for rank 0's word,
         * not while the next pair measures: on an oversubscribed machine its CPU and disk time
         * would be in that pair's figures. */
        if (p->rank == 0) {
            char prog[160];
            snprintf(prog, sizeof(prog), "run in progress: %s step %d of %d done",
                     r->probes[k]->kind, s + 1, nsteps);
            nt_collect_write(&r->c, 0, 0, prog);
        }
        {
            /* left: a later step with pairs, or the local step of a probe that has one */
            int more = 0;
            for (int s2 = s + 1; !more && s2 < nsteps; s2++)
                more = steps[s2].local ? r->probes[k]->run_local != NULL : steps[s2].npairs > 0;
            for (int k2 = k + 1; !more && k2 < r->nprobes; k2++)
                more = nt_run_any(r, k2);
            go = nt_continue(p, st, more, &why);
        }
        if (go < 0) {
            /* A broken control wait: a signal (stop) or a lost rank (abort). */
            if (*p->stop)
                r->stopped = 1;
            else
                r->aborted = 1;
            nt_name_lost(p, &r->c);
            break;
        }
        if (!go) {
            r->stopped = 1;
            if (p->rank == 0 && !*p->stop && (st == NT_ERR_PEER || st == NT_ERR_TIMEOUT))
                r->aborted = 1;
            if (p->rank == 0)
                nt_run_note_left(r, k, steps, nsteps, s, st != NT_OK, why);
            break;
        }
    }
    nt_steps_free(steps, nsteps);
    return NT_OK;
}

/* Phase: the fabric phases under load (probes/fabric): every rank takes part, rank 0 files
 * the "fabric" section. A rank lost on the way ends the run as in the rounds. */
static void nt_run_fabric(nt_run_t *r)
{
    cJSON *sec = NULL;
    nt_status_t st;

    if (r->p.rank == 0)
        nt_collect_write(&r->c, 0, 1, "run in progress: fabric phases started");
    st = nt_fabric_run(&r->p, &sec, NULL);
    if (r->p.rank == 0 && sec && !cJSON_AddItemToObject(r->c.doc, "fabric", sec))
        cJSON_Delete(sec);
    if (st == NT_ERR_PEER) {
        r->aborted = 1;
        nt_name_lost(&r->p, &r->c);
    } else if (st != NT_OK && r->p.rank == 0) {
        nt_not_done(&r->c, "fabric: %s", nt_status_string(st));
    }
}

/* Phase: the probes' final per-node checks (error counters after the traffic), reported again. */
static void nt_run_finish_probes(nt_run_t *r)
{
    for (int k = 0; k < r->nprobes; k++)
        if (r->states[k] && r->probes[k]->finish)
            r->probes[k]->finish(r->states[k], &r->p, r->node_json, r->node_checks);
    if (!r->stopped && nt_exchange_nodes(&r->p, &r->c, r->node_json, r->node_checks) != NT_OK)
        r->aborted = 1;
}

/* Phase: verdicts and the report (rank 0), then the common exit code. */
static int nt_run_conclude(nt_run_t *r)
{
    nt_probe_t *p = &r->p;
    const nt_probe_params_t *params = p->params;
    nt_launcher_t *l = p->launcher;
    int code = NT_EXIT_INCOMPLETE;

    if (p->rank == 0) {
        if (*p->stop) {
            r->stopped = 1;
            nt_not_done(&r->c, "stopped by signal %d: the report holds what was measured before",
                        (int)*p->stop);
        } else if (r->aborted) {
            nt_not_done(&r->c, "a rank stopped answering: the report holds what was measured "
                               "before; the job ends here (Open MPI cannot continue without it)");
        }
        int written;
        code = nt_judge_finish(r->judge, p, r->c.doc, r->stopped || r->aborted, params);
        written = nt_collect_write(&r->c, !(r->stopped || r->aborted), 1, NULL) == NT_OK;
        if (!written) {
            NT_ERROR(REPORT,
                     "the report could not be written to '%s': the run's results are "
                     "lost (exit 2)",
                     params->output);
            code = NT_EXIT_USAGE;
        }
        /* The summary's last line names the report: never one that was not written. */
        if (!params->quiet)
            nt_summary_print(r->c.doc,
                             written ? params->output : "not written (see the error above)");
    }
    if (r->aborted) {
        /* A peer is gone: Open MPI 4.1 cannot carry on without it; end the job with our code.
         * Under orte_enable_recovery=1 mpirun does not end the job on MPI_Abort: every rank
         * then ends by itself (nt_probe_lost: main() skips MPI_Finalize's fence, which would
         * wait for the lost rank). */
        nt_probe_lost = 1;
        /* The summary (DRAIN lines) is in a pipe's stdio buffer: out before the kill. */
        fflush(NULL);
        if (p->rank == 0 && p->size > 1)
            l->ops->abort(l, code);
        return code;
    }
    if (!*p->stop &&
        l->ops->bcast(l, &code, sizeof(code), 0,
                      p->rank == 0 ? params->peer_timeout_s : nt_follow_timeout(p)) != NT_OK) {
        /* Rank 0 is gone or ends the job (MPI_Abort): no MPI_Finalize either. */
        code = NT_EXIT_INCOMPLETE;
        nt_probe_lost = 1;
    }
    return code;
}

static void nt_run_free(nt_run_t *r)
{
    for (int k = 0; k < r->nprobes; k++) {
        if (r->states && r->states[k])
            r->probes[k]->cleanup(r->states[k]);
        if (r->avail)
            free(r->avail[k]);
    }
    free(r->states);
    free(r->avail);
    cJSON_Delete(r->node_json);
    cJSON_Delete(r->node_checks);
    nt_collect_free(&r->c);
    nt_judge_destroy(r->judge);
    nt_topo_destroy(r->p.topo);
    nt_nodes_free(r->p.nodes, r->p.nnodes);
}

int nt_probe_run(const nt_probe_params_t *params, nt_launcher_t *l, int argc, char **argv)
{
    nt_run_t r = {0};
    nt_probe_t *p = &r.p;
    int code;
    nt_status_t st;

    p->params = params;
    p->launcher = l;
    p->rank = nt_launcher_rank(l);
    p->size = nt_launcher_size(l);
    p->stop = &nt_probe_interrupt;
    if (params->time_limit_s > 0)
        p->deadline = nt_clock_s() + params->time_limit_s;
    r.probes = nt_probe_registry(&r.nprobes);

    /* Identify the nodes of the job. */
    st = nt_identify(p);
    if (st == NT_ERR_INTERRUPTED) {
        /* A signal (the launcher's waits give up on the stop flag alone), not a failure to
         * run: exit 3 as any stop with nothing failed. No report can be written before the
         * inventory, so a file at the path is an earlier run's. */
        if (p->rank == 0)
            NT_WARN(INIT,
                    "stopped by a signal before the nodes of the job were identified: nothing "
                    "measured, no report written (a report at '%s' is an earlier run's)",
                    params->output);
        nt_run_free(&r);
        return NT_EXIT_INCOMPLETE;
    }
    if (st != NT_OK) {
        if (p->rank == 0)
            NT_ERROR(INIT, "cannot identify the nodes of the job: %s", nt_status_string(st));
        nt_run_free(&r);
        return NT_EXIT_USAGE;
    }
    nt_log_init(p->nodes[p->my_node].host, p->size > 1 ? p->rank : -1);

    code = nt_run_setup(&r, argc, argv);
    if (code != NT_EXIT_OK) {
        nt_run_free(&r);
        return code;
    }
    /* Probes, then the inventories (with the probes' "nics") to rank 0. */
    st = nt_run_init_probes(&r);
    if (st == NT_OK) {
        nt_inventory_finish_checks(p, r.judge, r.node_json, r.node_checks);
        if (nt_exchange_nodes(p, &r.c, r.node_json, r.node_checks) != NT_OK)
            r.aborted = 1;
        else if (p->rank == 0)
            nt_collect_write(&r.c, 0, 1,
                             "run in progress: inventory written, link probes not started");
    }
    if (st == NT_OK && !r.aborted)
        st = nt_run_concurrency(&r);
    /* The longest pair of any probe: what the followers allow rank 0 for a step. */
    for (int k = 0; k < r.nprobes; k++)
        if (nt_pair_budget(p, r.probes[k]) > p->pair_budget_s)
            p->pair_budget_s = nt_pair_budget(p, r.probes[k]);
    /* The rounds of every probe, in registry order. */
    /* --checks-only: inventory, states and counters; no probe step runs (no traffic). */
    /* --fabric: the fabric phases only, no pairwise rounds. */
    for (int k = 0; st == NT_OK && k < r.nprobes && !r.stopped && !r.aborted &&
                    !params->checks_only && !params->fabric;
         k++)
        st = nt_run_rounds(&r, k);
    if (st == NT_ERR_NOMEM) {
        /* Out of memory: nothing sensible is left to do, and rank 0 cannot be followed. */
        NT_ERROR(INIT, "out of memory");
        nt_run_free(&r);
        return NT_EXIT_INCOMPLETE;
    }
    if (!r.aborted)
        nt_run_finish_probes(&r);
    /* Retest failing pairs, judged by rank 0, measured by everyone. A retest changes its
     * population, which can fail a link that passed first: up to 3 rounds, until no failure
     * waits for its retest. */
    for (int round = 0; round < 3 && !r.aborted && !r.stopped && !params->no_retest; round++)
        if (nt_run_retest(&r) == 0)
            break;
    /* The fabric phases after the pairwise ones (--full), or alone (--fabric). */
    if (nt_fabric_wanted(params) && !r.aborted && !r.stopped)
        nt_run_fabric(&r);
    else if (nt_fabric_wanted(params) && p->rank == 0)
        nt_not_done(&r.c, "fabric: not started (the run ended early)");
    code = nt_run_conclude(&r);
    nt_run_free(&r);
    return code;
}
