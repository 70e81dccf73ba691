# The tuner (issue 9). The model (tuner/model*.c, nccl_versions.c, eligible.c, print_model.c)
# is a static library build/lib/libnttuner_model.a with no MPI, CUDA or NCCL; the reader of
# NCCL's printed table joins libnettune (lib/nccl_table.c).
LIBNT_SRCS += lib/nccl_table.c

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

$(TUNER_MODEL_TEST_BINS): $(BUILD)/tests/%: $(OBJ)/tests/tuner/%.o $(TUNER_MODEL_LIB) $(LIBNT)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(TUNER_MODEL_LIB) $(LIBNT) $(LIBNT_LDLIBS) $(CMOCKA_LIBS)

TEST_TARGETS += test-tuner-model
.PHONY: test-tuner-model
test-tuner-model: $(TUNER_MODEL_TEST_BINS)
	@fail=0; for t in $(TUNER_MODEL_TEST_BINS); do (cd $(CURDIR) && $$t) || fail=1; done; exit $$fail
