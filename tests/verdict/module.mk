# Verdicts, thresholds and exit codes (issue 2 items 4 and 7): the cmocka suites run as
# `make test-verdict` (the judge's sources are in probes/judge/module.mk). Binaries go under build/tests/.

VERDICT_TESTS := test_thresholds test_verdict test_exitcode
VERDICT_TEST_BINS := $(addprefix $(BUILD)/tests/,$(VERDICT_TESTS))

$(VERDICT_TEST_BINS): $(BUILD)/tests/%: $(OBJ)/tests/unit/%.o $(JUDGE_LIB) $(LIBNT)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(JUDGE_LIB) $(LIBNT) $(LIBNT_LDLIBS) $(CMOCKA_LIBS)

# The tests read tests/fixtures/thresholds/ relative to the repository root: run them from it.
TEST_TARGETS += test-verdict
.PHONY: test-verdict
test-verdict: $(VERDICT_TEST_BINS)
	@fail=0; for t in $(VERDICT_TEST_BINS); do (cd $(CURDIR) && $$t) || fail=1; done; exit $$fail
