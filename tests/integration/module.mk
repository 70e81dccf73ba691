# Integration tests: the real nettune-probe under mpirun on this machine.
TEST_TARGETS += test-integration
.PHONY: test-integration
test-integration: all
	@tests/integration/run.sh
