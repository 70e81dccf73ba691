# The RDMA probe: inventory, NCCL's port and GID choice, the ibverbs data path.
# Pure sources (no libibverbs) also build the unit tests. The data path needs rdma-core's
# headers to build (libibverbs-dev: without them nettune-probe is not built, `make config` says
# so) and opens the library at run time (ibv.c): nettune-probe has no libibverbs dependency and
# reports RDMA skipped, with the reason, on a node without it.
RDMA_PURE_SRCS := probes/rdma/rates.c probes/rdma/gid.c probes/rdma/hca_filter.c \
                  probes/rdma/counters.c probes/rdma/inventory.c probes/rdma/portcap.c \
                  probes/rdma/portcap_sys.c probes/rdma/gpu_link.c probes/rdma/nodecheck_rdma.c
RDMA_PROBE_SRCS := $(RDMA_PURE_SRCS) probes/rdma/ibv.c probes/rdma/verbs_path.c probes/rdma/gpu_mem.c \
                   probes/rdma/numa_bind.c probes/rdma/probe_rdma.c
PROBE_SRCS += $(RDMA_PROBE_SRCS)

# Unit tests (cmocka): each test compiled from its source, linked with the pure sources' objects
# (built once, without MPI, for every test) and the libraries they call.
RDMA_UNIT_TESTS := test_rdma_rates test_rdma_gid test_rdma_hca test_rdma_counters \
                   test_rdma_inventory test_rdma_portcap test_rdma_gpu test_rdma_nodecheck
RDMA_UNIT_BINS := $(addprefix $(BUILD)/tests/,$(RDMA_UNIT_TESTS))
RDMA_PURE_OBJS := $(patsubst %.c,$(OBJ)/%.o,$(RDMA_PURE_SRCS))
$(RDMA_PURE_OBJS) $(patsubst %,$(OBJ)/tests/rdma/%.o,$(RDMA_UNIT_TESTS)): NT_CFLAGS += -Iprobes -Iprobes/rdma
$(OBJ)/tests/rdma/%.o: NT_CFLAGS += -DNT_TEST_FIXTURES=\"$(abspath tests/fixtures)\"

$(RDMA_UNIT_BINS): $(BUILD)/tests/%: $(OBJ)/tests/rdma/%.o $(RDMA_PURE_OBJS) $(call nt_archives,judge engine node core)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(RDMA_PURE_OBJS) $(call nt_link,judge engine node core) $(CMOCKA_LIBS)

.PHONY: test-rdma-unit test-rdma-vm
test-rdma-unit: $(RDMA_UNIT_BINS)
	@fail=0; for t in $(RDMA_UNIT_BINS); do $$t || fail=1; done; exit $$fail

# The soft-RoCE VM (tests/rdma-vm/README.md): boots Debian's kernel with rdma_rxe under qemu
# and runs nettune-probe for real. Skips with the reason when this machine cannot run it.
test-rdma-vm: all
	@tests/rdma-vm/run.sh

TEST_TARGETS += test-rdma-unit test-rdma-vm
