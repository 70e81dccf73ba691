# Unit tests of the libraries and of nettune-probe's pure parts (cmocka), and the symbol graph
# of the built objects.
UNIT_CORE_TESTS := test_core_stats test_core_schedule test_core_fabsched test_core_launcher test_core_bench \
                   test_core_io test_checks test_probe_nodes test_probe_judge test_probe_judge_index test_probe_drain \
                   test_probe_fabric
UNIT_CORE_BINS := $(addprefix $(BUILD)/tests/,$(UNIT_CORE_TESTS))
# nettune-probe sources without MPI, for test_probe_nodes.
UNIT_PROBE_OBJS := $(OBJ)/probes/nodes.o $(OBJ)/probes/identify.o $(OBJ)/probes/params.o $(OBJ)/probes/probe_util.o \
                   $(OBJ)/probes/registry.o $(OBJ)/tests/unit/fake_probe_ops.o

$(OBJ)/probes/%.o: probes/%.c
	@mkdir -p $(dir $@)
	$(CC) $(NT_CFLAGS) -Iprobes -c $< -o $@

$(OBJ)/tests/unit/%.o: tests/unit/%.c
	@mkdir -p $(dir $@)
	$(CC) $(NT_CFLAGS) -Iprobes -Ireports -c $< -o $@

$(BUILD)/tests/test_probe_nodes: $(OBJ)/tests/unit/test_probe_nodes.o $(UNIT_PROBE_OBJS) $(call nt_archives,judge engine node core)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^ $(call nt_ldlibs,judge engine node core) $(CMOCKA_LIBS)

$(BUILD)/tests/test_probe_judge: $(OBJ)/tests/unit/test_probe_judge.o $(call nt_archives,judge engine node core)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^ $(call nt_ldlibs,judge engine node core) $(CMOCKA_LIBS)

# The judge's indexes against the linear scans they replace (tests/unit/judge_ref.c).
$(BUILD)/tests/test_probe_judge_index: $(OBJ)/tests/unit/test_probe_judge_index.o \
                                      $(OBJ)/tests/unit/judge_ref.o $(RENDER_LIB) $(call nt_archives,judge engine node core)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^ $(call nt_ldlibs,judge engine node core) $(CMOCKA_LIBS)

# The fabric judge on synthetic fabrics (tests/unit/fabric_gen.c) and the switch topology readers.
UNIT_CORE_TESTS += test_probe_fabjudge
UNIT_CORE_BINS += $(BUILD)/tests/test_probe_fabjudge
$(BUILD)/tests/test_probe_fabjudge: $(OBJ)/tests/unit/test_probe_fabjudge.o $(OBJ)/tests/unit/fabric_gen.o $(call nt_archives,judge engine node core)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^ $(call nt_ldlibs,judge engine node core) $(CMOCKA_LIBS)

$(BUILD)/tests/test_probe_drain: $(OBJ)/tests/unit/test_probe_drain.o $(OBJ)/probes/drain.o $(call nt_archives,judge engine node core)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^ $(call nt_ldlibs,judge engine node core) $(CMOCKA_LIBS)

# The fabric phases over loopback sockets, with the in-process launcher (threads as nodes),
# and their RDMA path without the verbs calls (test_probe_fabric_rdma: transport choice on
# sysfs trees, QP records; the no-device run in test_probe_fabric): the RDMA probe's objects
# built without MPI.
FABRIC_RDMA_OBJS := $(OBJ)/probes/fabric/fabric_rdma.o $(RDMA_PURE_OBJS) \
                    $(patsubst %,$(OBJ)/probes/rdma/%.o,ibv verbs_path gpu_mem numa_bind)
$(FABRIC_RDMA_OBJS) $(OBJ)/probes/fabric/fabric.o $(OBJ)/tests/unit/test_probe_fabric.o: NT_CFLAGS += -Iprobes/rdma $(IBV_CFLAGS)
$(OBJ)/tests/unit/test_probe_fabric.o: NT_CFLAGS += -DNT_TEST_FIXTURES=\"$(abspath tests/fixtures)\"
$(BUILD)/tests/test_probe_fabric: $(OBJ)/tests/unit/test_probe_fabric.o $(OBJ)/probes/fabric/fabric.o $(FABRIC_RDMA_OBJS) $(call nt_archives,judge engine node core)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^ $(call nt_ldlibs,judge engine node core) $(CMOCKA_LIBS)
UNIT_CORE_TESTS += test_probe_fabric_rdma
UNIT_CORE_BINS += $(BUILD)/tests/test_probe_fabric_rdma
$(OBJ)/tests/unit/test_probe_fabric_rdma.o: NT_CFLAGS += -Iprobes/rdma $(IBV_CFLAGS) -DNT_TEST_FIXTURES=\"$(abspath tests/fixtures)\"
$(BUILD)/tests/test_probe_fabric_rdma: $(OBJ)/tests/unit/test_probe_fabric_rdma.o $(FABRIC_RDMA_OBJS) $(call nt_archives,judge engine node core)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^ $(call nt_ldlibs,judge engine node core) $(CMOCKA_LIBS)

$(BUILD)/tests/test_checks: $(OBJ)/tests/unit/test_checks.o $(call nt_archives,core)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $< $(call nt_link,core) $(CMOCKA_LIBS)

# docs/codes.md is generated from the check table: `make docs-codes` writes it, test-unit fails
# when the committed page differs from a fresh generation.
CODES_GEN := $(BUILD)/tests/gen_codes
$(CODES_GEN): mk/gen_codes.c lib/core/checks.c include/nettune/checks.def include/nettune/checks.h
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(WARN) $(CFLAGS) -Iinclude -o $@ mk/gen_codes.c lib/core/checks.c
.PHONY: docs-codes
docs-codes: $(CODES_GEN)
	$(CODES_GEN) > docs/codes.md

$(BUILD)/tests/test_core_%: $(OBJ)/tests/unit/test_core_%.o $(call nt_archives,judge engine node core)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^ $(call nt_ldlibs,judge engine node core) $(CMOCKA_LIBS)

# The readers of a running job's NCCL telemetry and their alignment (include/nettune/jobrec.h),
# on tests/fixtures/inspector/ relative to the repository root: they run from it.
JOB_TESTS := test_jobrec
JOB_TEST_BINS := $(addprefix $(BUILD)/tests/,$(JOB_TESTS))
$(JOB_TEST_BINS): $(BUILD)/tests/%: $(OBJ)/tests/unit/%.o $(call nt_archives,nccl core)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(call nt_link,nccl core) $(CMOCKA_LIBS)

# Topology inventory, PCIe link state without traffic and software versions,
# against captured trees and stand-in libraries.
TOPO_TESTS     := test_topo test_pcie test_software
TOPO_TEST_BINS := $(addprefix $(BUILD)/tests/,$(TOPO_TESTS))
TOPO_FAKE_DIR  := $(abspath $(BUILD))/tests/fake
# A stand-in for libcuda/libcudart/libnccl (their version calls) and for an rdma-core
# libibverbs.so.1 -> libibverbs.so.1.14.50.1, so the dlopen paths run for real without them.
TOPO_FAKE_LIBS := $(TOPO_FAKE_DIR)/libnt-fake-versions.so $(TOPO_FAKE_DIR)/libibverbs.so.1

# The node checks and the probe's glue to them (probes/nodechecks.c, no MPI).
NODECHECK_TEST_BIN := $(BUILD)/tests/test_nodecheck
$(NODECHECK_TEST_BIN): $(OBJ)/tests/unit/test_nodecheck.o $(OBJ)/probes/nodechecks.o $(call nt_archives,judge engine node core)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $(OBJ)/tests/unit/test_nodecheck.o $(OBJ)/probes/nodechecks.o $(call nt_link,judge engine node core) $(CMOCKA_LIBS)

$(OBJ)/tests/unit/test_topo.o $(OBJ)/tests/unit/test_pcie.o $(OBJ)/tests/unit/test_software.o: \
    NT_CFLAGS += -DNT_TEST_FIXTURES=\"$(abspath tests/fixtures)\" \
                 -DNT_TEST_FAKE_DIR=\"$(TOPO_FAKE_DIR)\"

$(TOPO_TEST_BINS): $(BUILD)/tests/%: $(OBJ)/tests/unit/%.o $(call nt_archives,node core)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(call nt_link,node core) $(CMOCKA_LIBS)

$(TOPO_FAKE_DIR)/libnt-fake-versions.so: tests/unit/fake_versions.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(WARN) $(CFLAGS) -fPIC -shared -o $@ $<

$(TOPO_FAKE_DIR)/libibverbs.so.1: $(TOPO_FAKE_DIR)/libnt-fake-versions.so
	cp $< $(TOPO_FAKE_DIR)/libibverbs.so.1.14.50.1
	ln -sf libibverbs.so.1.14.50.1 $@

# Verdicts, thresholds and exit codes (docs/verdicts.md). They read
# tests/fixtures/thresholds/ relative to the repository root: they run from it.
VERDICT_TESTS := test_thresholds test_verdict test_exitcode
VERDICT_TEST_BINS := $(addprefix $(BUILD)/tests/,$(VERDICT_TESTS))

$(VERDICT_TEST_BINS): $(BUILD)/tests/%: $(OBJ)/tests/unit/%.o $(call nt_archives,judge engine node core)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(call nt_link,judge engine node core) $(CMOCKA_LIBS)

# test-unit runs them all, then the symbol graph of every object of `make all`
# (tests/unit/symbol_graph.py: no two files call each other, and the libraries of lib/ depend
# one way), which needs the whole build. test-topo and test-verdict run their part alone.
TEST_TARGETS += test-unit
.PHONY: test-unit test-topo test-verdict
# The tree's lints run here too (tests/lint/): the documents and the static-function names
# (--max: the functions the tree had to rename when the rule was written; 0 once renamed).
test-unit: $(UNIT_CORE_BINS) $(TOPO_TEST_BINS) $(TOPO_FAKE_LIBS) $(VERDICT_TEST_BINS) $(NODECHECK_TEST_BIN) $(JOB_TEST_BINS) $(CODES_GEN) all
	@rc=0; for t in $(UNIT_CORE_BINS) $(TOPO_TEST_BINS) $(VERDICT_TEST_BINS) $(NODECHECK_TEST_BIN) $(JOB_TEST_BINS); do \
	   (cd $(CURDIR) && $$t) || rc=1; done; \
	 $(CODES_GEN) | cmp -s - docs/codes.md || \
	   { echo "test-unit: docs/codes.md differs from the check table: run make docs-codes"; rc=1; }; \
	 tests/unit/symbol_graph.py $(OBJ) tests/unit/symbol_graph.allow || rc=1; \
	 tests/lint/check-docs.sh || rc=1; python3 tests/lint/static-names.py || rc=1; \
	 python3 tests/lint/golden-codes.py || rc=1; exit $$rc
test-topo: $(TOPO_TEST_BINS) $(TOPO_FAKE_LIBS)
	@fail=0; for t in $(TOPO_TEST_BINS); do $$t || fail=1; done; exit $$fail
test-verdict: $(VERDICT_TEST_BINS)
	@fail=0; for t in $(VERDICT_TEST_BINS); do (cd $(CURDIR) && $$t) || fail=1; done; exit $$fail
