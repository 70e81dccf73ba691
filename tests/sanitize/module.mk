# The sanitized suites in CI (docs/fuzzing.md): the unit (verdicts, topology), report, doctor,
# plugin and integration suites built with ASan + UBSan into build-san/ (mk/sanitize.mk,
# docs/fuzzing.md) and run there; build/ is not touched. `make test SANITIZE=1` runs every suite
# that way instead (test-rdma-unit too: it compiles the RDMA sources once per test binary, 56
# compilations, which alone took 6 minutes here under ASan).
# tests/sanitize/run.sh runs two lanes side by side (CI has 2 cores), then the last suites
# alone (test-integration measures deadlines and signals).
SANITIZE_LANE1 := test-report
SANITIZE_LANE2 := test-unit test-doctor test-plugin
SANITIZE_LAST  := test-integration
SANITIZE_SUITES := $(SANITIZE_LANE1) $(SANITIZE_LANE2) $(SANITIZE_LAST)
TEST_TARGETS += test-sanitize
.PHONY: test-sanitize
ifeq ($(SANITIZE),1)
test-sanitize:
	@echo "test-sanitize: this build is the sanitized one already"
else
test-sanitize:
	@+$(MAKE) --no-print-directory $(NT_SUBJOBS) SANITIZE=1 all
	@+MAKE="$(MAKE) SANITIZE=1" tests/sanitize/run.sh "$(SANITIZE_LANE1)" "$(SANITIZE_LANE2)" \
	    "$(SANITIZE_LAST)"
endif
