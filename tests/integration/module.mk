# Integration tests: the real nettune-probe under mpirun on this machine.
# Under SANITIZE=1 (docs/fuzzing.md, "Sanitizers"): no leak check in the MPI processes (Open MPI 4.1 keeps
# thousands of allocations until exit; matching them to suppressions costs minutes per run),
# and hwloc without its PCI plugin (libpciaccess reads pci.ids with one realloc per entry:
# tens of seconds per process under ASan; this machine has no GPU or RDMA device to find).
INTEGRATION_ENV := $(if $(filter 1,$(SANITIZE)),ASAN_OPTIONS=$(ASAN_OPTIONS):detect_leaks=0 HWLOC_COMPONENTS=-pci)
TEST_TARGETS += test-integration
.PHONY: test-integration
test-integration: all
	@$(INTEGRATION_ENV) BIN=$(BIN) tests/integration/run.sh
