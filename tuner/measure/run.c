/* nettune-tune-measure's run (measure.h): the plan, the ranks (forked locally, or one of a
 * launcher's), the backend, the sweep or --verify, and the document rank 0 writes. */
#include <ctype.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include "measure.h"
#include "tune.h"
#include "nettune/exitcode.h"
#include "nettune/report.h"

static int nt_measure_env_int(const char *a, const char *b)
{
    const char *v = getenv(a);
    if (!v || !*v)
        v = getenv(b);
    return v && *v ? atoi(v) : -1;
}

/* The backend named by --backend: the fake one in *fake, or a new NCCL one (free it with
 * nt_backend_free). want_plugin: see nt_measure_nccl_create. 0 when out of memory. */
static int nt_backend_make(const char *name, int want_plugin, nt_measure_fake_t *fake,
                        nt_measure_backend_t *b)
{
    memset(fake, 0, sizeof(*fake));
    if (!strcmp(name, "fake")) {
        b->ops = &nt_measure_fake_ops;
        b->self = fake;
        return 1;
    }
    b->ops = &nt_measure_nccl_ops;
    b->self = nt_measure_nccl_create(want_plugin);
    if (!b->self)
        fprintf(stderr, "nettune-tune-measure: out of memory\n");
    return b->self != NULL;
}

static void nt_backend_free(nt_measure_backend_t *b)
{
    if (b->ops == &nt_measure_nccl_ops)
        nt_measure_nccl_free(b->self);
}

/* --verify: start this rank's defaults process (the binary again, without the plugin or the
 * file), then the A/B; the evidence of what each side had loaded from NCCL's logs. */
static nt_status_t nt_verify_rank(nt_launcher_t *l, const nt_measure_params_t *a,
                                  const nt_measure_backend_t *b, const char *hub_host,
                                  const char *clog, cJSON **doc, char *err, size_t errlen)
{
    nt_measure_peer_t peer;
    nt_status_t st = nt_measure_peer_spawn(&peer, l, hub_host, "/proc/self/exe", clog, a->backend,
                                           a->o.timeout_s, err, errlen);
    if (st != NT_OK)
        return st;
    st = nt_measure_verify(l, b, &peer, a->verify, a->min_bytes, a->max_bytes, &a->o, doc, err,
                           errlen);
    nt_measure_peer_close(&peer);
    return st;
}

/* One rank's whole run; rank 0 writes path. Returns an exit code. */
static int nt_do_rank(nt_launcher_t *l, const nt_measure_params_t *a, const nt_measure_plan_t *plan,
                   const char *hub_host, const char *path)
{
    char err[512] = "";
    nt_measure_fake_t fake;
    nt_measure_backend_t b;
    if (!nt_backend_make(a->backend, 1, &fake, &b))
        return NT_EXIT_USAGE;
    int rank = nt_launcher_rank(l);
    char logpath[4096], clog[4096]; /* NCCL's debug files: ours, --verify's defaults side's */
    snprintf(logpath, sizeof(logpath), "%s.nccl-rank%d.log", path, rank);
    const char *u = getenv("NCCL_DEBUG_FILE"); /* the user's wins */
    if (u && *u)
        snprintf(clog, sizeof(clog), "%s.defaults", u);
    else
        snprintf(clog, sizeof(clog), "%s.nccl-rank%d.defaults.log", path, rank);
    if (b.ops == &nt_measure_nccl_ops)
        nt_measure_capture_setup(logpath);
    nt_status_t st = b.ops->init(b.self, l, err, sizeof(err));
    if (st != NT_OK) {
        if (rank == 0)
            fprintf(stderr, "nettune-tune-measure: %s: %s\n",
                    st == NT_ERR_UNSUPPORTED ? "skipped" : "cannot start", err);
        nt_backend_free(&b);
        return NT_EXIT_USAGE;
    }
    cJSON *doc = NULL;
    if (a->verify)
        st = nt_verify_rank(l, a, &b, hub_host, clog, &doc, err, sizeof(err));
    else
        st = nt_measure_sweep(l, &b, plan, &a->o, &doc, err, sizeof(err));
    int sm = b.ops == &nt_measure_nccl_ops ? nt_measure_nccl_sm(b.self) : 0;
    b.ops->finalize(b.self);
    const char *nlog = getenv("NCCL_DEBUG_FILE") ? getenv("NCCL_DEBUG_FILE") : logpath;
    if (doc && b.ops == &nt_measure_nccl_ops) { /* NCCL's table and calls, as it logged them */
        int n = nt_launcher_size(l);
        nt_tune_shape_t shape = {a->separate_nodes ? n : 1, a->separate_nodes ? 1 : n, n};
        nt_measure_capture_attach(doc, nlog, 20000, sm, &shape);
        cJSON *sd = cJSON_GetObjectItemCaseSensitive(doc, "sides");
        if (sd) { /* what each side had loaded, as NCCL's logs (rank 0's) say */
            nt_measure_side_evidence(cJSON_GetObjectItemCaseSensitive(sd, "tuned"), nlog, 1,
                                     a->verify);
            nt_measure_side_evidence(cJSON_GetObjectItemCaseSensitive(sd, "defaults"), clog, 0,
                                     NULL);
        }
    }
    nt_backend_free(&b);
    int rc = NT_EXIT_OK;
    if (st != NT_OK) {
        fprintf(stderr, "nettune-tune-measure: rank %d: %s\n", rank, err);
        rc = st == NT_ERR_INTERRUPTED || st == NT_ERR_PEER || st == NT_ERR_TIMEOUT
                 ? NT_EXIT_INCOMPLETE
                 : NT_EXIT_USAGE;
    }
    if (doc) {
        if (nt_json_write_atomic(doc, path) != NT_OK) {
            fprintf(stderr, "nettune-tune-measure: cannot write '%s'\n", path);
            rc = NT_EXIT_USAGE;
        } else if (cJSON_GetObjectItemCaseSensitive(doc, "summary")) {
            const cJSON *sm = cJSON_GetObjectItemCaseSensitive(doc, "summary");
            fprintf(stderr,
                    "nettune-tune-measure: verify: %d sizes, %d faster, %d slower, %d same "
                    "within noise, geometric mean speedup %.4f -> %s\n",
                    (int)nt_json_get_num(sm, "sizes", 0), (int)nt_json_get_num(sm, "faster", 0),
                    (int)nt_json_get_num(sm, "slower", 0), (int)nt_json_get_num(sm, "same", 0),
                    nt_json_get_num(sm, "geomean_speedup", 0), path);
            if (nt_json_get_num(sm, "slower", 0) > 0 && rc == NT_EXIT_OK)
                rc = NT_EXIT_FAIL; /* slower than NCCL's defaults beyond the rounds' spread */
        } else {
            int np = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "points"));
            int nn = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "not_applied"));
            const cJSON *sk = cJSON_GetObjectItemCaseSensitive(doc, "skipped");
            const cJSON *why = cJSON_GetArrayItem(sk, 0);
            if (np == 0 && nn == 0 && cJSON_IsString(why)) {
                /* every shape skipped (the launch's rank count fits none): nothing to learn
                 * from, which is exit 2, not a measured result */
                fprintf(stderr, "nettune-tune-measure: nothing measured: %s (%d shape(s) of the "
                                "plan skipped; the reasons are in '%s')\n",
                        why->valuestring, cJSON_GetArraySize(sk), path);
                if (rc == NT_EXIT_OK)
                    rc = NT_EXIT_USAGE;
            } else {
                fprintf(stderr, "nettune-tune-measure: %d points, %d not applied -> %s\n", np,
                        nn, path);
            }
        }
        cJSON_Delete(doc);
    }
    return rc;
}

static void nt_apply_launch(const nt_measure_plan_t *plan, int k)
{
    if (k < 0 || (size_t)k >= plan->nlaunches)
        return;
    for (size_t i = 0; i < plan->launch[k].nenv; i++)
        putenv(plan->launch[k].env[i]); /* the plan outlives the process's use of it */
}

/* Seconds the other local ranks get to end by themselves after one failed. */
#define NT_LOCAL_GRACE_S 5.0

/* Fork n local ranks meeting on a loopback socket; wait for all (a rank that fails ends the
 * others). Returns the worst exit code. */
static int nt_run_local(const nt_measure_params_t *a, const nt_measure_plan_t *plan, int launch,
                        const char *path)
{
    int lf = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET};
    socklen_t sl = sizeof(sa);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (lf < 0 || bind(lf, (struct sockaddr *)&sa, sizeof(sa)) || listen(lf, a->local_ranks) ||
        getsockname(lf, (struct sockaddr *)&sa, &sl)) {
        perror("nettune-tune-measure: loopback socket");
        return NT_EXIT_USAGE;
    }
    int port = ntohs(sa.sin_port);
    char serr[256];
    pid_t *pid = calloc((size_t)a->local_ranks, sizeof(pid_t));
    if (!pid || nt_launcher_tcp_secret_env(serr, sizeof(serr)) != NT_OK) {
        if (pid)
            fprintf(stderr, "nettune-tune-measure: %s\n", serr);
        free(pid);
        close(lf);
        return NT_EXIT_USAGE;
    }
    fflush(NULL);
    for (int r = 0; r < a->local_ranks; r++) {
        pid[r] = fork();
        if (pid[r] == 0) {
            if (r != 0)
                close(lf);
            nt_apply_launch(plan, launch);
            char v[32];
            snprintf(v, sizeof(v), "%d", r);
            setenv("NETTUNE_LOCAL_RANK", v, 1);
            if (a->separate_nodes) {
                snprintf(v, sizeof(v), "nettune-rank-%d", r);
                setenv("NCCL_HOSTID", v, 1);
                snprintf(v, sizeof(v), "%d", 1000 + r);
                setenv("NETTUNE_HOSTID", v, 1);
            }
            char err[256];
            nt_launcher_t *l =
                nt_launcher_tcp_create(r, a->local_ranks, "127.0.0.1", port, r == 0 ? lf : -1,
                                       a->o.timeout_s, err, sizeof(err));
            if (!l) {
                fprintf(stderr, "nettune-tune-measure: rank %d: %s\n", r, err);
                _exit(NT_EXIT_INCOMPLETE);
            }
            int rc = nt_do_rank(l, a, plan, "127.0.0.1", path);
            nt_launcher_tcp_destroy(l);
            fflush(NULL);
            _exit(rc);
        }
        if (pid[r] < 0) {
            perror("nettune-tune-measure: fork");
            for (int k = 0; k < r; k++)
                kill(pid[k], SIGTERM);
            break;
        }
    }
    close(lf);
    int worst = NT_EXIT_OK, left = a->local_ranks;
    double kill_at = 0; /* after a rank failed: when the others get SIGTERM */
    while (left > 0) {
        int status;
        pid_t p = waitpid(-1, &status, kill_at > 0 ? WNOHANG : 0);
        if (p == 0) { /* a rank failed: the others see its closed link at once and write what
                       * they have (rank 0 its partial result); those still there after the
                       * grace would wait for it until their --timeout */
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            if ((double)ts.tv_sec + ts.tv_nsec * 1e-9 > kill_at) {
                for (int k = 0; k < a->local_ranks; k++)
                    if (pid[k] > 0)
                        kill(pid[k], SIGTERM);
                kill_at = 0;
            } else {
                usleep(20000);
            }
            continue;
        }
        if (p < 0)
            break;
        left--;
        int rc = WIFEXITED(status) ? WEXITSTATUS(status) : NT_EXIT_INCOMPLETE;
        if (rc != NT_EXIT_OK && kill_at == 0) {
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            kill_at = (double)ts.tv_sec + ts.tv_nsec * 1e-9 + NT_LOCAL_GRACE_S;
        }
        for (int k = 0; k < a->local_ranks; k++)
            if (pid[k] == p)
                pid[k] = 0;
        if (rc == NT_EXIT_USAGE || (rc != NT_EXIT_OK && worst == NT_EXIT_OK))
            worst = rc;
    }
    free(pid);
    return worst;
}

/* Launches after the first: each one's document goes under "launches" of the first's. */
static int nt_merge_launch(const char *path, const char *part, const nt_measure_plan_t *plan, int k)
{
    cJSON *d = NULL, *p = NULL;
    if (nt_json_read_file(path, (size_t)1 << 30, &d) != NT_OK)
        return -1;
    if (nt_json_read_file(part, (size_t)1 << 30, &p) == NT_OK) {
        cJSON *arr = cJSON_GetObjectItemCaseSensitive(d, "launches");
        if (!arr)
            arr = cJSON_AddArrayToObject(d, "launches");
        cJSON *env = cJSON_CreateArray();
        for (size_t i = 0; i < plan->launch[k].nenv; i++)
            cJSON_AddItemToArray(env, cJSON_CreateString(plan->launch[k].env[i]));
        cJSON_DeleteItemFromObject(p, "schema");
        cJSON_AddItemToObject(p, "env", env);
        cJSON_AddItemToArray(arr, p);
    }
    unlink(part);
    int rc = nt_json_write_atomic(d, path) == NT_OK ? 0 : -1;
    cJSON_Delete(d);
    return rc;
}

int nt_measure_child_run(int argc, char **argv)
{
    nt_measure_fake_t fake;
    nt_measure_backend_t b;
    if (argc < 6) {
        fprintf(stderr, "nettune-tune-measure: --verify-child is started by --verify itself\n");
        return NT_EXIT_USAGE;
    }
    if (!nt_backend_make(argv[5], 0, &fake, &b))
        return NT_EXIT_USAGE;
    int rc = nt_measure_child_main(argc - 2, argv + 2, &b);
    nt_backend_free(&b);
    return rc;
}

int nt_measure_run(const nt_measure_params_t *p)
{
    nt_measure_plan_t plan;
    char err[512];
    memset(&plan, 0, sizeof(plan));
    if (p->plan_path && nt_measure_plan_read(p->plan_path, &plan, err, sizeof(err)) != NT_OK) {
        fprintf(stderr, "nettune-tune-measure: %s\n", err);
        return NT_EXIT_USAGE;
    }
    if (p->launch >= 0 && (size_t)p->launch >= (plan.nlaunches ? plan.nlaunches : 1)) {
        fprintf(stderr, "nettune-tune-measure: --launch %d: the plan lists %zu launches\n",
                p->launch, plan.nlaunches);
        nt_measure_plan_free(&plan);
        return NT_EXIT_USAGE;
    }
    int rc;
    if (p->local_ranks > 0) {
        if (nt_launcher_env_rank() >= 0)
            fprintf(stderr, "nettune-tune-measure: --local-ranks under a launcher: every "
                            "launched process forks its own ranks\n");
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        int first = p->launch >= 0 ? p->launch : 0;
        int last = p->launch >= 0 ? p->launch : (int)plan.nlaunches - 1;
        rc = nt_run_local(p, &plan, plan.nlaunches ? first : -1, p->output);
        for (int k = first + 1; k <= last && rc == NT_EXIT_OK; k++) {
            clock_gettime(CLOCK_MONOTONIC, &t1);
            double used = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
            if (p->o.budget_s > 0 && used > p->o.budget_s) {
                fprintf(stderr,
                        "nettune-tune-measure: --budget-seconds %.0f spent: launches "
                        "%d..%d not run\n",
                        p->o.budget_s, k, last);
                rc = NT_EXIT_INCOMPLETE;
                break;
            }
            char part[4096];
            snprintf(part, sizeof(part), "%s.launch%d", p->output, k);
            rc = nt_run_local(p, &plan, k, part);
            if (nt_merge_launch(p->output, part, &plan, k) != 0)
                rc = NT_EXIT_USAGE;
        }
    } else {
        int rank = nt_measure_env_int("OMPI_COMM_WORLD_RANK", "SLURM_PROCID");
        int size = nt_measure_env_int("OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS");
        nt_apply_launch(&plan, p->launch >= 0 ? p->launch : 0);
        nt_launcher_t *l;
        const char *addr = NULL;
        char host[256] = "";
        if (rank < 0 || size <= 1) {
            l = nt_launcher_local_create();
        } else {
            addr = getenv("NETTUNE_MEASURE_ADDR");
            /* host:port, the port a decimal in 1..65535 (%d sscanf of a longer one is UB: glibc
             * read "host:4294972296" as port 5000) */
            const char *colon = addr ? strrchr(addr, ':') : NULL;
            char *pend = NULL;
            long port =
                colon && isdigit((unsigned char)colon[1]) ? strtol(colon + 1, &pend, 10) : 0;
            if (colon && colon > addr && (size_t)(colon - addr) < sizeof(host))
                snprintf(host, sizeof(host), "%.*s", (int)(colon - addr), addr);
            if (!host[0] || !pend || *pend || port < 1 || port > 65535) {
                fprintf(stderr,
                        "nettune-tune-measure: rank %d of %d: set NETTUNE_MEASURE_ADDR="
                        "host:port to rank 0's host and a free port\n",
                        rank, size);
                nt_measure_plan_free(&plan);
                return NT_EXIT_USAGE;
            }
            l = nt_launcher_tcp_create(rank, size, host, (int)port, -1, p->o.timeout_s, err,
                                       sizeof(err));
            if (!l)
                fprintf(stderr, "nettune-tune-measure: rank %d: %s\n", rank, err);
        }
        rc = l ? nt_do_rank(l, p, &plan, addr ? host : "127.0.0.1", p->output) : NT_EXIT_INCOMPLETE;
        if (l && !strcmp(l->ops->name, "tcp"))
            nt_launcher_tcp_destroy(l);
        else
            nt_launcher_local_destroy(l);
    }
    nt_measure_plan_free(&plan);
    return rc;
}
