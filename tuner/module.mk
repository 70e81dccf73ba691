# The tuner. The model (tuner/model*.c, nccl_versions.c, eligible.c, print_model.c)
# is a static library build/lib/libnttuner_model.a with no MPI, CUDA or NCCL; the reader of
# NCCL's printed table is read by lib/nccl/nccl_table.c (libntnccl).

TUNER_MODEL_SRCS := $(sort $(wildcard tuner/model*.c tuner/nccl_versions*.c tuner/eligible*.c) tuner/print_model.c)
TUNER_MODEL_LIB := $(LIBDIR)/libnttuner_model.a
ALL_TARGETS += $(TUNER_MODEL_LIB)

# Tuner sources and their tests include "tuner/model.h" from the repository root.
$(OBJ)/tuner/%.o $(OBJ)/tests/tuner/%.o: NT_CFLAGS += -I.

$(TUNER_MODEL_LIB): $(patsubst %.c,$(OBJ)/%.o,$(TUNER_MODEL_SRCS))
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

# Model tests (cmocka): hand-computed cases per version difference, and the model against every
# table in tests/fixtures/nccl-tuning-tables/ (prints fitted/verified counts per file).
TUNER_MODEL_TESTS := $(patsubst tests/tuner/%.c,%,$(sort $(wildcard tests/tuner/test_model*.c tests/tuner/test_nccl_table*.c)))
TUNER_MODEL_TEST_BINS := $(addprefix $(BUILD)/tests/,$(TUNER_MODEL_TESTS))

$(TUNER_MODEL_TEST_BINS): $(BUILD)/tests/%: $(OBJ)/tests/tuner/%.o $(TUNER_MODEL_LIB) $(call nt_archives,nccl core)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(TUNER_MODEL_LIB) $(call nt_link,nccl core) $(CMOCKA_LIBS)

TEST_TARGETS += test-tuner-model
.PHONY: test-tuner-model
test-tuner-model: $(TUNER_MODEL_TEST_BINS) $(TUNER_MODEL_LIB) $(call nt_archives,nccl core)
	@fail=0; for t in $(TUNER_MODEL_TEST_BINS); do (cd $(CURDIR) && $$t) || fail=1; done; \
	sh tests/tuner/nccl-follow/test.sh || fail=1; exit $$fail

# Developer check, not in `make test`: the model against NCCL's own tuning.cc of every modelled
# tag, compiled with a shim (tests/tuner/nccl-diff/), on random communicators. Needs an
# NVIDIA/nccl git directory: make tuner-model-diff NCCL_GIT=/path/to/nccl/.git [NCCL_DIFF_N=5000]
.PHONY: tuner-model-diff
tuner-model-diff: $(TUNER_MODEL_LIB) $(call nt_archives,nccl core)
	@test -n "$(NCCL_GIT)" || { echo "tuner-model-diff: set NCCL_GIT to an NVIDIA/nccl git directory"; exit 2; }
	@NT_MODEL_LIBS="$(TUNER_MODEL_LIB) $(call nt_link,nccl core)" \
	  tests/tuner/nccl-diff/run.sh "$(NCCL_GIT)" $(or $(NCCL_DIFF_N),5000)

# Developer check, not in `make test`: what a new NCCL release changes for nettune
# (docs/following-nccl.md): make nccl-follow NCCL_GIT=/path/to/nccl/.git TAG=vX.Y.Z-1
# [BASE=vA.B.C-1] [NCCL_DIFF_N=5000]. It fails while the model lacks TAG's row.
.PHONY: nccl-follow
nccl-follow: $(TUNER_MODEL_LIB) $(call nt_archives,nccl core)
	@test -n "$(NCCL_GIT)" && test -n "$(TAG)" || { echo "nccl-follow: set NCCL_GIT to an NVIDIA/nccl git directory and TAG to its release tag (vX.Y.Z-1)"; exit 2; }
	@NT_MODEL_LIBS="$(TUNER_MODEL_LIB) $(call nt_link,nccl core)" \
	  python3 tests/tuner/nccl-follow/nccl-follow.py --git "$(NCCL_GIT)" --tag "$(TAG)" $(if $(BASE),--base "$(BASE)") --diff-n $(or $(NCCL_DIFF_N),5000)

# nettune-tune (inputs, replay, search, outputs; tuner/main.c, params.c, run.c). No MPI, CUDA
# or NCCL: the NCCL readers and the core, the doctor's rules, the model library, the plugin's tuning-file
# definition (plugins/nccl-tuner/src/nt_tuning.c) and cJSON.
TUNE_SRCS := tuner/inputs.c tuner/replay.c tuner/search.c tuner/write.c tuner/env_advice.c \
             tuner/params.c tuner/run.c tuner/baseline.c \
             tuner/measured_fmt.c
# The baselines are judged by the doctor's own busbw rule (tuner/baseline.c): its objects.
# reports/doctor/module.mk is read after this file: expanded at link time ($$).
TUNE_DOCTOR_OBJS = $(DOCTOR_OBJS)
TUNE_OBJS := $(patsubst %.c,$(OBJ)/%.o,$(TUNE_SRCS)) $(NT_TUNING_FMT_OBJ)
.SECONDEXPANSION:
TUNE_BIN  := $(BIN)/nettune-tune
ALL_TARGETS += $(TUNE_BIN)
$(OBJ)/tuner/%.o $(OBJ)/tests/tuner/%.o: NT_CFLAGS += -I$(NTP_SRC)

$(TUNE_BIN): $(OBJ)/tuner/main.o $(TUNE_OBJS) $$(TUNE_DOCTOR_OBJS) $(TUNER_MODEL_LIB) $(call nt_archives,judge node nccl core)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Wl,--as-needed -o $@ $(OBJ)/tuner/main.o $(TUNE_OBJS) $(TUNE_DOCTOR_OBJS) \
	  $(TUNER_MODEL_LIB) $(call nt_link,judge node nccl core)

# Tests of the CLI parts (cmocka, tests/tuner/test_tune.c) and the command end to end
# (tests/tuner/run-cli.sh: exit codes, byte-identical files, ldd, the plugin driven as NCCL drives
# it on the written file).
TUNE_TEST_BIN := $(BUILD)/tests/test_tune
TUNE_E2E_BIN  := $(BUILD)/tests/test_tune_e2e
$(TUNE_TEST_BIN): $(OBJ)/tests/tuner/test_tune.o $(TUNE_OBJS) $$(TUNE_DOCTOR_OBJS) $(TUNER_MODEL_LIB) $(call nt_archives,judge node nccl core)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(TUNE_OBJS) $(TUNE_DOCTOR_OBJS) $(TUNER_MODEL_LIB) \
	  $(call nt_link,judge node nccl core) $(CMOCKA_LIBS)
$(TUNE_E2E_BIN): $(OBJ)/tests/tuner/test_tune_e2e.o $(TUNE_OBJS) $$(TUNE_DOCTOR_OBJS) $(TUNER_MODEL_LIB) $(call nt_archives,judge node nccl core)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(TUNE_OBJS) $(TUNE_DOCTOR_OBJS) $(TUNER_MODEL_LIB) \
	  $(call nt_link,judge node nccl core) $(CMOCKA_LIBS) -ldl

TEST_TARGETS += test-tune
.PHONY: test-tune
test-tune: $(TUNE_TEST_BIN) $(TUNE_BIN) $(wildcard tests/tuner/test_tune_e2e.c) $(if $(wildcard tests/tuner/test_tune_e2e.c),$(TUNE_E2E_BIN)) $(NTP_LIB) $(BIN)/nettune $(filter $(BIN)/nettune-probe $(BIN)/nettune-report $(BIN)/nettune-doctor $(BIN)/nettune-tune-measure,$(ALL_TARGETS))
	@$(TUNE_TEST_BIN)
	@if [ -x $(TUNE_E2E_BIN) ]; then $(TUNE_E2E_BIN) $(TUNE_BIN) $(NTP_LIB); fi
	@if [ -f tests/tuner/run-cli.sh ]; then BUILD=$(BUILD) sh tests/tuner/run-cli.sh; fi
	@BUILD=$(BUILD) sh tests/tuner/golden.sh

BENCH_TARGETS += bench-tune
.PHONY: bench-tune
bench-tune: $(TUNE_BIN)
	@BUILD=$(BUILD) sh tests/tuner/bench.sh
