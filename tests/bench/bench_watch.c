/* make bench-watch: nettune watch at scale. Writes a generated job's NCCL Inspector logs, then
 * times in the same run (a) parsing every record with cJSON alone, line by line (what any
 * reader of the logs must do at least), and (b) nettune watch judging the folder, pinned to one
 * core; prints both rates in records per second, their ratio, and the watch's peak RSS.
 *
 * The job: RANKS ranks, 8 per node, for SECONDS seconds, one step every STEP_MS: an AllReduce of
 * 256 MiB over all ranks (the data-parallel ring) and an AllReduce of 32 MiB inside each node
 * (the tensor-parallel group). The ring timing model: a ring of n ranks moves 2 (n - 1) / n of
 * the message over each link, at the speed of its slowest link, plus 2 (n - 1) hops of latency
 * (nccl-tests' busbw definition, doc/PERFORMANCE.md); multiplicative noise of 3%, and each rank
 * arrives up to 200 us late, so the others wait that long inside the call. From half-time one
 * node's NIC runs at 40% of the others': the world ring slows down with it. Each rank dumps its
 * records every 10 s, the calls since its last dump sharing that dump's timestamp, as Inspector
 * does (v2.30.7-1 inspector.cc:652 file names; inspector_json.cc records).
 *
 * Usage: bench_watch NETTUNE_WATCH [DIR]  (DIR: where to write, a temporary folder by default).
 * Then the same folder with --follow for one poll (every rank's file kept open between polls)
 * and its peak RSS. Exit 1 when the watch is slower than a quarter of the cJSON parse alone,
 * when a peak RSS passes MAX_RSS_KIB, or when it does not find the onset on the world
 * communicator. */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#define RANKS 4096
#define PER_NODE 8
#define SECONDS 600
#define STEP_MS 2000
#define DUMP_S 10
#define SLOW_NODE 137      /* the node whose NIC slows down */
#define SLOW_FACTOR 0.40   /* its share of the others' bandwidth from half-time on */
#define LINK_GBPS 25.0     /* per rank, across the ring */
#define NODE_GBPS 150.0    /* inside a node (the tensor-parallel ring) */
#define HOP_US 5.0
#define MIN_RATIO 0.25
#define MAX_RSS_KIB (512 * 1024)

static uint64_t rng = 88172645463325252ull;

static double uniform(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (rng >> 11) * (1.0 / 9007199254740992.0);
}

static double gauss(void)
{
    double u = uniform(), v = uniform();
    return sqrt(-2 * log(u + 1e-300)) * cos(2 * M_PI * v);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* Ring AllReduce time of `bytes` over n ranks whose slowest link gives `gbps`. */
static double ring_us(double bytes, int n, double gbps)
{
    return 2.0 * (n - 1) / n * bytes / (gbps * 1e3) + 2.0 * (n - 1) * HOP_US;
}

static void record(FILE *f, const char *comm, const char *name, int rank, int nranks, int nnodes,
                   const char *host, int pid, long sn, double bytes, double us, double ts)
{
    double algbw = bytes / us / 1e3, busbw = algbw * 2 * (nranks - 1) / nranks;
    fprintf(f,
            "{\"header\":{\"id\":\"%s\",\"comm_name\":\"%s\",\"rank\":%d,\"n_ranks\":%d,"
            "\"nnodes\":%d},\"metadata\":{\"inspector_output_format_version\":\"v4.0\","
            "\"git_rev\":\"\",\"rec_mechanism\":\"nccl_profiler_interface\","
            "\"dump_timestamp_us\":%.0f,\"hostname\":\"%s\",\"pid\":%d},\"coll_perf\":{\"coll\":"
            "\"AllReduce\",\"coll_sn\":%ld,\"coll_msg_size_bytes\":%.0f,\"coll_exec_time_us\":%.0f,"
            "\"coll_timing_source\":\"kernel_gpu\",\"coll_algobw_gbs\":%.6f,\"coll_busbw_gbs\":%.6f}}\n",
            comm, name, rank, nranks, nnodes, ts, host, pid, sn, bytes, us, algbw, busbw);
}

/* Writes the job; returns the number of records. */
static long generate(const char *dir)
{
    enum { NODES = RANKS / PER_NODE, STEPS = SECONDS * 1000 / STEP_MS };
    static FILE *files[RANKS];
    static double late[RANKS];
    long n = 0;
    for (int r = 0; r < RANKS; r++) {
        char path[4096];
        snprintf(path, sizeof(path), "%s/node%04d-pid%d.log", dir, r / PER_NODE, 10000 + r);
        if (!(files[r] = fopen(path, "w"))) {
            fprintf(stderr, "bench_watch: cannot write '%s': %s\n", path, strerror(errno));
            exit(2);
        }
    }
    double t0_us = 1.7e15;
    for (int step = 0; step < STEPS; step++) {
        double t_us = t0_us + (double)step * STEP_MS * 1e3;
        double dump_us = t0_us + ceil((double)(step + 1) * STEP_MS / 1e3 / DUMP_S) * DUMP_S * 1e6;
        int slow = step >= STEPS / 2;
        /* the world ring: every rank waits for the last to arrive */
        double base = ring_us(256.0 * (1 << 20), RANKS, LINK_GBPS * (slow ? SLOW_FACTOR : 1.0)) *
                      (1 + 0.03 * gauss());
        double latest = 0;
        for (int r = 0; r < RANKS; r++) {
            late[r] = 200 * uniform();
            latest = fmax(latest, late[r]);
        }
        for (int r = 0; r < RANKS; r++) {
            char host[32];
            snprintf(host, sizeof(host), "node%04d", r / PER_NODE);
            record(files[r], "0x77000000000001", "DP world", r, RANKS, NODES, host, 10000 + r,
                   2 * step + 1, 256.0 * (1 << 20), base + latest - late[r], dump_us);
            n++;
        }
        /* each node's tensor-parallel ring */
        for (int nd = 0; nd < NODES; nd++) {
            char comm[32], host[32], name[32];
            double tp = ring_us(32.0 * (1 << 20), PER_NODE, NODE_GBPS) * (1 + 0.03 * gauss());
            snprintf(comm, sizeof(comm), "0x7800000000%04x", nd);
            snprintf(host, sizeof(host), "node%04d", nd);
            snprintf(name, sizeof(name), "TP node %d", nd);
            for (int k = 0; k < PER_NODE; k++) {
                int r = nd * PER_NODE + k;
                record(files[r], comm, name, k, PER_NODE, 1, host, 10000 + r, step + 1,
                       32.0 * (1 << 20), tp * (1 + 0.01 * uniform()), dump_us);
                n++;
            }
        }
        (void)t_us;
    }
    for (int r = 0; r < RANKS; r++)
        fclose(files[r]);
    return n;
}

/* Parses every line of every file of dir with cJSON; returns the records parsed. */
static long parse_all(const char *dir)
{
    long n = 0;
    char *line = NULL;
    size_t cap = 0;
    for (int r = 0; r < RANKS; r++) {
        char path[4096];
        snprintf(path, sizeof(path), "%s/node%04d-pid%d.log", dir, r / PER_NODE, 10000 + r);
        FILE *f = fopen(path, "r");
        if (!f) {
            fprintf(stderr, "bench_watch: cannot read '%s': %s\n", path, strerror(errno));
            exit(2);
        }
        while (getline(&line, &cap, f) > 0) {
            cJSON *j = cJSON_Parse(line);
            if (!j) {
                fprintf(stderr, "bench_watch: '%s' holds a line that is not JSON\n", path);
                exit(2);
            }
            cJSON_Delete(j);
            n++;
        }
        fclose(f);
    }
    free(line);
    return n;
}

/* Runs nettune watch on dir into out (with follow: --follow --polls 1, every file kept open
 * between polls) and waits; returns its peak RSS in KiB, -1 when it could not run or exited
 * above 1. */
static long run_watch(const char *bin, const char *dir, const char *out, int follow)
{
    pid_t pid = fork();
    if (pid == 0) {
        if (follow)
            execl(bin, bin, dir, "--follow", "--polls", "1", "-q", "-o", out, (char *)NULL);
        else
            execl(bin, bin, dir, "-q", "-o", out, (char *)NULL);
        fprintf(stderr, "bench_watch: cannot run '%s': %s\n", bin, strerror(errno));
        _exit(127);
    }
    int status;
    struct rusage ru;
    if (pid < 0 || wait4(pid, &status, 0, &ru) != pid) {
        fprintf(stderr, "bench_watch: cannot run '%s'\n", bin);
        return -1;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) > 1) {
        fprintf(stderr, "bench_watch: nettune watch%s exited %d\n", follow ? " --follow" : "",
                WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        return -1;
    }
    return ru.ru_maxrss;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_watch NETTUNE_WATCH [DIR]\n");
        return 2;
    }
    char tmpl[] = "/tmp/nettune-bench-watch.XXXXXX";
    const char *dir = argc > 2 ? argv[2] : mkdtemp(tmpl);
    if (!dir || (argc > 2 && mkdir(dir, 0700) != 0 && errno != EEXIST)) {
        fprintf(stderr, "bench_watch: cannot make a folder: %s\n", strerror(errno));
        return 2;
    }
    /* One core for both, as the judgement is to run. */
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(0, &one);
    sched_setaffinity(0, sizeof(one), &one);

    double g0 = now();
    long records = generate(dir);
    double g1 = now();
    long parsed = parse_all(dir);
    double p1 = now();
    char out[4200];
    snprintf(out, sizeof(out), "%s.watch.json", dir); /* beside it: the folder is the input */
    double w0 = now();
    long rss = run_watch(argv[1], dir, out, 0);
    double w1 = now();
    int rc = rss < 0;
    /* --follow keeps every rank's file open between polls: one poll over the same folder. */
    char out2[4200];
    snprintf(out2, sizeof(out2), "%s.watch-follow.json", dir);
    double f0 = now();
    long frss = run_watch(argv[1], dir, out2, 1);
    double f1 = now();
    rc |= frss < 0;
    /* The judgement must hold the onset of the world ring's drop: the bench times real work. */
    FILE *f = fopen(out, "r");
    char *text = NULL;
    size_t len = 0;
    if (f) {
        fseek(f, 0, SEEK_END);
        len = (size_t)ftell(f);
        rewind(f);
        text = malloc(len + 1);
        if (text && fread(text, 1, len, f) == len)
            text[len] = '\0';
        fclose(f);
    }
    cJSON *doc = text ? cJSON_Parse(text) : NULL;
    const cJSON *it;
    int onset = 0, ncomms = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "communicators"));
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive(doc, "findings")) {
        const cJSON *code = cJSON_GetObjectItemCaseSensitive(it, "code");
        const cJSON *comm = cJSON_GetObjectItemCaseSensitive(it, "comm_id");
        onset |= cJSON_IsString(code) && strcmp(code->valuestring, "NT-JOB-204") == 0 &&
                 cJSON_IsString(comm) && strcmp(comm->valuestring, "0x77000000000001") == 0;
    }
    double parse_rate = parsed / (p1 - g1), watch_rate = records / (w1 - w0);
    double ratio = watch_rate / parse_rate;
    printf("bench-watch: %d ranks, %d s, %ld records in %d communicators (generated in %.1f s)\n",
           RANKS, SECONDS, records, ncomms, g1 - g0);
    printf("bench-watch: cJSON parse alone %.0f records/s (%.1f s), nettune watch %.0f records/s "
           "(%.1f s): ratio %.2f (limit %.2f); watch peak RSS %.0f MiB (limit %d MiB); onset on "
           "the world ring %s\n",
           parse_rate, p1 - g1, watch_rate, w1 - w0, ratio, MIN_RATIO, rss / 1024.0,
           MAX_RSS_KIB / 1024, onset ? "found" : "NOT FOUND");
    printf("bench-watch: --follow, one poll (every file kept open): %.1f s, peak RSS %.0f MiB "
           "(limit %d MiB)\n",
           f1 - f0, frss / 1024.0, MAX_RSS_KIB / 1024);
    if (ratio < MIN_RATIO || rss > MAX_RSS_KIB || frss > MAX_RSS_KIB || !onset ||
        parsed != records)
        rc = 1;
    cJSON_Delete(doc);
    free(text);
    unlink(out);
    unlink(out2);
    if (argc <= 2) {
        char cmd[4200];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        if (system(cmd) != 0)
            fprintf(stderr, "bench_watch: could not remove '%s'\n", dir);
    }
    return rc;
}
