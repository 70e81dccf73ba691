/* Unit tests of the doctor's parts that the golden tests reach only indirectly: line prefixes of
 * every launcher and NCCL version, the bounded line reader, the knowledge base loader, and the
 * nccl-tests row reader. No framework: CHECK counts and reports, main returns 1 on any failure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze_int.h"
#include "doctor.h"

static int passed, failed;
#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (cond) {                                                                                \
            passed++;                                                                              \
        } else {                                                                                   \
            failed++;                                                                              \
            printf("not ok - %s:%d: ", __FILE__, __LINE__);                                        \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
        }                                                                                          \
    } while (0)

static int host_is(const nt_logline_t *l, const char *h)
{
    return l->host && l->host_len == strlen(h) && memcmp(l->host, h, l->host_len) == 0;
}

static void test_parse(void)
{
    nt_logline_t l;
    nt_line_parse("node01:1379562:1379562 [0] NCCL INFO Using network Socket", &l);
    CHECK(host_is(&l, "node01") && l.pid == 1379562 && l.dev == 0 && l.level == NT_LVL_INFO,
          "plain prefix");
    CHECK(strcmp(l.msg, "Using network Socket") == 0, "msg '%s'", l.msg);

    nt_line_parse(" 0: node01:5:6 [3] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB", &l);
    CHECK(l.task == 0 && host_is(&l, "node01") && l.dev == 3, "srun prefix");

    nt_line_parse(
        "12: gpu-a.b.c:77:78 [7] transport/net_ib.cc:839 NCCL WARN NET/IB : Got completion", &l);
    CHECK(l.task == 12 && host_is(&l, "gpu-a.b.c") && l.level == NT_LVL_WARN,
          "srun + dotted host + WARN");
    CHECK(strncmp(l.msg, "NET/IB", 6) == 0, "warn msg '%s'", l.msg);

    nt_line_parse("[1,3]<stdout>:node02:3002:3041 [1] NCCL INFO TUNER/Plugin: Using nettune (v5)",
                  &l);
    CHECK(l.task == 3 && host_is(&l, "node02") && l.pid == 3002, "Open MPI prefix");

    nt_line_parse("[1,3]<stderr>: node02:3002:3041 [1] NCCL INFO x", &l);
    CHECK(l.task == 3 && host_is(&l, "node02"), "Open MPI stderr prefix with blank");

    nt_line_parse("        [1,0]<stdout>:node02:3002:3041 [1] NCCL INFO x", &l);
    CHECK(l.task == 0 && host_is(&l, "node02"), "Open MPI prefix indented by a test runner");

    nt_line_parse("    raise RuntimeError: NCCL error", &l);
    CHECK(l.task == -1 && !l.host && l.nprefix == 0, "indented text: no label looked for");

    nt_line_parse("[rank5]:node03:1:2 [5] NCCL INFO x", &l);
    CHECK(l.task == 5 && host_is(&l, "node03"), "torchrun prefix");

    nt_line_parse("[2026-03-03 12:11:38] node07:185303:186751 [1] transport/net_ib.cc:2453 NCCL "
                  "WARN NET/IB: Got completion from peer",
                  &l);
    CHECK(host_is(&l, "node07") && l.level == NT_LVL_WARN, "timestamp prefix");

    nt_line_parse("node01:3171:3171 [0] misc/ibvwrap.cu:61 WARN Failed to open libibverbs.so[.1]",
                  &l);
    CHECK(l.level == NT_LVL_WARN && strncmp(l.msg, "Failed", 6) == 0, "WARN without the NCCL word");

    nt_line_parse("misc/ibvwrap.cc:212 NCCL WARN Call to ibv_open_device failed", &l);
    CHECK(!l.host && l.level == NT_LVL_WARN, "no prefix WARN");

    nt_line_parse("NCCL INFO NET/IB : No device found.", &l);
    CHECK(!l.host && l.level == NT_LVL_INFO && strcmp(l.msg, "NET/IB : No device found.") == 0,
          "no prefix INFO");

    nt_line_parse(
        "   134217728      33554432     float     sum      -1    613.3  218.85  382.99      0", &l);
    CHECK(l.task == -1 && !l.host && l.level == NT_LVL_NONE, "a data row is not an srun prefix");

    nt_line_parse("10.0.0.1:12:13 [0] NCCL INFO x", &l);
    CHECK(host_is(&l, "10.0.0.1") && l.task == -1, "IP as host, not srun");

    nt_line_parse("", &l);
    CHECK(l.level == NT_LVL_NONE && l.body && !*l.body, "empty line");
    nt_line_parse(":::: [", &l);
    CHECK(!l.host, "garbage");
    nt_line_parse("a:1:2 [", &l);
    CHECK(!l.host, "cut prefix");

    /* every row of the prefix table strips its own example in front of an NCCL line */
    for (size_t i = 0; i < nt_line_prefix_count(); i++) {
        const char *ex, *src;
        const char *name = nt_line_prefix_at(i, &ex, &src);
        char buf[512];
        snprintf(buf, sizeof(buf), "%snode09:77:78 [2] NCCL INFO Using network IB", ex);
        nt_line_parse(buf, &l);
        CHECK(host_is(&l, "node09") && l.pid == 77 && l.level == NT_LVL_INFO && l.nprefix >= 1 &&
                  strcmp(l.prefix[0], name) == 0 && src && *src,
              "prefix row %s strips '%s'", name, ex);
    }
    CHECK(nt_line_prefix_at(nt_line_prefix_count(), NULL, NULL) == NULL, "prefix table end");

    /* the role label is not part of the host name */
    nt_line_parse("[trainer3]:gpu-a:5:6 [3] NCCL INFO x", &l);
    CHECK(l.task == 3 && host_is(&l, "gpu-a"), "torchrun role label");
    nt_line_parse("[trainer0|5]:ncclInternalError: Internal check failed.", &l);
    CHECK(l.task == 5 && strcmp(l.body, "ncclInternalError: Internal check failed.") == 0,
          "torchrun role label with the global rank");
    nt_line_parse("[rank3]:[E1202 00:10:00.1 ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught "
                  "collective operation timeout", &l);
    CHECK(l.task == 3 && !l.host && strncmp(l.body, "[E1202", 6) == 0, "PyTorch rank label");
    /* host from the launcher label where NCCL's line has none */
    nt_line_parse("gpu-node7: misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 10.0.0.1<43> "
                  "failed : Connection refused", &l);
    CHECK(host_is(&l, "gpu-node7") && l.level == NT_LVL_WARN, "pdsh host for a prefix-less WARN");
    nt_line_parse("Dec 02 00:29:06 gpu-node3 python[4122]: NCCL INFO Using network Socket", &l);
    CHECK(host_is(&l, "gpu-node3") && l.level == NT_LVL_INFO, "journald host");
    nt_line_parse("2024-05-01T10:00:00.123456789Z [default1]:node2:1:2 [1] NCCL INFO x", &l);
    CHECK(l.task == 1 && host_is(&l, "node2") && l.nprefix == 2, "kubectl then torchrun");
    nt_line_parse("(RayWorkerWrapper pid=3475, ip=10.0.0.2) NCCL INFO Using network IB", &l);
    CHECK(host_is(&l, "10.0.0.2"), "Ray ip");
    nt_line_parse("RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1970", &l);
    CHECK(!l.host && l.nprefix == 0, "an exception's name is not a pdsh host");
    nt_line_parse("error: unrecognized arguments", &l);
    CHECK(!l.host && l.nprefix == 0, "a plain word is not a pdsh host");
    /* the one pdsh rule, as the operator-file reader asks it */
    CHECK(nt_line_pdsh_host("node01: hca_id:\tmlx5_0") == 6, "pdsh host length");
    CHECK(nt_line_pdsh_host("gpu-a: GPU0 X") == 5, "pdsh host with '-'");
    CHECK(nt_line_pdsh_host("12: node01:5:6 [3] NCCL INFO x") == 0, "srun's task number is no host");
    CHECK(nt_line_pdsh_host("hca_id:\tmlx5_0") == 0 && nt_line_pdsh_host("NVRM: Xid") == 0 &&
              nt_line_pdsh_host("Legend: ") == 0 && nt_line_pdsh_host(NULL) == 0,
          "format words are no host");
}

static void test_reader(void)
{
    char path[] = "/tmp/nt-doctor-unit-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp");
    if (fd < 0)
        return;
    FILE *fp = fdopen(fd, "w");
    fputs("first\r\n", fp);
    for (int i = 0; i < 3 * NT_LINE_MAX; i++)
        fputc('x', fp);
    fputs("\nthird\n\nlast-no-newline", fp);
    fclose(fp);
    nt_linereader_t *r = nt_linereader_open(path);
    const char *line;
    size_t len;
    CHECK(r != NULL, "open");
    CHECK(nt_linereader_next(r, &line, &len) == 1 && strcmp(line, "first") == 0,
          "CRLF stripped: '%s'", line);
    CHECK(nt_linereader_next(r, &line, &len) == 1 && len == NT_LINE_MAX - 1,
          "long line cut to %d: %zu", NT_LINE_MAX - 1, len);
    CHECK(nt_linereader_next(r, &line, &len) == 1 && strcmp(line, "third") == 0,
          "line after the long one: '%s'", line);
    CHECK(nt_linereader_next(r, &line, &len) == 1 && len == 0, "empty line");
    CHECK(nt_linereader_next(r, &line, &len) == 1 && strcmp(line, "last-no-newline") == 0,
          "last line without newline");
    CHECK(nt_linereader_next(r, &line, &len) == 0, "eof");
    CHECK(nt_linereader_truncated(r) == 1 && nt_linereader_lineno(r) == 5 &&
              !nt_linereader_is_binary(r),
          "counters");
    nt_linereader_close(r);
    unlink(path);
    CHECK(nt_linereader_open("/nonexistent/x") == NULL, "missing file");
}

/* NUL runs (a log cut by a node crash, or copied from a filesystem that lost its tail) are line
 * breaks: skipped, counted, and the text around them still read, with grep -n's line numbers. */
static void test_reader_nul(void)
{
    static const char data[] = "\0\0\0one\ntwo\0\0three\nfour\0\0\n\nfive\n\0\0\0\0";
    const char *line;
    size_t len;
    FILE *fp = fmemopen((void *)data, sizeof(data) - 1, "r");
    nt_linereader_t *r = nt_linereader_open_stream(fp);
    CHECK(r != NULL, "open");
    if (!r)
        return;
    CHECK(nt_linereader_next(r, &line, &len) == 1 && strcmp(line, "one") == 0 &&
              nt_linereader_lineno(r) == 1,
          "leading NULs skipped: '%s'", line);
    CHECK(!nt_linereader_is_binary(r), "NUL bytes alone are not binary");
    CHECK(nt_linereader_next(r, &line, &len) == 1 && strcmp(line, "two") == 0 &&
              nt_linereader_lineno(r) == 2,
          "NUL run ends a line: '%s'", line);
    CHECK(nt_linereader_next(r, &line, &len) == 1 && strcmp(line, "three") == 0 &&
              nt_linereader_lineno(r) == 2,
          "text after a NUL run keeps its line number: '%s' %lu", line, nt_linereader_lineno(r));
    CHECK(nt_linereader_next(r, &line, &len) == 1 && strcmp(line, "four") == 0 &&
              nt_linereader_lineno(r) == 3,
          "'%s'", line);
    CHECK(nt_linereader_next(r, &line, &len) == 1 && len == 0 && nt_linereader_lineno(r) == 4,
          "NULs then newline add no empty line; the real empty line 4 stays: %zu %lu", len,
          nt_linereader_lineno(r));
    CHECK(nt_linereader_next(r, &line, &len) == 1 && strcmp(line, "five") == 0 &&
              nt_linereader_lineno(r) == 5,
          "'%s'", line);
    CHECK(nt_linereader_next(r, &line, &len) == 0, "trailing NUL padding is no line");
    CHECK(nt_linereader_nul_bytes(r) == 11, "NUL bytes counted: %llu",
          (unsigned long long)nt_linereader_nul_bytes(r));
    nt_linereader_close(r);
    fclose(fp);
    /* still binary: a compressed file, a UTF-16 file, random bytes with no NUL at all */
    static const struct {
        const char *data;
        size_t len;
        int want;
    } bin[] = {{"\x1f\x8b\x08\x00\x00\x00\x00\x00node01 NCCL INFO\n", 25, 1},
               {"\xff\xfen\0o\0d\0e\0\n\0", 12, 2},
               {"\x01\x02\x03\x04\x05\x06\x07\x08\x0b\x0e\x0f\x10\x11\x12\x13\x14\xff\xfe\xfd\xc3"
                "\x28\x80\x81\x82"
                "\x01\x02\x03\x04\x05\x06\x07\x08\x0b\x0e\x0f\x10\x11\x12\x13\x14\xff\xfe\xfd\xc3"
                "\x28\x80\x81\x82"
                "\x01\x02\x03\x04\x05\x06\x07\x08\x0b\x0e\x0f\x10\x11\x12\x13\x14\xff\xfe\xfd\xc3"
                "\x28\x80\x81\x82",
                72, 1}};
    for (size_t i = 0; i < sizeof(bin) / sizeof(bin[0]); i++) {
        fp = fmemopen((void *)bin[i].data, bin[i].len, "r");
        r = nt_linereader_open_stream(fp);
        nt_linereader_next(r, &line, &len);
        CHECK(nt_linereader_is_binary(r) == bin[i].want, "binary case %zu: %d, want %d", i,
              nt_linereader_is_binary(r), bin[i].want);
        nt_linereader_close(r);
        fclose(fp);
    }
}

static nt_doctor_t *read_text(const nt_kb_t *kb, const char *text, int *rc)
{
    nt_doctor_t *d = nt_doctor_create(kb);
    char msg[256];
    FILE *fp = fmemopen((void *)text, strlen(text), "r");
    *rc = nt_doctor_read_stream(d, "mem", fp, msg, sizeof(msg));
    fclose(fp);
    return d;
}

static void test_tables(const nt_kb_t *kb)
{
    int rc;
    /* two tables in one input; the plateau is the max over the 3 largest sizes, not the Avg */
    const char *t =
        "# nThread 1 nGpus 1 minBytes 536870912 maxBytes 4294967296 step: 2(factor) warmup iters: "
        "5 iters: 20\n"
        "#  Rank  0 Group  0 Pid 1 on hostA device  0 [0x18] NVIDIA H100 80GB HBM3\n"
        "#  Rank  1 Group  0 Pid 2 on hostB device  0 [0x18] NVIDIA H100 80GB HBM3\n"
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
        "time   algbw   busbw #wrong\n"
        " 536870912     134217728     float     sum      -1    10.0    0.00   10.00      0    "
        "10.0    0.00   11.00      0\n"
        "1073741824     268435456     float     sum      -1    10.0    0.00   20.00      0    "
        "10.0    0.00   21.00      0\n"
        "2147483648     536870912     float     sum      -1    10.0    0.00   40.00    N/A    "
        "10.0    0.00   39.00    N/A\n"
        "4294967296    1073741824     float     sum      -1    10.0    0.00   30.00      0    "
        "10.0    0.00   31.00      0\n"
        "# Avg bus bandwidth    : 99.0\n"
        "#       size         count    type   redop     time   algbw   busbw  error     time   "
        "algbw   busbw  error\n"
        "           0             0   float             1.63    0.00    0.00    N/A     1.38    "
        "0.00    0.00    N/A\n"
        "        1024            32   float            88.17    0.01    5.00    N/A    88.98    "
        "0.01    6.00    N/A\n";
    nt_doctor_t *d = read_text(kb, t, &rc);
    CHECK(rc == 0, "tables read");
    CHECK(d->ntables == 2, "2 tables, got %zu", d->ntables);
    if (d->ntables == 2) {
        nt_hw_t hw;
        nt_hw_init(&hw);
        hw.nic_rate_Gbps = 400;
        hw.nics_per_node = 1;
        nt_doctor_diagnose(d, &hw);
        nt_table_t *a = &d->tables[0], *b = &d->tables[1];
        CHECK(a->rows == 4 && a->ntop == 3 && a->top[0].bytes == 4294967296ULL &&
                  a->top[2].bytes == 1073741824ULL,
              "top rows kept");
        CHECK(a->plateau == 40.0, "plateau %.2f", a->plateau);
        CHECK(a->avg_busbw == 99.0, "avg kept for display");
        CHECK(a->nhosts == 2 && a->gpus_per_host == 1, "device lines");
        CHECK(a->expected == 50.0 && strcmp(a->verdict, "warn") == 0, "expected %.1f verdict %s",
              a->expected, a->verdict);
        CHECK(b->rows == 2 && b->plateau == 6.0,
              "alltoall-style row with empty redop: rows %lu plateau %.2f", b->rows, b->plateau);
    }
    nt_doctor_destroy(d);

    d = read_text(kb, "just some text\nmore\n", &rc);
    CHECK(rc == 1 && strcmp(d->inputs[0].status, "no_nccl_lines") == 0, "no NCCL lines");
    nt_doctor_destroy(d);
}

static void test_kb(const nt_kb_t *kb)
{
    char err[512];
    nt_kb_t *k = NULL;
    CHECK(nt_doctor_kb_missing(kb) == NULL, "embedded kb complete");
    CHECK(nt_kb_signature_index(kb, "libibverbs_missing") >= 0, "signature present");
    CHECK(nt_kb_finding(kb, "socket_fallback")->severity == NT_SEV_ERROR, "severity");
    /* a file the JSON reader cannot read comes back in err, naming --kb and the file */
    CHECK(nt_kb_load("/nonexistent.json", &k, err, sizeof(err)) != 0 && k == NULL &&
              strstr(err, "--kb '/nonexistent.json': cannot open"),
          "missing kb: %s", err);
    char path[] = "/tmp/nt-doctor-kb-XXXXXX";
    int fd = mkstemp(path);
    FILE *fp = fdopen(fd, "w");
    fputs("{\"schema\": \"nettune.doctor-kb/1\", \"signatures\": [{\"id\": \"x\", \"match\": []}], "
          "\"findings\": {}}",
          fp);
    fclose(fp);
    CHECK(nt_kb_load(path, &k, err, sizeof(err)) != 0 && strstr(err, "$.signatures[0]"),
          "bad kb names the path: %s", err);
    unlink(path);
    CHECK(nt_severity_parse("warn") == NT_SEV_WARN && nt_severity_parse("fatal") == -1,
          "severity parse");
}

static int cap_is(const nt_fmt_cap_t *c, const char *v)
{
    return c->len == strlen(v) && memcmp(c->s, v, c->len) == 0;
}

static void test_fmtmatch(const nt_kb_t *kb)
{
    nt_fmt_cap_t c[8];
    /* NVIDIA/nccl v2.28.9-1 src/graph/paths.cc:473 */
    const char *gdr = "GPU Direct RDMA Disabled for GPU %d / HCA %lx (distance %d > %d)";
    CHECK(nt_fmt_match(gdr, "GPU Direct RDMA Disabled for GPU 3 / HCA 2a0000 (distance 9 > 5)", c,
                       8) == 4,
          "gdr line");
    CHECK(cap_is(&c[0], "3") && cap_is(&c[1], "2a0000") && cap_is(&c[2], "9") && cap_is(&c[3], "5"),
          "gdr captures");
    CHECK(nt_fmt_match(gdr, "GPU Direct RDMA Disabled for GPU x / HCA 2a (distance 9 > 5)", c, 8) <
              0,
          "%%d is digits");
    CHECK(nt_fmt_match(gdr, "GPU Direct RDMA Disabled for GPU 3 / HCA 2a (distance 9 > 5) extra", c,
                       8) < 0,
          "anchored end");
    /* src/graph/topo.cc:1357: %s takes text with blanks, a later literal decides */
    const char *hca = "NET/%s : GPU Direct RDMA %s for HCA %d '%s'";
    CHECK(nt_fmt_match(hca, "NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'", c, 8) == 4 &&
              cap_is(&c[1], "Disabled") && cap_is(&c[3], "mlx5_0"),
          "hca line");
    CHECK(nt_fmt_match("%s: connect to %s returned %s, retrying (%d/%ld) after sleep for %u msec",
                       "bootstrapRoot: connect to 10.0.0.2<39751> returned Connection refused, "
                       "retrying (1/34) after sleep for 100 msec",
                       c, 8) == 6 &&
              cap_is(&c[2], "Connection refused"),
          "strings with blanks");
    CHECK(nt_fmt_match("%d%% done %p", "50% done 0x7f00ab", c, 8) == 2 && cap_is(&c[1], "0x7f00ab"),
          "%%%% and %%p");
    CHECK(nt_fmt_match("Ring %02d : %d -> %d", "Ring 07 : 1 -> 2   ", c, 8) == 3,
          "trailing blanks ignored");
    CHECK(nt_fmt_match("line one\nline two %d", "line one", c, 8) == 0, "first line of a format");
    const char *a;
    CHECK(nt_fmt_anchor(gdr, &a) == 33 && strncmp(a, "GPU Direct RDMA Disabled for GPU ", 33) == 0,
          "anchor");
    /* path types: SYS is 7 in 2.18, 8 in 2.26, 9 in 2.28 (src/graph/topo.h at those tags) */
    const char *t = nt_kb_path_type(kb, "2.18.5", 7);
    CHECK(t && strcmp(t, "SYS") == 0, "2.18 SYS 7: %s", t ? t : "NULL");
    t = nt_kb_path_type(kb, "2.26.2", 8);
    CHECK(t && strcmp(t, "SYS") == 0, "2.26 SYS 8: %s", t ? t : "NULL");
    t = nt_kb_path_type(kb, "2.28.9", 9);
    CHECK(t && strcmp(t, "SYS") == 0, "2.28 SYS 9: %s", t ? t : "NULL");
    t = nt_kb_path_type(kb, "2.28.3", 6);
    CHECK(t && strcmp(t, "P2C") == 0, "2.28 P2C 6: %s", t ? t : "NULL");
    CHECK(nt_kb_path_type(kb, NULL, 7) == NULL && nt_kb_path_type(kb, "2.17.1", 7) == NULL &&
              nt_kb_path_type(kb, "2.30.1", 7) == NULL && nt_kb_path_type(kb, "2.28.9", 40) == NULL,
          "unknown versions and values are not decoded");
    /* the knowledge base's tags and a log's versions, by the one NCCL version parser */
    CHECK(nt_kb_version_code("v2.28.9-1") == 22809 && nt_kb_version_code("2.18.5") == 21805,
          "tag and log version");
    CHECK(nt_kb_version_code(NULL) == -1 && nt_kb_version_code("v") == -1 &&
              nt_kb_version_code("4.10000000000000000000000008.5") == -1 &&
              nt_kb_version_code("9223372036854775807.1.1") == -1,
          "overlong and absent versions are not versions");
    t = nt_kb_path_type(kb, "4.10000000000000000000000008.5+cuda12.2", 7);
    CHECK(t == NULL, "an overlong version decodes no path type: %s", t ? t : "NULL");
}

/* A finding added after another was looked up leaves the first where it was (diagnose_gdr
 * links a cause found first to the effect it adds): the findings array never moves. */
static void test_findings_stable(const nt_kb_t *kb)
{
    nt_doctor_t *d = nt_doctor_create(kb);
    nt_finding_t *first = nt_finding_add(d, "gdr_disabled_distance");
    CHECK(first != NULL, "a finding the knowledge base has");
    size_t added = 0;
    for (size_t i = 0; i < kb->nfindings; i++)
        if (nt_finding_add(d, kb->findings[i].key))
            added++;
    CHECK(added == kb->nfindings && d->nfindings == kb->nfindings,
          "every finding once: %zu added, %zu held, %zu known", added, d->nfindings, kb->nfindings);
    CHECK(nt_finding_add(d, "gdr_disabled_distance") == first && first == &d->findings[0],
          "the first finding is where it was after %zu more", d->nfindings - 1);
    CHECK(nt_finding_add(d, "no_such_finding") == NULL, "a key the knowledge base lacks");
    nt_doctor_destroy(d);
}

static void test_device_rank(void)
{
    nt_ncclt_device_t dev;
    CHECK(nt_ncclt_parse_device("#  Rank  3 Group  0 Pid 1 on node01 device  0 [0x18] H100",
                                &dev) == 1 &&
              dev.rank == 3,
          "a device line");
    CHECK(nt_ncclt_parse_device("#  Rank 2147483648 Group  0 Pid 1 on node01 device  0 [0x18] H",
                                &dev) == 0 &&
              nt_ncclt_parse_device(
                  "#  Rank 9223372036854775807 Group 0 Pid 1 on n device 0 [0x1] H", &dev) == 0,
          "a rank beyond INT_MAX is not a device line");
}

/* A path value beyond a long ("distance 99999999999999999999", a %d capture of 20 digits) is not
 * converted to a path type: (long)1e20 is UB (UBSan float-cast-overflow) and read as LONG_MIN
 * before the fix; the other path value of the line is still decoded. */
static void test_path_value_range(const nt_kb_t *kb)
{
    int rc;
    nt_doctor_t *d = read_text(kb,
                               "node01:1:1 [0] NCCL INFO NCCL version 2.28.9+cuda12.9\n"
                               "node01:1:1 [0] NCCL INFO GPU Direct RDMA Disabled for GPU 0 / HCA "
                               "2a0000 (distance 99999999999999999999 > 5)\n",
                               &rc);
    nt_hw_t hw;
    nt_hw_init(&hw);
    nt_doctor_diagnose(d, &hw);
    const nt_finding_t *f = NULL;
    for (size_t i = 0; i < d->nfindings; i++)
        if (strcmp(d->findings[i].kb->key, "gdr_disabled_distance") == 0)
            f = &d->findings[i];
    const char *det = f && f->detail ? f->detail : "";
    CHECK(f != NULL, "the message is a finding");
    CHECK(!strstr(det, "-9223372036854775808") && !strstr(det, "distance -"),
          "an overlong distance is no path type: %s", det);
    CHECK(strstr(det, "gdr_level 5") != NULL, "gdr_level still decoded: %s", det);
    nt_doctor_destroy(d);
}

int main(void)
{
    nt_kb_t *kb = NULL;
    char err[512];
    if (nt_kb_load(NULL, &kb, err, sizeof(err)) != 0) {
        printf("not ok - embedded knowledge base: %s\n", err);
        return 1;
    }
    test_parse();
    test_reader();
    test_reader_nul();
    test_tables(kb);
    test_kb(kb);
    test_fmtmatch(kb);
    test_findings_stable(kb);
    test_device_rank();
    test_path_value_range(kb);
    nt_kb_destroy(kb);
    printf("doctor unit tests: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
