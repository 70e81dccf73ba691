# Unit tests of the core library and of nettune-probe's pure parts (cmocka).
UNIT_CORE_TESTS := test_core_stats test_core_schedule test_core_launcher test_core_bench \
                   test_core_io test_checks test_probe_nodes test_probe_judge test_probe_judge_index test_probe_drain
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

$(BUILD)/tests/test_probe_nodes: $(OBJ)/tests/unit/test_probe_nodes.o $(UNIT_PROBE_OBJS) $(LIBNT)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^ $(LIBNT_LDLIBS) $(CMOCKA_LIBS)

$(BUILD)/tests/test_probe_judge: $(OBJ)/tests/unit/test_probe_judge.o $(JUDGE_LIB) $(LIBNT)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^ $(LIBNT_LDLIBS) $(CMOCKA_LIBS)

# The judge's indexes against the linear scans they replace (tests/unit/judge_ref.c).
$(BUILD)/tests/test_probe_judge_index: $(OBJ)/tests/unit/test_probe_judge_index.o \
                                      $(OBJ)/tests/unit/judge_ref.o $(JUDGE_LIB) $(RENDER_LIB) $(LIBNT)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^ $(LIBNT_LDLIBS) $(CMOCKA_LIBS)

$(BUILD)/tests/test_probe_drain: $(OBJ)/tests/unit/test_probe_drain.o $(OBJ)/probes/drain.o $(JUDGE_LIB) $(LIBNT)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^ $(LIBNT_LDLIBS) $(CMOCKA_LIBS)

$(BUILD)/tests/test_checks: $(OBJ)/tests/unit/test_checks.o $(LIBNT)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^ $(LIBNT_LDLIBS) $(CMOCKA_LIBS)

# docs/codes.md is generated from the check table: `make docs-codes` writes it, test-unit fails
# when the committed page differs from a fresh generation.
CODES_GEN := $(BUILD)/tests/gen_codes
$(CODES_GEN): mk/gen_codes.c lib/checks.c include/nettune/checks.def include/nettune/checks.h
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(WARN) $(CFLAGS) -Iinclude -o $@ mk/gen_codes.c lib/checks.c
.PHONY: docs-codes
docs-codes: $(CODES_GEN)
	$(CODES_GEN) > docs/codes.md

$(BUILD)/tests/test_core_%: $(OBJ)/tests/unit/test_core_%.o $(LIBNT)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^ $(LIBNT_LDLIBS) $(CMOCKA_LIBS)

TEST_TARGETS += test-unit
.PHONY: test-unit
test-unit: $(UNIT_CORE_BINS) $(CODES_GEN)
	@rc=0; for t in $(UNIT_CORE_BINS); do (cd $(CURDIR) && $$t) || rc=1; done; \
	 $(CODES_GEN) | cmp -s - docs/codes.md || \
	   { echo "test-unit: docs/codes.md differs from the check table: run make docs-codes"; rc=1; }; \
	 exit $$rc
