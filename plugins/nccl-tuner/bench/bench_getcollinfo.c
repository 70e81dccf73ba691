/*
 * getCollInfo cost per call with 10, 100 and 1,000 rules: the built plugin (dlopen, API v5,
 * interval index) beside a linear first-match scan over the same rules (what NCCL's example
 * tuner does, without its per-rule logging), measured alternately in the same run; and API v6
 * per collective as NCCL 2.30.7 calls it: getCollInfo, then three getChunkSize calls
 * (src/enqueue.cc:724-738), with a measured chunk size on every Simple rule.
 * Usage: bench_getcollinfo PATH/libnccl-tuner-nettune.so
 * Both loops include the same 84-byte copy that resets the cost table before each call.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nccl_tuner_abi.h"
#include "nt_index.h"
#include "nt_tuning.h"

#define NQUERIES 4096
#define ROUNDS 7

static const float nccl_like[7][3] = {{14.1f, 22.3f, 31.0f}, {12.2f, 18.4f, 25.6f},
                                      {-1, -1, -1},          {-1, -1, -1},
                                      {-1, -1, 40.2f},       {-1, -1, -1},
                                      {-1, -1, -1}};

static uint64_t rng = 0x2545f4914f6cdd1dull;
static uint64_t rnd(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static const char *const colls[5] = {"broadcast", "reduce", "allgather", "reducescatter",
                                     "allreduce"};
static const char *const algos[2] = {"tree", "ring"};
static const char *const protos[3] = {"ll", "ll128", "simple"};

/* n rules, n/5 per collective, in ascending size bands up to 16 GiB; one in ten is for another
 * communicator shape (16 ranks) so the linear scan also has rules to skip by shape. */
static void write_rules(const char *path, int n) {
  FILE *f = fopen(path, "w");
  if (!f) {
    perror(path);
    exit(1);
  }
  fprintf(f, "{\"schema\": \"nettune.tuning/1\", \"rules\": [\n");
  int per = n / 5;
  for (int i = 0; i < n; i++) {
    int c = i / per, k = i % per;
    unsigned long long lo = k == 0 ? 0 : (unsigned long long)((double)(1ull << 34) * k / per) + 1;
    unsigned long long hi = (unsigned long long)((double)(1ull << 34) * (k + 1) / per);
    int p = (int)(rnd() % 3);
    fprintf(f, "%s{\"coll\": \"%s\", \"min_bytes\": %llu, \"max_bytes\": %llu, \"algo\": \"%s\", "
               "\"proto\": \"%s\"%s%s}\n",
            i ? "," : "", colls[c], lo, hi, algos[rnd() % 2], protos[p],
            rnd() % 10 == 0 ? ", \"nranks\": 16" : "",
            p == 2 ? ", \"chunk_bytes\": 131072, \"basis\": \"measured\"" : "");
  }
  fprintf(f, "]}\n");
  fclose(f);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s PLUGIN.so\n", argv[0]);
    return 2;
  }
  void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  const ncclTuner_v5_t *v5 = lib ? dlsym(lib, "ncclTunerPlugin_v5") : NULL;
  const ncclTuner_v6_t *v6 = lib ? dlsym(lib, "ncclTunerPlugin_v6") : NULL;
  if (!v5 || !v6) {
    fprintf(stderr, "cannot load %s: %s\n", argv[1], dlerror());
    return 1;
  }
  char path[] = "/tmp/nt-bench-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return 1;
  close(fd);
  setenv("NETTUNE_TUNING_FILE", path, 1);
  unsetenv("NETTUNE_PLUGIN_REPORT");

  static int qcoll[NQUERIES];
  static size_t qbytes[NQUERIES];
  for (int i = 0; i < NQUERIES; i++) {
    qcoll[i] = (int)(rnd() % 5);
    qbytes[i] = (size_t)(rnd() >> (30 + rnd() % 34)); /* log-spread, 0 .. 16 GiB */
  }
  printf("getCollInfo, %d calls per sample, %d alternating rounds (median):\n", NQUERIES, ROUNDS);
  printf("%6s %16s %16s %9s %18s\n", "rules", "plugin ns/call", "linear ns/call", "speedup",
         "v6 ns/collective");
  int sizes[3] = {10, 100, 1000};
  int status = 0;
  for (int s = 0; s < 3; s++) {
    int n = sizes[s];
    write_rules(path, n);
    nt_tuning_t t;
    char err[NT_ERR_LEN];
    if (nt_tuning_load(path, NT_FORMAT_JSON, &t, err, sizeof(err)) != NT_TP_OK) {
      fprintf(stderr, "bench file: %s\n", err);
      return 1;
    }
    void *ctx = NULL, *ctx6 = NULL;
    if (v5->init(&ctx, 1, 8, 1, NULL, NULL, NULL) != ncclSuccess ||
        v6->init(&ctx6, 1, 8, 1, NULL, NULL, NULL) != ncclSuccess)
      return 1;
    double tp[ROUNDS], tl[ROUNDS], t6[ROUNDS];
    volatile int sink = 0;
    float table[7][3];
    int reps = 50;
    for (int r = 0; r < ROUNDS; r++) {
      double t0 = now_ns();
      for (int rep = 0; rep < reps; rep++)
        for (int i = 0; i < NQUERIES; i++) {
          int nch = 0;
          memcpy(table, nccl_like, sizeof(table));
          v5->getCollInfo(ctx, qcoll[i], qbytes[i], 1, (float **)table, 7, 3, 0, &nch);
          sink += nch + (table[1][2] == 0.0f);
        }
      double t1 = now_ns();
      for (int rep = 0; rep < reps; rep++)
        for (int i = 0; i < NQUERIES; i++) {
          int nch = 0;
          memcpy(table, nccl_like, sizeof(table));
          nt_linear_decide(&t, 8, 1, qcoll[i], qbytes[i], 1, 0, &table[0][0], 7, 3, &nch);
          sink += nch + (table[1][2] == 0.0f);
        }
      double t2 = now_ns();
      for (int rep = 0; rep < reps; rep++)
        for (int i = 0; i < NQUERIES; i++) {
          int nch = 0;
          memcpy(table, nccl_like, sizeof(table));
          v6->getCollInfo(ctx6, qcoll[i], qbytes[i], 1, (float **)table, 7, 3, 0, &nch);
          for (int k = 1; k <= 3; k++) {
            size_t chunk = 524288;
            v6->getChunkSize(ctx6, qcoll[i], qbytes[i] / (8 * k), 1, 2, 1, &chunk);
            sink += (int)(chunk >> 17);
          }
          sink += nch + (table[1][2] == 0.0f);
        }
      double t3 = now_ns();
      tp[r] = (t1 - t0) / ((double)reps * NQUERIES);
      tl[r] = (t2 - t1) / ((double)reps * NQUERIES);
      t6[r] = (t3 - t2) / ((double)reps * NQUERIES);
    }
    /* Same answers from both, as a sanity check of what was timed. */
    for (int i = 0; i < NQUERIES; i++) {
      float a[7][3], b[7][3];
      int ca = 0, cb = 0;
      memcpy(a, nccl_like, sizeof(a));
      memcpy(b, nccl_like, sizeof(b));
      v5->getCollInfo(ctx, qcoll[i], qbytes[i], 1, (float **)a, 7, 3, 0, &ca);
      nt_linear_decide(&t, 8, 1, qcoll[i], qbytes[i], 1, 0, &b[0][0], 7, 3, &cb);
      if (memcmp(a, b, sizeof(a)) || ca != cb) {
        fprintf(stderr, "plugin and linear scan disagree on query %d\n", i);
        status = 1;
        break;
      }
    }
    for (int i = 1; i < ROUNDS; i++) /* insertion sort for the medians */
      for (int j = i; j > 0 && tp[j] < tp[j - 1]; j--) {
        double x = tp[j]; tp[j] = tp[j - 1]; tp[j - 1] = x;
      }
    for (int i = 1; i < ROUNDS; i++)
      for (int j = i; j > 0 && tl[j] < tl[j - 1]; j--) {
        double x = tl[j]; tl[j] = tl[j - 1]; tl[j - 1] = x;
      }
    for (int i = 1; i < ROUNDS; i++)
      for (int j = i; j > 0 && t6[j] < t6[j - 1]; j--) {
        double x = t6[j]; t6[j] = t6[j - 1]; t6[j - 1] = x;
      }
    double mp = tp[ROUNDS / 2], ml = tl[ROUNDS / 2];
    printf("%6d %16.1f %16.1f %8.1fx %18.1f\n", n, mp, ml, ml / mp, t6[ROUNDS / 2]);
    v5->finalize(ctx);
    v6->finalize(ctx6);
    nt_tuning_cleanup(&t);
    (void)sink;
  }
  unlink(path);
  dlclose(lib);
  return status;
}
