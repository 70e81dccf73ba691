# 32 ranks as 16 fake nodes under mpirun on this machine (docs/scale.md): --quick and --full
# complete with the schedule's rounds and pairs, no node blamed on a healthy machine.
TEST_TARGETS += test-np32
.PHONY: test-np32
test-np32: all
	@$(INTEGRATION_ENV) BIN=$(BIN) tests/scale/run.sh
