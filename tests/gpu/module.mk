# GPU probes without a GPU (docs/gpu.md): the rules and matrix verdicts on recorded nvbandwidth
# matrices, the CUDA and NVML wrappers on stand-in libraries, and nettune-probe's no-driver and
# --checks-only runs (tests/gpu/no-gpu.sh). `make test-gpu`. tests/gpu/run.sh is for a GPU
# machine and is not part of it.
GPU_TESTS     := test_gpu_rules test_gpu_libs test_gpu_health
GPU_TEST_BINS := $(addprefix $(BUILD)/tests/,$(GPU_TESTS))
GPU_FAKE_DIR  := $(abspath $(BUILD))/tests/fake
GPU_FAKE_LIBS := $(GPU_FAKE_DIR)/libnt-fake-cuda.so $(GPU_FAKE_DIR)/libnt-fake-cuda-old.so \
                 $(GPU_FAKE_DIR)/libnt-fake-nvml.so $(GPU_FAKE_DIR)/libnt-fake-cuda-sim.so
GPU_TEST_CFLAGS = $(filter-out -MMD -MP,$(NT_CFLAGS)) -DNT_TEST_FIXTURES=\"$(abspath tests/fixtures)\" \
                  -DNT_TEST_FAKE_DIR=\"$(GPU_FAKE_DIR)\" \
                  $(if $(filter 1,$(HAVE_CUDA)),-DNT_TEST_CUDA_H=1 -isystem $(CUDA_HOME)/include)

$(GPU_TEST_BINS): $(BUILD)/tests/%: tests/gpu/%.c $(call nt_archives,judge engine node core)
	@mkdir -p $(dir $@)
	$(CC) $(GPU_TEST_CFLAGS) -o $@ $< $(call nt_link,judge engine node core) $(CMOCKA_LIBS)

$(GPU_FAKE_DIR)/libnt-fake-cuda.so: tests/gpu/fake_cuda.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(WARN) -Wno-unused-parameter $(CFLAGS) -fPIC -shared -o $@ $<
$(GPU_FAKE_DIR)/libnt-fake-cuda-old.so: tests/gpu/fake_cuda.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(WARN) -Wno-unused-parameter $(CFLAGS) -DNT_FAKE_OLD -fPIC -shared -o $@ $<
$(GPU_FAKE_DIR)/libnt-fake-cuda-sim.so: tests/gpu/fake_cuda_sim.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(WARN) $(CFLAGS) -D_GNU_SOURCE -fPIC -shared -o $@ $< -lpthread
$(GPU_FAKE_DIR)/libnt-fake-nvml.so: tests/gpu/fake_nvml.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(WARN) $(CFLAGS) -fPIC -shared -o $@ $<

# GPU pairs across ranks: the probe itself on the in-process launcher and the simulated GPUs.
GPU_IPC_BIN := $(BUILD)/tests/test_gpu_ipc
$(OBJ)/tests/gpu/test_gpu_ipc.o: tests/gpu/test_gpu_ipc.c
	@mkdir -p $(dir $@)
	$(CC) $(NT_CFLAGS) -Iprobes -Iprobes/gpu -DNT_TEST_FAKE_DIR=\"$(GPU_FAKE_DIR)\" -c $< -o $@
$(GPU_IPC_BIN): $(OBJ)/tests/gpu/test_gpu_ipc.o $(OBJ)/probes/gpu/probe_gpu.o $(OBJ)/probes/probe_util.o $(OBJ)/probes/nodechecks.o $(call nt_archives,judge engine node core)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^ $(call nt_ldlibs,judge engine node core) $(CMOCKA_LIBS) -ldl -lpthread

.PHONY: test-gpu
test-gpu: $(GPU_TEST_BINS) $(GPU_IPC_BIN) $(GPU_FAKE_LIBS) $(if $(filter 1,$(HAVE_PROBE)),$(BIN)/nettune-probe)
	@fail=0; for t in $(GPU_TEST_BINS) $(GPU_IPC_BIN); do (cd $(CURDIR) && $$t) || fail=1; done; \
	 if [ -x $(BIN)/nettune-probe ]; then \
	   tests/gpu/no-gpu.sh $(BIN)/nettune-probe $(GPU_FAKE_DIR) || fail=1; \
	 else echo "test-gpu: nettune-probe not built (see make config): probe runs skipped"; fi; \
	 exit $$fail

TEST_TARGETS += test-gpu
