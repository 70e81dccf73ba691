# nettune watch on the namespace cluster (tests/watch-cluster/run.sh, docs/watch.md "What was
# verified here"): ntc-trainer, an MPI program writing NCCL Inspector's JSON records, runs on 4
# hosts while faults are injected mid-run; `nettune watch --follow` must name the host or rank.
# make test-watch-cluster runs one healthy stretch and each fault once (or skips with the reason);
# test-cluster-long runs tests/watch-cluster/run.sh --long too (repeated healthy runs).
WATCH_CLUSTER_TRAINER := $(BUILD)/watch-cluster/ntc-trainer

ifeq ($(HAVE_MPI),1)
$(WATCH_CLUSTER_TRAINER): tests/watch-cluster/trainer.c
	@mkdir -p $(dir $@)
	$(MPICC) -std=gnu11 $(WARN) $(CFLAGS) -D_GNU_SOURCE -o $@ $< -lpthread
endif

# test-cluster-long (tests/cluster/module.mk) runs the --long variant: it needs the trainer.
test-cluster-long: $(if $(filter 1,$(HAVE_MPI)),$(WATCH_CLUSTER_TRAINER))

# Not in make test yet: healthy stretches name nobody (0 alarms in 7 suite runs and in 142
# documents judged again from 10 healthy recordings), but after the 10% loss stage the lossy
# host's rank can be named a straggler in the next stage (a CI-style run on an idle machine:
# rank 1 on h3, the loss host, named while the real straggler was rank 5), which fails the
# suite; a rate fault was also missed once in 7 runs under load. Run it by name, and in
# test-cluster-long.
.PHONY: test-watch-cluster
test-watch-cluster: all $(if $(filter 1,$(HAVE_MPI)),$(WATCH_CLUSTER_TRAINER))
	@BUILD=$(BUILD) tests/watch-cluster/run.sh
