# nettune-probe: the only binary that links MPI (launcher_mpi.c and the MPI probe). It needs
# MPI and rdma-core's headers to build (libibverbs-dev; libibverbs itself is opened at run time).
PROBE_SRCS += probes/main.c probes/params.c probes/registry.c probes/run.c probes/nodes.c probes/identify.c \
              probes/inventory.c probes/nodechecks.c probes/probe_util.c probes/drain.c probes/launcher_mpi.c probes/mpi/probe_mpi.c \
              probes/fabric/fabric.c probes/fabric/fabric_rdma.c
# The GPU probe: its kernels come from nvcc when the build has one (an embedded fatbin for
# sm_75 up to the newest architecture nvcc offers, plus compute_75 PTX); without nvcc the
# copy-engine probes still build (probes/gpu/fatbin_none.c).
PROBE_SRCS += probes/gpu/probe_gpu.c
NVCC ?= $(firstword $(wildcard $(CUDA_HOME)/bin/nvcc) $(shell command -v nvcc 2>/dev/null))
GPU_ARCHS := $(if $(NVCC),$(shell $(NVCC) --list-gpu-arch 2>/dev/null | sed -n 's/^compute_//p' | \
               awk '$$1 >= 75' | sort -n | uniq))
GPU_FATBIN := $(OBJ)/probes/gpu/kernels.fatbin
ifneq ($(strip $(GPU_ARCHS)),)
GPU_FATBIN_OBJ := $(OBJ)/probes/gpu/fatbin.o
$(GPU_FATBIN): probes/gpu/kernels.cu
	@mkdir -p $(dir $@)
	$(NVCC) -fatbin -O3 $(foreach a,$(GPU_ARCHS),-gencode arch=compute_$(a),code=sm_$(a)) \
	    -gencode arch=compute_75,code=compute_75 -o $@ $<
$(GPU_FATBIN_OBJ): probes/gpu/fatbin.S $(GPU_FATBIN)
	@mkdir -p $(dir $@)
	$(CC) -c -DNT_FATBIN_PATH='"$(GPU_FATBIN)"' -o $@ probes/gpu/fatbin.S
else
GPU_FATBIN_OBJ := $(OBJ)/probes/gpu/fatbin_none.o
endif

ifeq ($(HAVE_PROBE),1)
ALL_TARGETS += $(BIN)/nettune-probe
PROBE_OBJS = $(patsubst %.c,$(OBJ)/mpi/%.o,$(PROBE_SRCS))

# Probe objects build with mpicc (MPI headers) into their own folder.
$(OBJ)/mpi/%.o: %.c
	@mkdir -p $(dir $@)
	$(MPICC) $(NT_CFLAGS) $(IBV_CFLAGS) -Iprobes -Ireports -c $< -o $@

# The judge and the renderers (the summary printed at the end is the text renderer's) are
# archives of their own, shared with the tests and nettune report.
# --tuning-file loads the file with the plugin's own parser (the one definition of
# nettune.tuning/1 and of its fnv1a64 hash).
$(OBJ)/mpi/probes/inventory.o: NT_CFLAGS += -I$(NTP_SRC)
$(BIN)/nettune-probe: $$(PROBE_OBJS) $(GPU_FATBIN_OBJ) $$(RENDER_LIB) $$(NT_TUNING_FMT_OBJ) $(call nt_archives,judge engine node core)
	@mkdir -p $(dir $@)
	$(MPICC) -o $@ $(PROBE_OBJS) $(GPU_FATBIN_OBJ) $(RENDER_LIB) $(NT_TUNING_FMT_OBJ) $(call nt_link,judge engine node core)
endif
