# nettune-probe: the only binary that links MPI (launcher_mpi.c and the MPI probe).
PROBE_SRCS += probes/main.c probes/params.c probes/registry.c probes/run.c probes/nodes.c probes/judge.c \
              probes/inventory.c probes/probe_util.c probes/drain.c probes/launcher_mpi.c probes/mpi/probe_mpi.c
ifeq ($(wildcard probes/rdma/module.mk),)
PROBE_SRCS += probes/rdma_none.c
endif
PROBE_LDLIBS = $(if $(filter 1,$(HAVE_IBVERBS)),$(IBV_LIBS))

ifeq ($(HAVE_MPI),1)
ALL_TARGETS += $(BIN)/nettune-probe
PROBE_OBJS = $(patsubst %.c,$(OBJ)/mpi/%.o,$(PROBE_SRCS))

# Probe objects build with mpicc (MPI headers) into their own folder.
$(OBJ)/mpi/%.o: %.c
	@mkdir -p $(dir $@)
	$(MPICC) $(NT_CFLAGS) -Iprobes -c $< -o $@

$(BIN)/nettune-probe: $$(PROBE_OBJS) $(LIBNT)
	@mkdir -p $(dir $@)
	$(MPICC) -o $@ $(PROBE_OBJS) $(LIBNT) $(PROBE_LDLIBS) $(LIBNT_LDLIBS)
endif
