# make bench: timing targets as ratios against references measured in the same run.
ifeq ($(HAVE_MPI),1)
$(BUILD)/tests/bench_mpi: tests/bench/bench_mpi.c $(OBJ)/mpi/probes/mpi/probe_mpi.o $(LIBNT)
	@mkdir -p $(dir $@)
	$(MPICC) $(NT_CFLAGS) -Iprobes -o $@ tests/bench/bench_mpi.c $(OBJ)/mpi/probes/mpi/probe_mpi.o \
	    $(OBJ)/mpi/probes/launcher_mpi.o $(OBJ)/mpi/probes/probe_util.o $(LIBNT) $(LIBNT_LDLIBS)

BENCH_TARGETS += bench-mpi bench-schedule
.PHONY: bench-mpi bench-schedule
bench-mpi: $(BUILD)/tests/bench_mpi
	OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --oversubscribe -np 2 $<
bench-schedule: all
	tests/bench/bench_schedule.sh
endif
