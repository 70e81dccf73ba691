# nettune on a real Slurm (slurm-wlm + munge) on the namespace test cluster: docs/slurm.md,
# tests/slurm/run.sh. Skipped with the reason where namespaces or the packages are missing.
TEST_TARGETS += test-slurm
.PHONY: test-slurm
test-slurm: all
	@tests/slurm/run.sh
