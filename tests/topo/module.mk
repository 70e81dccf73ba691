# Topology inventory, PCIe link state without traffic and software versions (docs/topology.md):
# the cmocka suites run as `make test-topo` (the library sources are in lib/module.mk).

TOPO_TESTS     := test_topo test_pcie test_software
TOPO_TEST_BINS := $(addprefix $(BUILD)/tests/,$(TOPO_TESTS))
TOPO_FAKE_DIR  := $(abspath $(BUILD))/tests/fake
# A stand-in for libcuda/libcudart/libnccl (their version calls) and for an rdma-core
# libibverbs.so.1 -> libibverbs.so.1.14.50.1, so the dlopen paths run for real without them.
TOPO_FAKE_LIBS := $(TOPO_FAKE_DIR)/libnt-fake-versions.so $(TOPO_FAKE_DIR)/libibverbs.so.1

$(OBJ)/tests/unit/test_topo.o $(OBJ)/tests/unit/test_pcie.o $(OBJ)/tests/unit/test_software.o: \
    NT_CFLAGS += -DNT_TEST_FIXTURES=\"$(abspath tests/fixtures)\" \
                 -DNT_TEST_FAKE_DIR=\"$(TOPO_FAKE_DIR)\"

$(TOPO_TEST_BINS): $(BUILD)/tests/%: $(OBJ)/tests/unit/%.o $(LIBNT)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(LIBNT) $(LIBNT_LDLIBS) $(CMOCKA_LIBS)

$(TOPO_FAKE_DIR)/libnt-fake-versions.so: tests/unit/fake_versions.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(WARN) $(CFLAGS) -fPIC -shared -o $@ $<

$(TOPO_FAKE_DIR)/libibverbs.so.1: $(TOPO_FAKE_DIR)/libnt-fake-versions.so
	cp $< $(TOPO_FAKE_DIR)/libibverbs.so.1.14.50.1
	ln -sf libibverbs.so.1.14.50.1 $@

.PHONY: test-topo
test-topo: $(TOPO_TEST_BINS) $(TOPO_FAKE_LIBS)
	@fail=0; for t in $(TOPO_TEST_BINS); do $$t || fail=1; done; exit $$fail

TEST_TARGETS += test-topo
