/* The Inspector readers and the alignment of records across ranks (include/nettune/jobrec.h), on
 * the verbatim records of NCCL's Inspector README (tests/fixtures/inspector/) and on generated
 * files: compact lines as the plugin writes them, a half-written last line, a record longer than
 * a line-reader line. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <cjson/cJSON.h>

#include "nettune/jobrec.h"
#include "nettune/logline.h"
#include "nettune/nccltests.h"

#define FIX "tests/fixtures/inspector/"

static void test_readme_record(void **state)
{
    (void)state;
    nt_jobreader_t *r = nt_jobreader_open(FIX "readme-v2.30.7-record.json");
    assert_non_null(r);
    nt_jobrec_t rec;
    assert_int_equal(nt_jobreader_next(r, &rec), 1);
    assert_int_equal(nt_jobreader_format(r), NT_JOBFMT_INSPECTOR_JSON);
    assert_int_equal(rec.kind, NT_JOBREC_COLL);
    assert_string_equal(rec.comm_id, "0x7f8c496ae9f661");
    assert_string_equal(rec.comm_name, ""); /* before 2.30.3: no comm_name */
    assert_int_equal(rec.rank, 2);
    assert_int_equal(rec.nranks, 8);
    assert_int_equal(rec.nnodes, 1);
    assert_string_equal(rec.host, "example-hostname");
    assert_int_equal(rec.pid, 1639453);
    assert_string_equal(rec.op, "AllReduce");
    assert_true(rec.has_seq);
    assert_int_equal(rec.seq, 1407);
    assert_true(rec.bytes == 17179869184.0);
    assert_true(rec.exec_us == 61974.0);
    assert_int_equal(rec.timing, NT_TIMING_UNKNOWN);
    assert_true(fabs(rec.algbw_GBps - 277.210914) < 1e-9);
    assert_true(fabs(rec.busbw_GBps - 485.119099) < 1e-9);
    assert_true(rec.dump_ts_us == 1748030377748202.0);
    assert_true(isnan(rec.start_ts_us));
    assert_int_equal(nt_jobreader_next(r, &rec), 0);
    assert_int_equal(nt_jobreader_records(r), 1);
    assert_int_equal(nt_jobreader_skipped(r), 0);
    assert_int_equal(nt_jobreader_partial(r), 0);
    nt_jobreader_close(r);
}

static void test_readme_verbose(void **state)
{
    (void)state;
    nt_jobreader_t *r = nt_jobreader_open(FIX "readme-v2.30.7-verbose.json");
    assert_non_null(r);
    nt_jobrec_t rec;
    assert_int_equal(nt_jobreader_next(r, &rec), 1);
    assert_string_equal(rec.op, "ReduceScatter");
    assert_int_equal(rec.seq, 1231);
    assert_int_equal(rec.rank, 4);
    assert_int_equal(rec.timing, NT_TIMING_KERNEL_GPU);
    assert_string_equal(nt_timing_name(rec.timing), "kernel_gpu");
    assert_true(rec.exec_us == 41057.0);
    assert_true(rec.start_ts_us == 1752867229235059.0);
    assert_true(rec.stop_ts_us == 1752867229235064.0);
    assert_int_equal(rec.nchannels, 1);
    assert_int_equal(nt_jobreader_next(r, &rec), 0);
    nt_jobreader_close(r);
}

static void test_readme_prom(void **state)
{
    (void)state;
    nt_jobreader_t *r = nt_jobreader_open(FIX "readme-v2.30.7-metrics.prom");
    assert_non_null(r);
    nt_jobrec_t rec;
    assert_int_equal(nt_jobreader_next(r, &rec), 1);
    assert_int_equal(nt_jobreader_format(r), NT_JOBFMT_INSPECTOR_PROM);
    assert_int_equal(rec.kind, NT_JOBREC_AGG);
    assert_string_equal(rec.host, "nvl72004-T01");
    assert_string_equal(rec.gpu, "GPU0");
    assert_string_equal(rec.comm_name, "DP Group 0");
    assert_string_equal(rec.op, "AllReduce");
    assert_string_equal(rec.size_range, "4-5GB");
    assert_int_equal(rec.nranks, 4);
    assert_int_equal(rec.rank, -1); /* no rank in a Prometheus line */
    assert_false(rec.has_seq);
    assert_true(fabs(rec.busbw_GBps - 678.263) < 1e-9);
    assert_int_equal(nt_jobreader_next(r, &rec), 1);
    assert_true(fabs(rec.exec_us - 9498.47) < 1e-9);
    assert_int_equal(nt_jobreader_next(r, &rec), 1);
    assert_string_equal(rec.op, "Send");
    assert_true(fabs(rec.busbw_GBps - 464.9) < 1e-9);
    assert_int_equal(nt_jobreader_next(r, &rec), 1);
    assert_true(fabs(rec.exec_us - 1154.87) < 1e-9);
    assert_int_equal(nt_jobreader_next(r, &rec), 0);
    assert_int_equal(nt_jobreader_skipped(r), 0);
    nt_jobreader_close(r);
}

/* One compact record as inspector_json.cc writes it (2.30.3 on: comm_name in the header). */
static void put_rec(FILE *f, const char *id, int rank, int nranks, uint64_t sn, double us,
                    int channels)
{
    fprintf(f,
            "{\"header\":{\"id\":\"%s\",\"comm_name\":\"DP\",\"rank\":%d,\"n_ranks\":%d,"
            "\"nnodes\":2},\"metadata\":{\"inspector_output_format_version\":\"v4.0\","
            "\"git_rev\":\"\",\"rec_mechanism\":\"nccl_profiler_interface\","
            "\"dump_timestamp_us\":%llu,\"hostname\":\"node%d\",\"pid\":%d},\"coll_perf\":{"
            "\"coll\":\"AllReduce\",\"coll_sn\":%llu,\"coll_msg_size_bytes\":1048576,"
            "\"coll_exec_time_us\":%.0f,\"coll_timing_source\":\"collective_cpu\","
            "\"coll_algobw_gbs\":%f,\"coll_busbw_gbs\":%f",
            id, rank, nranks, 1000000ULL + sn, rank / 2, 100 + rank, (unsigned long long)sn, us,
            1048576 / us / 1e3, 1048576 / us / 1e3 * 2 * (nranks - 1) / nranks);
    if (channels) {
        fprintf(f, ",\"event_trace_ts\":{\"coll_start_ts\":1,\"coll_stop_ts\":2,\"kernel_events\":[");
        for (int c = 0; c < channels; c++)
            fprintf(f, "%s{\"channel_id\":%d,\"kernel_start_ts\":1752867229235181,"
                       "\"kernel_stop_ts\":1752867229275811,\"kernel_record_ts\":1752867229275811}",
                    c ? "," : "", c);
        fprintf(f, "]}");
    }
    fprintf(f, "}}\n");
}

static char *tmpfile_path(void)
{
    char *p = strdup("/tmp/nt-jobrec-XXXXXX");
    int fd = mkstemp(p);
    assert_true(fd >= 0);
    close(fd);
    return p;
}

static void test_half_written_and_long(void **state)
{
    (void)state;
    char *p = tmpfile_path();
    FILE *f = fopen(p, "w");
    put_rec(f, "0xabc", 0, 4, 1, 500, 0);
    put_rec(f, "0xabc", 0, 4, 2, 510, 64); /* 64 channels: longer than NT_LINE_MAX */
    fprintf(f, "{\"header\":{\"id\":\"0xabc\",\"rank\":0,\"n_ra"); /* the writer is mid-line */
    fclose(f);
    nt_jobreader_t *r = nt_jobreader_open(p);
    nt_jobrec_t rec;
    assert_int_equal(nt_jobreader_next(r, &rec), 1);
    assert_int_equal(rec.seq, 1);
    assert_int_equal(rec.timing, NT_TIMING_COLLECTIVE_CPU);
    assert_string_equal(rec.comm_name, "DP");
    assert_int_equal(nt_jobreader_next(r, &rec), 1);
    assert_int_equal(rec.seq, 2);
    assert_int_equal(rec.nchannels, 64);
    assert_int_equal(nt_jobreader_next(r, &rec), 0);
    assert_int_equal(nt_jobreader_partial(r), 1);
    assert_int_equal(nt_jobreader_skipped(r), 0);
    nt_jobreader_close(r);
    unlink(p);
    free(p);
}

/* A record torn mid-file (a line cut short, then the next record at column 0) is counted as
 * skipped, and every record after it is read: before, it swallowed the rest of the file, and
 * the rank looked stopped at that call (a false hang, and a drain with --drain). */
static void test_torn_record_mid_file(void **state)
{
    (void)state;
    char *p = tmpfile_path();
    FILE *f = fopen(p, "w");
    put_rec(f, "0xabc", 0, 4, 1, 500, 0);
    fprintf(f, "{\"header\":{\"id\":\n");
    put_rec(f, "0xabc", 0, 4, 3, 500, 0);
    put_rec(f, "0xabc", 0, 4, 4, 510, 64); /* longer than NT_LINE_MAX: read in pieces */
    put_rec(f, "0xabc", 0, 4, 5, 500, 0);
    fclose(f);
    nt_jobreader_t *r = nt_jobreader_open(p);
    nt_jobrec_t rec;
    unsigned long seqs[8];
    int n = 0;
    while (n < 8 && nt_jobreader_next(r, &rec) == 1)
        seqs[n++] = (unsigned long)rec.seq;
    assert_int_equal(n, 4);
    assert_int_equal(seqs[0], 1);
    assert_int_equal(seqs[1], 3);
    assert_int_equal(seqs[2], 4);
    assert_int_equal(seqs[3], 5);
    assert_int_equal(nt_jobreader_skipped(r), 1);
    assert_int_equal(nt_jobreader_partial(r), 0);
    nt_jobreader_close(r);
    unlink(p);
    free(p);
}

/* A line of no JSON between records (a message written into the dump file) is counted as
 * skipped, with its line number: before, it was passed over without a count. The records
 * around it are read, and the half-written last line is still partial, not skipped. */
static void test_garbage_line_mid_file(void **state)
{
    (void)state;
    char *p = tmpfile_path();
    FILE *f = fopen(p, "w");
    put_rec(f, "0xabc", 0, 4, 1, 500, 0);
    fprintf(f, "\n");                                   /* blank: not counted */
    fprintf(f, "Segmentation fault (core dumped)\n"); /* line 3 */
    put_rec(f, "0xabc", 0, 4, 2, 500, 0);
    fprintf(f, "  ]\n");                                /* line 5 */
    put_rec(f, "0xabc", 0, 4, 3, 500, 0);
    fprintf(f, "{\"header\":{\"id\":\"0xabc\",\"rank\":0,\"n_ra"); /* the writer is mid-line */
    fclose(f);
    nt_jobreader_t *r = nt_jobreader_open(p);
    nt_jobrec_t rec;
    int n = 0;
    while (nt_jobreader_next(r, &rec) == 1)
        assert_int_equal(rec.seq, (uint64_t)++n);
    assert_int_equal(n, 3);
    assert_int_equal(nt_jobreader_skipped(r), 2);
    assert_int_equal(nt_jobreader_first_bad_line(r), 3);
    assert_int_equal(nt_jobreader_partial(r), 1);
    nt_jobreader_close(r);
    unlink(p);
    free(p);
}

/* Follow mode: a record cut at the end of the file is held, and completed by what the writer
 * appends later; its bytes are not changed by the cut (no newline inserted). */
static void test_follow_completes_cut_record(void **state)
{
    (void)state;
    char *p = tmpfile_path();
    char line[2048];
    FILE *m = fmemopen(line, sizeof(line), "w");
    put_rec(m, "0xf0", 3, 4, 9, 250, 0);
    fclose(m);
    size_t half = strlen(line) / 2;
    FILE *f = fopen(p, "w");
    put_rec(f, "0xf0", 3, 4, 8, 250, 0);
    fwrite(line, 1, half, f);
    fclose(f);
    nt_jobreader_t *r = nt_jobreader_open(p);
    nt_jobreader_follow(r, 1);
    nt_jobrec_t rec;
    assert_int_equal(nt_jobreader_next(r, &rec), 1);
    assert_int_equal(rec.seq, 8);
    assert_int_equal(nt_jobreader_next(r, &rec), 0);
    assert_int_equal(nt_jobreader_pending(r), 1);
    assert_int_equal(nt_jobreader_next(r, &rec), 0); /* nothing new yet */
    f = fopen(p, "a");
    fputs(line + half, f);
    fclose(f);
    assert_int_equal(nt_jobreader_next(r, &rec), 1);
    assert_int_equal(rec.seq, 9);
    assert_string_equal(rec.host, "node1");
    assert_int_equal(nt_jobreader_pending(r), 0);
    assert_int_equal(nt_jobreader_skipped(r), 0);
    assert_int_equal(nt_jobreader_partial(r), 0);
    nt_jobreader_close(r);
    unlink(p);
    free(p);
}

/* A followed reader reads in 8 KiB blocks (thousands of files stay open): records that span
 * several blocks, a verbose one of 128 channels (about 17 KB) among them, come out the same as
 * with the default 64 KiB block, and the block cannot change once reading started. */
static void test_follow_small_block_same_records(void **state)
{
    (void)state;
    char *p = tmpfile_path();
    FILE *f = fopen(p, "w");
    for (int k = 1; k <= 300; k++)
        put_rec(f, "0xb1", k % 4, 4, (uint64_t)k, 200 + k, k == 150 ? 128 : 0);
    fclose(f);
    uint64_t sum[2] = {0, 0};
    int got[2] = {0, 0};
    for (int follow = 0; follow < 2; follow++) {
        nt_jobreader_t *r = nt_jobreader_open(p);
        nt_jobreader_follow(r, follow);
        nt_jobrec_t rec;
        while (nt_jobreader_next(r, &rec) == 1) {
            got[follow]++;
            sum[follow] += rec.seq * 1000 + (uint64_t)rec.exec_us;
        }
        assert_int_equal(nt_jobreader_skipped(r), 0);
        assert_int_equal(nt_jobreader_partial(r), 0);
        nt_jobreader_close(r);
    }
    assert_int_equal(got[0], 300);
    assert_int_equal(got[1], 300);
    assert_true(sum[0] == sum[1]);

    nt_linereader_t *lr = nt_linereader_open(p);
    const char *line;
    size_t len;
    assert_int_equal(nt_linereader_set_block(lr, 512), -1);   /* under 1 KiB */
    assert_int_equal(nt_linereader_set_block(lr, 4096), 0);
    assert_int_equal(nt_linereader_next(lr, &line, &len), 1);
    assert_int_equal(nt_linereader_set_block(lr, 8192), -1);  /* reading started */
    nt_linereader_close(lr);
    unlink(p);
    free(p);
}

static void test_bad_records_counted(void **state)
{
    (void)state;
    char *p = tmpfile_path();
    FILE *f = fopen(p, "w");
    put_rec(f, "0xabc", 1, 4, 7, 500, 0);
    fprintf(f, "{\"header\":{\"id\":\"0xabc\",\"rank\":9,\"n_ranks\":4},\"coll_perf\":"
               "{\"coll\":\"AllReduce\",\"coll_sn\":1}}\n"); /* rank out of range */
    fprintf(f, "{\"header\":{\"id\":\"0xabc\",\"rank\":1},\"coll_perf\":{\"coll\":\"x\"}}\n");
    put_rec(f, "0xabc", 1, 4, 8, 500, 0);
    fclose(f);
    nt_jobreader_t *r = nt_jobreader_open(p);
    nt_jobrec_t rec;
    assert_int_equal(nt_jobreader_next(r, &rec), 1);
    assert_int_equal(nt_jobreader_next(r, &rec), 1);
    assert_int_equal(rec.seq, 8);
    assert_int_equal(nt_jobreader_next(r, &rec), 0);
    assert_int_equal(nt_jobreader_skipped(r), 2);
    assert_int_equal(nt_jobreader_first_bad_line(r), 2);
    nt_jobreader_close(r);
    unlink(p);
    free(p);
}

static void test_sniff(void **state)
{
    (void)state;
    assert_int_equal(nt_jobfmt_sniff("  {\"header\""), NT_JOBFMT_INSPECTOR_JSON);
    assert_int_equal(nt_jobfmt_sniff("nccl_bus_bandwidth_gbs{"), NT_JOBFMT_INSPECTOR_PROM);
    assert_int_equal(nt_jobfmt_sniff("# HELP nccl_bus_bandwidth_gbs x"), NT_JOBFMT_INSPECTOR_PROM);
    assert_int_equal(nt_jobfmt_sniff("NCCL INFO Bootstrap"), NT_JOBFMT_UNKNOWN);
}

static nt_jobrec_t mk(const char *id, int rank, int nranks, uint64_t seq, double us)
{
    nt_jobrec_t r;
    char line[2048];
    FILE *f = fmemopen(line, sizeof(line), "w");
    put_rec(f, id, rank, nranks, seq, us, 0);
    fclose(f);
    assert_int_equal(nt_inspector_parse(line, strlen(line), &r), 0);
    return r;
}

static void test_align(void **state)
{
    (void)state;
    nt_jobalign_t *a = nt_jobalign_create(4, 1024);
    /* Comm A: 3 ranks, calls 1..6; rank 2 the fastest; the window keeps calls 3..6. */
    for (uint64_t s = 1; s <= 6; s++)
        for (int r = 0; r < 3; r++) {
            nt_jobrec_t rec = mk("0xa", r, 3, s, r == 2 ? 100 : 300 + r);
            rec.dump_ts_us = 1e6 + (double)s * 1e5; /* one dump a call, 0.1 s apart */
            /* rank 1 read while followed from call 3 on, 2 s on the reader's clock after its
             * writer's, plus a read delay of 0.1 s that falls to 0.02 s at call 5 */
            if (r == 1 && s >= 3)
                rec.seen_us = rec.dump_ts_us + 2e6 + (s == 5 ? 0.02e6 : 0.1e6);
            assert_int_equal(nt_jobalign_add(a, &rec), 0);
        }
    nt_jobrec_t old = mk("0xa", 0, 3, 2, 1); /* older than the window */
    assert_int_equal(nt_jobalign_add(a, &old), 1);
    nt_jobrec_t dup = mk("0xa", 0, 3, 6, 1);
    assert_int_equal(nt_jobalign_add(a, &dup), 1);
    nt_jobrec_t other = mk("0xa", 0, 5, 7, 1); /* another size under the same id */
    assert_int_equal(nt_jobalign_add(a, &other), 1);
    nt_jobrec_t b = mk("0xb", 1, 2, 42, 50);
    assert_int_equal(nt_jobalign_add(a, &b), 0);
    assert_int_equal(nt_jobalign_ncomms(a), 2);
    assert_int_equal(nt_jobalign_rejected(a), 3);
    const nt_jobcomm_t *c = nt_jobalign_comm(a, 0);
    assert_string_equal(c->id, "0xa");
    assert_int_equal(c->nranks, 3);
    assert_int_equal(c->max_seq, 6);
    assert_int_equal(c->stale, 1);
    assert_int_equal(c->duplicate, 1);
    assert_int_equal(c->cpu_timed, 18);
    assert_null(nt_jobcomm_call(c, 2));
    const nt_jobcall_t *k = nt_jobcomm_call(c, 5);
    assert_non_null(k);
    assert_int_equal(k->nseen, 3);
    double mn, mx;
    int arg;
    assert_int_equal(nt_jobcall_spread(c, k, &mn, &mx, &arg), 3);
    assert_true(mn == 100 && mx == 301);
    assert_int_equal(arg, 2);
    /* busbw of ranks 1, 0, 2 (301, 300, 100 us) in ascending order: the median is rank 0's. */
    assert_true(fabs(nt_jobcall_median_busbw(c, k) - 1048576 / 300.0 / 1e3 * 4 / 3) < 1e-5);
    assert_string_equal(c->ranks[1].host, "node0");
    /* the least of (read - dumped): the clocks' difference and the shortest read delay */
    assert_true(fabs(c->ranks[1].ahead_us - 2.02e6) < 1e-3);
    assert_true(isnan(c->ranks[0].ahead_us));
    /* Comm C, one rank read while followed: 1.0 s ahead (two records of one read), then its
     * writer's clock steps back 2 s: reads 3.1, 3.0, 3.05 s ahead; the estimate stays at 1.0
     * for two reads and moves to 3.0 at the third; a read nearer again (2.5) takes it at once. */
    const double step[][2] = {{10e6, 1.0e6}, {10e6, 1.0e6}, {11e6, 3.1e6}, {12e6, 3.0e6},
                              {12e6, 3.0e6}, {13e6, 3.05e6}, {14e6, 2.5e6}};
    const double want[] = {1.0e6, 1.0e6, 1.0e6, 1.0e6, 1.0e6, 3.0e6, 2.5e6};
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        nt_jobrec_t rec = mk("0xc", 0, 2, 1 + i, 100);
        rec.seen_us = step[i][0];
        rec.dump_ts_us = step[i][0] - step[i][1];
        assert_int_equal(nt_jobalign_add(a, &rec), 0);
        const nt_jobcomm_t *cc = nt_jobalign_comm(a, nt_jobalign_ncomms(a) - 1);
        assert_true(fabs(cc->ranks[0].ahead_us - want[i]) < 1e-3);
    }
    assert_int_equal(c->ranks[2].pid, 102);
    assert_int_equal(c->ranks[2].last_seq, 6);
    /* Dump times 1.1..1.6 s, one a call: the latest 4 are kept, newest first. */
    assert_int_equal(c->ranks[2].ndumps, NT_JOBRANK_DUMPS);
    assert_true(c->ranks[2].dumps_us[0] == 1.6e6 && c->ranks[2].dumps_us[3] == 1.3e6);
    assert_int_equal(nt_jobrank_dumps_after(&c->ranks[2], 1.3e6), 3);
    assert_int_equal(nt_jobrank_dumps_after(&c->ranks[2], NAN), 0);
    /* Comm B's records as put_rec stamps them, a microsecond apart (Inspector stamps each
     * record as it writes it): one dump, at its latest record's time. */
    for (uint64_t s = 43; s <= 45; s++) {
        nt_jobrec_t rec = mk("0xb", 1, 2, s, 50);
        assert_int_equal(nt_jobalign_add(a, &rec), 0);
    }
    const nt_jobcomm_t *cb = nt_jobalign_comm(a, 1);
    assert_false(cb->ranks[0].seen);
    assert_true(cb->ranks[1].seen);
    assert_int_equal(cb->ranks[1].ndumps, 1); /* sn 42..45 stamped 1000042..1000045 */
    assert_true(cb->ranks[1].dumps_us[0] == 1000045);
    nt_jobalign_destroy(a);
}

/* ncclras -f json in the writer's layout (the fixture is generated, see its README). */
static void test_ras(void **state)
{
    (void)state;
    nt_jobreader_t *r = nt_jobreader_open(FIX "ras-generated-v2.30.7-layout.json");
    assert_non_null(r);
    nt_jobrec_t rec;
    int n = 0, missing = 0;
    while (nt_jobreader_next(r, &rec) == 1) {
        assert_int_equal(rec.kind, NT_JOBREC_RAS);
        if (n == 0) {
            assert_string_equal(rec.comm_id, "0xa1b2");
            assert_int_equal(rec.nranks, 4);
            assert_int_equal(rec.rank, 0);
            assert_string_equal(rec.host, "gpu01");
            assert_int_equal(rec.pid, 100);
            assert_true(rec.coll_count == 512);
            assert_false(rec.ras_missing);
        }
        if (rec.ras_missing) {
            missing++;
            assert_string_equal(rec.comm_id, "0xa1b2");
            assert_int_equal(rec.rank, 2);
            assert_string_equal(rec.host, "gpu02");
            assert_true(rec.ras_unresponsive);
            assert_false(rec.ras_dead);
            assert_true(isnan(rec.coll_count));
        }
        if (n == 5) {
            assert_string_equal(rec.comm_id, "0xc3d4");
            assert_int_equal(rec.nranks, 2);
            assert_true(rec.coll_count == 77);
        }
        n++;
    }
    assert_int_equal(n, 6);
    assert_int_equal(missing, 1);
    assert_int_equal(nt_jobreader_format(r), NT_JOBFMT_RAS_JSON);
    assert_int_equal(nt_jobreader_skipped(r), 0);
    assert_int_equal(nt_jobreader_partial(r), 0);
    nt_jobreader_close(r);
}

/* nccl-tests -J with -I, generated with the keys of nccl-tests v2.19.6 src/util.cu:440-449
 * (devices), :454-522 (a result) and :569-602 (the per-iteration object); process 1 is 1.5x
 * slower (tests/fixtures/inspector/README.md). */
static void test_ncclt_per_iter(void **state)
{
    (void)state;
    FILE *f = fopen(FIX "nccl-tests-generated-per-iter.json", "r");
    assert_non_null(f);
    char doc[8192];
    size_t n = fread(doc, 1, sizeof(doc) - 1, f);
    fclose(f);
    doc[n] = '\0';
    cJSON *j = cJSON_Parse(doc);
    assert_non_null(j);
    nt_ncclt_reader_t *r = nt_ncclt_reader_create();
    assert_int_equal(nt_ncclt_reader_add_json(r, j, 0), 1);
    const nt_ncclt_table_t *t = nt_ncclt_reader_table(r, 0);
    assert_non_null(t);
    assert_int_equal(t->nrows, 1);
    const nt_ncclt_iters_t *it = &t->rows[0].iters[0];
    assert_true(it->has);
    assert_int_equal(it->skipped, 1);
    assert_int_equal(it->niters, 4);
    assert_int_equal(it->nprocs, 3);
    assert_true(it->p99_us == 152.0 && it->cv_pct == 1.0 && it->min_us == 148.0);
    /* means after the skipped first iteration: 100, 150, 100: process 1, 1.5x the median */
    assert_int_equal(it->slowest_proc, 1);
    assert_true(fabs(it->slowest_ratio - 1.5) < 1e-12);
    assert_false(t->rows[0].iters[1].has); /* the in-place half has no -I object here */
    nt_ncclt_reader_destroy(r);
    cJSON_Delete(j);
}

/* Every key path ("header.id") of a JSON object tree, each as " path " into `out`; returns
 * their number. */
static int keys_of(const cJSON *o, const char *prefix, char *out, size_t cap)
{
    const cJSON *it;
    int n = 0;
    cJSON_ArrayForEach(it, o)
    {
        char path[128];
        snprintf(path, sizeof(path), "%s%s%s", prefix, prefix[0] ? "." : "", it->string);
        if (cJSON_IsObject(it))
            n += keys_of(it, path, out, cap);
        else {
            snprintf(out + strlen(out), cap - strlen(out), " %s ", path);
            n++;
        }
    }
    return n;
}

static cJSON *first_record(const char *path)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char buf[8192];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    return cJSON_ParseWithOpts(buf, NULL, 0);
}

/* The trainer of the namespace-cluster scenarios (tests/watch-cluster/trainer.c) writes what
 * Inspector writes: its records go through the same reader as NCCL's README records, and its
 * keys are theirs (the README's record is older: comm_name and coll_timing_source are
 * 2.30.3's, and the README's verbose record has the latter). */
static void test_trainer_record(void **state)
{
    (void)state;
    nt_jobreader_t *r = nt_jobreader_open(FIX "trainer-collective-cpu.json");
    assert_non_null(r);
    nt_jobrec_t rec;
    assert_int_equal(nt_jobreader_next(r, &rec), 1);
    assert_int_equal(nt_jobreader_format(r), NT_JOBFMT_INSPECTOR_JSON);
    assert_int_equal(rec.kind, NT_JOBREC_COLL);
    assert_string_equal(rec.comm_id, "0x2ebed08957df1fd9");
    assert_string_equal(rec.comm_name, "tp0");
    assert_int_equal(rec.rank, 0);
    assert_int_equal(rec.nranks, 4);
    assert_int_equal(rec.nnodes, 4);
    assert_string_equal(rec.host, "h2");
    assert_int_equal(rec.pid, 14652);
    assert_string_equal(rec.op, "AllReduce");
    assert_int_equal(rec.seq, 0);
    assert_true(rec.bytes == 16384.0);
    assert_true(rec.exec_us == 2999.0);
    assert_int_equal(rec.timing, NT_TIMING_COLLECTIVE_CPU);
    assert_true(fabs(rec.algbw_GBps - 0.005463) < 1e-12);
    assert_true(fabs(rec.busbw_GBps - 0.008195) < 1e-12);
    assert_true(rec.dump_ts_us == 1796185489487424.0);
    int n = 1;
    while (nt_jobreader_next(r, &rec) == 1)
        n++;
    assert_int_equal(n, 3);
    assert_int_equal(nt_jobreader_skipped(r), 0);
    nt_jobreader_close(r);

    char mine[2048] = "", readme[2048] = "", verbose[4096] = "";
    cJSON *a = first_record(FIX "trainer-collective-cpu.json");
    cJSON *b = first_record(FIX "readme-v2.30.7-record.json");
    cJSON *c = first_record(FIX "readme-v2.30.7-verbose.json");
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(c);
    int nmine = keys_of(a, "", mine, sizeof(mine));
    assert_int_equal(keys_of(b, "", readme, sizeof(readme)), 16);
    keys_of(c, "", verbose, sizeof(verbose));
    /* Every key of the README's record is the trainer's... */
    for (char *k = strtok(readme, " "); k; k = strtok(NULL, " ")) {
        char pat[160];
        snprintf(pat, sizeof(pat), " %s ", k);
        assert_non_null(strstr(mine, pat));
    }
    /* ...and the trainer's two more are 2.30.3's: comm_name, and the timing source that the
     * README's verbose record carries. */
    assert_non_null(strstr(mine, " header.comm_name "));
    assert_non_null(strstr(mine, " coll_perf.coll_timing_source "));
    assert_non_null(strstr(verbose, " coll_perf.coll_timing_source "));
    assert_int_equal(nmine, 18); /* the README record's 16 and those two */
    cJSON_Delete(a);
    cJSON_Delete(b);
    cJSON_Delete(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_readme_record),     cmocka_unit_test(test_readme_verbose),
        cmocka_unit_test(test_readme_prom),       cmocka_unit_test(test_half_written_and_long),
        cmocka_unit_test(test_torn_record_mid_file), cmocka_unit_test(test_garbage_line_mid_file),
        cmocka_unit_test(test_bad_records_counted), cmocka_unit_test(test_sniff),
        cmocka_unit_test(test_align),             cmocka_unit_test(test_ncclt_per_iter),
        cmocka_unit_test(test_ras),               cmocka_unit_test(test_follow_completes_cut_record),
        cmocka_unit_test(test_follow_small_block_same_records),
        cmocka_unit_test(test_trainer_record),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
