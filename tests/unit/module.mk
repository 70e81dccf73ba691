# Unit tests of the core library and of nettune-probe's pure parts (cmocka).
UNIT_CORE_TESTS := test_core_stats test_core_schedule test_core_launcher test_core_bench \
                   test_core_io test_probe_nodes test_probe_judge test_probe_judge_index test_probe_drain
UNIT_CORE_BINS := $(addprefix $(BUILD)/tests/,$(UNIT_CORE_TESTS))
# nettune-probe sources without MPI, for test_probe_nodes.
UNIT_PROBE_OBJS := $(OBJ)/probes/nodes.o $(OBJ)/probes/identify.o $(OBJ)/probes/params.o $(OBJ)/probes/probe_util.o \
                   $(OBJ)/probes/registry.o $(OBJ)/tests/unit/fake_probe_ops.o

$(OBJ)/probes/%.o: probes/%.c
	@mkdir -p $(dir $@)
	$(CC) $(NT_CFLAGS) -Iprobes -c $< -o $@

$(OBJ)/tests/unit/%.o: tests/unit/%.c
	@mkdir -p $(dir $@)
	$(CC) $(NT_CFLAGS) -Iprobes -c $< -o $@

$(BUILD)/tests/test_probe_nodes: $(OBJ)/tests/unit/test_probe_nodes.o $(UNIT_PROBE_OBJS) $(LIBNT)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^ $(LIBNT_LDLIBS) $(CMOCKA_LIBS)

$(BUILD)/tests/test_probe_judge: $(OBJ)/tests/unit/test_probe_judge.o $(OBJ)/probes/judge.o $(LIBNT)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^ $(LIBNT_LDLIBS) $(CMOCKA_LIBS)

# The judge's indexes against the linear scans they replace (tests/unit/judge_ref.c).
$(BUILD)/tests/test_probe_judge_index: $(OBJ)/tests/unit/test_probe_judge_index.o \
                                      $(OBJ)/tests/unit/judge_ref.o $(OBJ)/probes/judge.o $(LIBNT)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^ $(LIBNT_LDLIBS) $(CMOCKA_LIBS)

$(BUILD)/tests/test_probe_drain: $(OBJ)/tests/unit/test_probe_drain.o $(OBJ)/probes/drain.o $(OBJ)/probes/judge.o $(LIBNT)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^ $(LIBNT_LDLIBS) $(CMOCKA_LIBS)

$(BUILD)/tests/test_core_%: $(OBJ)/tests/unit/test_core_%.o $(LIBNT)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^ $(LIBNT_LDLIBS) $(CMOCKA_LIBS)

TEST_TARGETS += test-unit
.PHONY: test-unit
# The tree's lints run here too (tests/lint/): the documents and the static-function names
# (--max: the functions the tree had to rename when the rule was written; 0 once renamed).
test-unit: $(UNIT_CORE_BINS)
	@rc=0; for t in $(UNIT_CORE_BINS); do $$t || rc=1; done; \
	 tests/lint/check-docs.sh || rc=1; python3 tests/lint/static-names.py --max 367 || rc=1; exit $$rc
