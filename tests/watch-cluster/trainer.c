/* ntc-trainer: an MPI "trainer" that writes NCCL Inspector's JSON records, for nettune watch's
 * scenarios on the namespace cluster (tests/watch-cluster/run.sh, docs/watch.md).
 *
 * Each step is a compute phase (a sleep) and then, on the tensor-parallel and the
 * data-parallel communicator of the rank (MPI_Comm_split), AllReduce, AllGather and
 * ReduceScatter of every size given. Every collective is timed with the host clock around the
 * call and recorded as Inspector records it: one JSON object a line, keys and order of NCCL
 * v2.30.7-1 plugins/profiler/inspector/inspector_json.cc:26-37 (header), :58-72 (metadata),
 * :204-229 (coll_perf), compact as its json.cc writes it (:265-437: no spaces, doubles "%lf"),
 * timing source "collective_cpu" (inspector.cc:326), algbw and busbw as
 * inspectorComputeOpBw (inspector.cc:1450-1492). Calls below 8,192 B are not recorded
 * (NCCL_INSPECTOR_DUMP_MIN_SIZE_BYTES, README line 89-90). A dump thread writes what completed
 * every --dump-ms into <dir>/<host>-pid<pid>.log (inspector.cc:652), and, as Inspector's, only
 * when there is something new: a rank blocked in a collective dumps nothing.
 *
 * The straggler: the rank named by --straggler (from step --straggler-from), or by the control
 * file (--control F, read every step: "straggler RANK [FACTOR]", "none"), sleeps FACTOR (1.5)
 * times longer. Each rank prints "trainer: rank R pid P step S straggler on|off at T" when that
 * changes for it (with its pid), T in microseconds of the host clock.
 *
 *   ntc-trainer --dir D [--seconds S] [--compute-ms C] [--tp T] [--sizes B,B,...]
 *               [--dump-ms M] [--straggler R [--straggler-from K]] [--control F]
 *
 * Layout: ranks r and r' are in the same tensor-parallel group when r / T == r' / T, in the
 * same data-parallel group when r % T == r' % T. */
#include <errno.h>
#include <getopt.h>
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define TR_MAX_SIZES 8
#define TR_MIN_BYTES 8192 /* Inspector's NCCL_INSPECTOR_DUMP_MIN_SIZE_BYTES default */

typedef struct {
    const char *dir, *control;
    double seconds;
    int compute_ms, tp, dump_ms, straggler, straggler_from;
    double factor;
    size_t sizes[TR_MAX_SIZES];
    int nsizes;
} tr_params_t;

/* One communicator as Inspector describes it (header). */
typedef struct {
    MPI_Comm comm;
    char id[24], name[16];
    int rank, nranks, nnodes;
    uint64_t sn;
} tr_comm_t;

/* One completed call, waiting for the dump thread. */
typedef struct {
    const tr_comm_t *c;
    const char *coll;
    uint64_t sn, bytes, exec_us;
    double algbw, busbw;
} tr_rec_t;

static struct {
    pthread_mutex_t mu;
    tr_rec_t *recs;
    size_t n, cap;
    FILE *fp;
    char host[256];
    long pid;
    int stop;
} tr_out = {.mu = PTHREAD_MUTEX_INITIALIZER};

static uint64_t tr_now_us(void)
{
    struct timeval tv; /* Inspector's inspectorGetTime (inspector.cc:98-105) */
    gettimeofday(&tv, NULL);
    return (uint64_t)tv.tv_sec * 1000000u + (uint64_t)tv.tv_usec;
}

static void tr_sleep_us(uint64_t us)
{
    struct timespec ts = {(time_t)(us / 1000000u), (long)(us % 1000000u) * 1000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* Writes every pending record, as inspectorCommInfoDumpColl does (v2.30.7-1
 * plugins/profiler/inspector/inspector_json.cc:281-323): header, metadata with the time it is
 * written (inspectorCommInfoMetaHeader takes inspectorGetTime() for each record, :64, called
 * at :314), coll_perf, then a newline. */
static void tr_dump(void)
{
    pthread_mutex_lock(&tr_out.mu);
    if (tr_out.n) {
        for (size_t i = 0; i < tr_out.n; i++) {
            const tr_rec_t *r = &tr_out.recs[i];
            uint64_t ts = tr_now_us();
            fprintf(tr_out.fp,
                    "{\"header\":{\"id\":\"%s\",\"comm_name\":\"%s\",\"rank\":%d,\"n_ranks\":%d,"
                    "\"nnodes\":%d},\"metadata\":{\"inspector_output_format_version\":\"v4.0\","
                    "\"git_rev\":\"\",\"rec_mechanism\":\"nccl_profiler_interface\","
                    "\"dump_timestamp_us\":%llu,\"hostname\":\"%s\",\"pid\":%ld},"
                    "\"coll_perf\":{\"coll\":\"%s\",\"coll_sn\":%llu,\"coll_msg_size_bytes\":%llu,"
                    "\"coll_exec_time_us\":%llu,\"coll_timing_source\":\"collective_cpu\","
                    "\"coll_algobw_gbs\":%lf,\"coll_busbw_gbs\":%lf}}\n",
                    r->c->id, r->c->name, r->c->rank, r->c->nranks, r->c->nnodes,
                    (unsigned long long)ts, tr_out.host, tr_out.pid, r->coll,
                    (unsigned long long)r->sn, (unsigned long long)r->bytes,
                    (unsigned long long)r->exec_us, r->algbw, r->busbw);
        }
        fflush(tr_out.fp);
        tr_out.n = 0;
    }
    pthread_mutex_unlock(&tr_out.mu);
}

static void *tr_dump_thread(void *arg)
{
    int ms = *(const int *)arg;
    for (;;) {
        tr_sleep_us((uint64_t)ms * 1000u);
        pthread_mutex_lock(&tr_out.mu);
        int stop = tr_out.stop;
        pthread_mutex_unlock(&tr_out.mu);
        if (stop)
            return NULL;
        tr_dump();
    }
}

static int tr_record(const tr_comm_t *c, const char *coll, uint64_t bytes, uint64_t exec_us)
{
    /* inspectorComputeOpBw (inspector.cc:1450-1492): AllReduce moves msg bytes with factor
     * 2(n-1)/n; AllGather and ReduceScatter move msg x n with (n-1)/n. */
    int n = c->nranks, ar = strcmp(coll, "AllReduce") == 0;
    double traffic = ar ? (double)bytes : (double)bytes * n;
    double factor = ar ? 2.0 * (n - 1) / n : (double)(n - 1) / n;
    double s = exec_us / 1e6;
    tr_rec_t r = {c, coll, c->sn, bytes, exec_us, s ? traffic / 1e9 / s : 0, 0};
    r.busbw = r.algbw * factor;
    if (bytes < TR_MIN_BYTES)
        return 0;
    pthread_mutex_lock(&tr_out.mu);
    if (tr_out.n == tr_out.cap) {
        size_t cap = tr_out.cap ? tr_out.cap * 2 : 256;
        tr_rec_t *t = realloc(tr_out.recs, cap * sizeof(*t));
        if (!t) {
            pthread_mutex_unlock(&tr_out.mu);
            return -1;
        }
        tr_out.recs = t;
        tr_out.cap = cap;
    }
    tr_out.recs[tr_out.n++] = r;
    pthread_mutex_unlock(&tr_out.mu);
    return 0;
}

/* Splits the world by `color` and describes the result: its id is the same on every member
 * (a hash of the kind, the color and a job nonce from rank 0), as NCCL's commHash is. */
static int tr_comm_create(const char *kind, int color, uint64_t nonce, tr_comm_t *c)
{
    int wr;
    MPI_Comm_rank(MPI_COMM_WORLD, &wr);
    if (MPI_Comm_split(MPI_COMM_WORLD, color, wr, &c->comm) != MPI_SUCCESS)
        return -1;
    MPI_Comm_rank(c->comm, &c->rank);
    MPI_Comm_size(c->comm, &c->nranks);
    uint64_t h = 1469598103934665603ull ^ nonce; /* FNV-1a */
    for (const char *p = kind; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ull;
    h = (h ^ (uint64_t)(color + 1)) * 1099511628211ull;
    snprintf(c->id, sizeof(c->id), "0x%llx", (unsigned long long)h);
    snprintf(c->name, sizeof(c->name), "%s%d", kind, color);
    /* nnodes: distinct host names among the members. */
    char host[MPI_MAX_PROCESSOR_NAME] = "";
    int len;
    MPI_Get_processor_name(host, &len);
    char *all = calloc((size_t)c->nranks, MPI_MAX_PROCESSOR_NAME);
    if (!all)
        return -1;
    MPI_Allgather(host, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
                  c->comm);
    c->nnodes = 0;
    for (int i = 0; i < c->nranks; i++) {
        int dup = 0;
        for (int j = 0; j < i && !dup; j++)
            dup = strcmp(all + (size_t)i * MPI_MAX_PROCESSOR_NAME,
                         all + (size_t)j * MPI_MAX_PROCESSOR_NAME) == 0;
        c->nnodes += !dup;
    }
    free(all);
    c->sn = 0;
    return 0;
}

/* The collectives of one step on one communicator; buffers hold max size x nranks bytes. */
static int tr_collectives(tr_comm_t *c, const tr_params_t *p, char *a, char *b)
{
    for (int i = 0; i < p->nsizes; i++) {
        size_t sz = p->sizes[i];
        int cnt = (int)(sz / sizeof(float));
        uint64_t t0 = tr_now_us();
        MPI_Allreduce(a, b, cnt, MPI_FLOAT, MPI_SUM, c->comm);
        uint64_t t1 = tr_now_us();
        if (tr_record(c, "AllReduce", sz, t1 - t0) < 0)
            return -1;
        c->sn++;
        t0 = tr_now_us();
        MPI_Allgather(a, cnt, MPI_FLOAT, b, cnt, MPI_FLOAT, c->comm);
        t1 = tr_now_us();
        if (tr_record(c, "AllGather", sz, t1 - t0) < 0)
            return -1;
        c->sn++;
        t0 = tr_now_us();
        MPI_Reduce_scatter_block(b, a, cnt, MPI_FLOAT, MPI_SUM, c->comm);
        t1 = tr_now_us();
        if (tr_record(c, "ReduceScatter", sz, t1 - t0) < 0)
            return -1;
        c->sn++;
    }
    /* Open MPI has no progress thread: a rank that leaves a call first and goes to sleep
     * (compute) would stall what its peers still need from it (a rendezvous transfer) until
     * its next MPI call, and their exec times would hold its compute time. A GPU's kernels
     * progress on their own; the barrier (not recorded) stands for that. */
    MPI_Barrier(c->comm);
    return 0;
}

/* The control file: "straggler RANK [FACTOR]" or "none"; absent = no change. */
static void tr_control_read(const char *path, int *straggler, double *factor)
{
    FILE *f = path ? fopen(path, "r") : NULL;
    if (!f)
        return;
    char word[32] = "";
    int r = -1;
    double fa = 1.5;
    int n = fscanf(f, "%31s %d %lf", word, &r, &fa);
    fclose(f);
    if (n >= 1 && strcmp(word, "none") == 0)
        *straggler = -1;
    else if (n >= 2 && strcmp(word, "straggler") == 0) {
        *straggler = r;
        *factor = n >= 3 && fa > 0 ? fa : 1.5;
    }
}

static int tr_sizes_parse(const char *s, tr_params_t *p)
{
    p->nsizes = 0;
    while (*s && p->nsizes < TR_MAX_SIZES) {
        char *end;
        unsigned long long v = strtoull(s, &end, 10);
        if (end == s || v < sizeof(float) || v % sizeof(float) || v > (64u << 20))
            return -1;
        p->sizes[p->nsizes++] = (size_t)v;
        s = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            return -1;
    }
    return p->nsizes ? 0 : -1;
}

static void tr_usage(void)
{
    fprintf(stderr, "usage: ntc-trainer --dir D [--seconds S] [--compute-ms C] [--tp T] "
                    "[--sizes B,...] [--dump-ms M] [--straggler R] [--straggler-from K] "
                    "[--control F]\n");
}

int main(int argc, char **argv)
{
    tr_params_t p = {.seconds = 10, .compute_ms = 100, .tp = 4, .dump_ms = 1000,
                     .straggler = -1, .straggler_from = 0, .factor = 1.5};
    /* Two sizes, both recorded (>= 8192 B), small enough that 8 ranks on 2 shared cores spend
     * their steps mostly computing rather than copying through veth. */
    p.sizes[0] = 16384;
    p.sizes[1] = 131072;
    p.nsizes = 2;
    static const struct option opts[] = {
        {"dir", required_argument, NULL, 'd'},        {"seconds", required_argument, NULL, 's'},
        {"compute-ms", required_argument, NULL, 'c'}, {"tp", required_argument, NULL, 't'},
        {"sizes", required_argument, NULL, 'z'},      {"dump-ms", required_argument, NULL, 'm'},
        {"straggler", required_argument, NULL, 'r'},  {"straggler-from", required_argument, NULL, 'k'},
        {"control", required_argument, NULL, 'f'},    {NULL, 0, NULL, 0}};
    int o, bad = 0;
    while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (o) {
        case 'd': p.dir = optarg; break;
        case 's': p.seconds = atof(optarg); break;
        case 'c': p.compute_ms = atoi(optarg); break;
        case 't': p.tp = atoi(optarg); break;
        case 'z': bad |= tr_sizes_parse(optarg, &p) < 0; break;
        case 'm': p.dump_ms = atoi(optarg); break;
        case 'r': p.straggler = atoi(optarg); break;
        case 'k': p.straggler_from = atoi(optarg); break;
        case 'f': p.control = optarg; break;
        default: bad = 1;
        }
    }
    /* The floors: steps of at least 100 ms, dumps at least 1 s apart. */
    if (bad || !p.dir || p.compute_ms < 100 || p.dump_ms < 1000 || p.tp < 1 || p.seconds <= 0) {
        tr_usage();
        fprintf(stderr, "ntc-trainer: --dir is needed, --compute-ms >= 100, --dump-ms >= 1000, "
                        "--tp >= 1, --sizes multiples of 4 up to 64 MiB\n");
        return 2;
    }
    MPI_Init(&argc, &argv);
    int wr, ws;
    MPI_Comm_rank(MPI_COMM_WORLD, &wr);
    MPI_Comm_size(MPI_COMM_WORLD, &ws);
    if (ws % p.tp) {
        if (wr == 0)
            fprintf(stderr, "ntc-trainer: %d ranks are not a multiple of --tp %d\n", ws, p.tp);
        MPI_Finalize();
        return 2;
    }
    unsigned long long nonce = (unsigned long long)tr_now_us() ^ ((unsigned long long)getpid() << 20);
    MPI_Bcast(&nonce, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    tr_comm_t tp, dp;
    if (tr_comm_create("tp", wr / p.tp, nonce, &tp) < 0 ||
        tr_comm_create("dp", wr % p.tp, nonce, &dp) < 0)
        MPI_Abort(MPI_COMM_WORLD, 1);
    gethostname(tr_out.host, sizeof(tr_out.host) - 1);
    tr_out.pid = (long)getpid();
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s-pid%ld.log", p.dir, tr_out.host, tr_out.pid);
    if (!(tr_out.fp = fopen(path, "w"))) {
        fprintf(stderr, "ntc-trainer: cannot create '%s': %s\n", path, strerror(errno));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    size_t maxsz = 0;
    for (int i = 0; i < p.nsizes; i++)
        maxsz = p.sizes[i] > maxsz ? p.sizes[i] : maxsz;
    size_t blen = maxsz * (size_t)(tp.nranks > dp.nranks ? tp.nranks : dp.nranks);
    char *a = calloc(blen, 1), *b = calloc(blen, 1);
    pthread_t th;
    if (!a || !b || pthread_create(&th, NULL, tr_dump_thread, &p.dump_ms) != 0)
        MPI_Abort(MPI_COMM_WORLD, 1);
    /* Every rank runs the same number of steps: rank 0's clock decides when to stop. */
    uint64_t start = tr_now_us();
    int straggling = 0;
    for (long step = 0;; step++) {
        int go = (double)(tr_now_us() - start) < p.seconds * 1e6;
        MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (!go)
            break;
        int who = step >= p.straggler_from ? p.straggler : -1;
        double factor = p.factor;
        tr_control_read(p.control, &who, &factor);
        int now = who == wr;
        if (now != straggling) {
            printf("trainer: rank %d pid %ld step %ld straggler %s at %llu\n", wr, tr_out.pid, step,
                   now ? "on" : "off", (unsigned long long)tr_now_us());
            fflush(stdout);
            straggling = now;
        }
        uint64_t compute = (uint64_t)p.compute_ms * 1000u;
        if (now)
            compute = (uint64_t)(compute * factor);
        /* Forward: half the compute, the tensor-parallel collectives; backward: the other half,
         * the data-parallel ones. */
        tr_sleep_us(compute / 2);
        if (tr_collectives(&tp, &p, a, b) < 0)
            MPI_Abort(MPI_COMM_WORLD, 1);
        tr_sleep_us(compute - compute / 2);
        if (tr_collectives(&dp, &p, a, b) < 0)
            MPI_Abort(MPI_COMM_WORLD, 1);
    }
    pthread_mutex_lock(&tr_out.mu);
    tr_out.stop = 1;
    pthread_mutex_unlock(&tr_out.mu);
    pthread_join(th, NULL);
    tr_dump(); /* the teardown dump */
    fclose(tr_out.fp);
    free(a);
    free(b);
    MPI_Comm_free(&tp.comm);
    MPI_Comm_free(&dp.comm);
    MPI_Finalize();
    return 0;
}
