# make bench: timing targets as ratios against references measured in the same run.
ifeq ($(HAVE_PROBE),1)
$(BUILD)/tests/bench_mpi: tests/bench/bench_mpi.c $(OBJ)/mpi/probes/mpi/probe_mpi.o $(call nt_archives,judge engine node core)
	@mkdir -p $(dir $@)
	$(MPICC) $(NT_CFLAGS) -Iprobes -o $@ tests/bench/bench_mpi.c $(OBJ)/mpi/probes/mpi/probe_mpi.o \
	    $(OBJ)/mpi/probes/launcher_mpi.o $(OBJ)/mpi/probes/probe_util.o $(call nt_link,judge engine node core)

# The engine at scale without a cluster: nettune-probe's engine objects with a
# synthetic link probe in place of the MPI one (tests/bench/bench_scale.c defines
# nt_mpi_probe_ops, nt_rdma_probe_ops and nt_gpu_probe_ops, so the real probes are left out), over
# the in-process launcher. --wrap times the judge, and builds the topology, the node table and
# the steps once for all ranks (threads of one process).
BENCH_SCALE_OBJS := $(addprefix $(OBJ)/mpi/probes/,registry.o run.o inventory.o nodes.o identify.o \
                    nodechecks.o params.o probe_util.o fabric/fabric.o) $(NT_TUNING_FMT_OBJ)
$(BUILD)/tests/bench_scale: tests/bench/bench_scale.c $(BENCH_SCALE_OBJS) $(RENDER_LIB) $(call nt_archives,judge engine node core)
	@mkdir -p $(dir $@)
	$(MPICC) $(NT_CFLAGS) -Iprobes -Wl,--wrap=nt_judge_finish,--wrap=nt_topo_load,--wrap=nt_topo_destroy \
	    -Wl,--wrap=nt_nodes_build,--wrap=nt_nodes_free,--wrap=nt_steps_build,--wrap=nt_steps_free \
	    -Wl,--wrap=nt_machine_ranks \
	    -o $@ tests/bench/bench_scale.c \
	    $(BENCH_SCALE_OBJS) $(RENDER_LIB) $(call nt_link,judge engine node core)

BENCH_TARGETS += bench-mpi bench-schedule bench-scale
.PHONY: bench-mpi bench-schedule bench-scale
bench-scale: $(BUILD)/tests/bench_scale
	@tests/bench/bench_scale.sh $<
bench-mpi: $(BUILD)/tests/bench_mpi
	OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --oversubscribe -np 2 $<
bench-schedule: all
	tests/bench/bench_schedule.sh
endif

# nettune report --history over 1,000 reports of 64 nodes against cJSON's parse of the same files.
$(BUILD)/tests/bench_history: tests/bench/bench_history.c
	@mkdir -p $(dir $@)
	$(CC) $(NT_CFLAGS) -o $@ $< $(CJSON_LIBS)
BENCH_TARGETS += bench-history
.PHONY: bench-history
bench-history: $(BUILD)/tests/bench_history $(BIN)/nettune-report
	@tests/bench/bench_history.sh $(BUILD)/tests/bench_history $(BIN)/nettune
