# nettune-tune-measure (tuner/measure/measure.h, docs/tuner-measure.md). Links no MPI,
# CUDA or NCCL: libcuda.so.1 and libnccl.so.2 are dlopened at run time (backend_nccl.c). The
# TCP launcher is in libntengine (lib/engine/launcher_tcp.c).

MEASURE_SRCS := tuner/measure/measure_plan.c tuner/measure/measure.c tuner/measure/backend_fake.c \
                tuner/measure/capture.c tuner/measure/verify_peer.c tuner/measure/params.c \
                tuner/measure/run.c \
                tuner/measure/backend_nccl.c
MEASURE_OBJS := $(patsubst %.c,$(OBJ)/%.o,$(MEASURE_SRCS)) $(OBJ)/tuner/measured_fmt.o \
                $(OBJ)/tuner/inputs.o \
                $(NT_TUNING_FMT_OBJ) $(OBJ)/$(NTP_SRC)/nt_index.o
MEASURE_BIN  := $(BIN)/nettune-tune-measure
ALL_TARGETS  += $(MEASURE_BIN)
$(OBJ)/tuner/measure/%.o $(OBJ)/tests/tuner/measure/%.o: NT_CFLAGS += -I. -Ituner -Ituner/measure -I$(NTP_SRC)

$(MEASURE_BIN): $(OBJ)/tuner/measure/main.o $(MEASURE_OBJS) $(LIBDIR)/libnttuner_model.a $(call nt_archives,engine node nccl core)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Wl,--as-needed -o $@ $(OBJ)/tuner/measure/main.o $(MEASURE_OBJS) \
	  $(LIBDIR)/libnttuner_model.a $(call nt_link,engine node nccl core)

# Tests (no GPU): the plan reader, the sweep's lockstep / confirmation / output on the fake
# backend with the in-process launcher (cmocka), and the command end to end: plan -> measure
# (fake backend, forked local ranks over TCP) -> nettune tune --measured, and ldd.
MEASURE_TEST_BIN := $(BUILD)/tests/test_measure
$(MEASURE_TEST_BIN): $(OBJ)/tests/tuner/measure/test_measure.o $(MEASURE_OBJS) $(LIBDIR)/libnttuner_model.a $(call nt_archives,engine node nccl core)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(MEASURE_OBJS) $(LIBDIR)/libnttuner_model.a $(call nt_link,engine node nccl core) $(CMOCKA_LIBS)

TEST_TARGETS += test-measure
.PHONY: test-measure
test-measure: $(MEASURE_TEST_BIN) $(MEASURE_BIN) $(BIN)/nettune-tune $(NTP_LIB)
	@$(MEASURE_TEST_BIN)
	@BUILD=$(BUILD) sh tests/tuner/measure/run-cli.sh
