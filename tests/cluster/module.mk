# Multi-host scenarios on the namespace test cluster (tests/cluster/README.md): make test runs
# each once with --quick (or skips with the reason); test-cluster-long repeats them and prints
# the false-alarm count and each fault's detection.
TEST_TARGETS += test-cluster
.PHONY: test-cluster test-cluster-long
test-cluster: all
	@tests/cluster/run.sh
test-cluster-long: all
	@tests/cluster/run.sh --long
	@tests/cluster/fabric.sh --long
	@BUILD=$(BUILD) tests/watch-cluster/run.sh --long
# The two-level fabric scenarios (tests/cluster/fabric.sh): once each in make test, the healthy
# one 10 times in test-cluster-long.
TEST_TARGETS += test-fabric
.PHONY: test-fabric
test-fabric: all
	@tests/cluster/fabric.sh
