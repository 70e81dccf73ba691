# Verdicts, thresholds and exit codes (issue 2 items 4 and 7): library sources and the
# `test-verdict` suite (cmocka). Binaries go under build/tests/.
VERDICT_SRCS := lib/thresholds.c lib/verdict.c lib/exitcode.c
LIBNT_SRCS += $(VERDICT_SRCS)

VERDICT_TESTS := test_thresholds test_verdict test_exitcode
VERDICT_TEST_BINS := $(addprefix $(BUILD)/tests/,$(VERDICT_TESTS))

# What the verdict modules use from the core library (nt_log, nt_stats_median,
# nt_check_create). Until lib/report.c and friends exist, throwaway stubs stand in.
ifneq ($(wildcard lib/report.c),)
VERDICT_DEP_SRCS := $(wildcard lib/status.c lib/log.c lib/stats.c lib/report.c)
else
VERDICT_DEP_SRCS := $(wildcard tests/unit/stubs/*.c)
endif
VERDICT_LINK_OBJS := $(patsubst %.c,$(OBJ)/%.o,$(VERDICT_SRCS) $(VERDICT_DEP_SRCS))

$(VERDICT_TEST_BINS): $(BUILD)/tests/%: $(OBJ)/tests/unit/%.o $(VERDICT_LINK_OBJS)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^ $(CJSON_LIBS) $(CMOCKA_LIBS) -lm

TEST_TARGETS += test-verdict
.PHONY: test-verdict
test-verdict: $(VERDICT_TEST_BINS)
	@set -e; for t in $(VERDICT_TEST_BINS); do $$t; done
