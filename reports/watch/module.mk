# nettune watch: build/bin/nettune-watch, the job's NCCL telemetry judged (docs/watch.md). The
# readers and the alignment are the nccl archive's (lib/nccl/inspector.c, jobalign.c); the check
# table and the output writer the core's: libc, cJSON and zlib. Its tests are in test-unit
# (tests/unit/test_jobrec.c) and test-report (tests/report/test_watch.py).
WATCH_DIR   := reports/watch
WATCH_SRCS  := $(addprefix $(WATCH_DIR)/,params.c finding.c behind.c judge.c judge_node.c run.c drain.c \
                 model.c series.c)
WATCH_OBJS  := $(WATCH_SRCS:%.c=$(OBJ)/%.o)
WATCH_PARTS := judge engine node nccl core
# --drain is the probe's drain path (probes/drain.c, plain C: no MPI); the writers are the
# renderers' (libntrender: reports/render_watch.c).
# --report is the tuner's model and its input from a probe report (tuner/inputs.c); defined
# later (tuner/module.mk), so expanded when the rule runs.
WATCH_EXTRA = $(OBJ)/probes/drain.o $(RENDER_LIB) $(OBJ)/tuner/inputs.o $(TUNER_MODEL_LIB)
$(OBJ)/$(WATCH_DIR)/%.o: NT_CFLAGS += -Iprobes -Ireports -I.
WATCH_BIN   := $(BIN)/nettune-watch

ALL_TARGETS += $(WATCH_BIN)

$(WATCH_BIN): $(WATCH_OBJS) $(OBJ)/$(WATCH_DIR)/main.o $$(WATCH_EXTRA) $(call nt_archives,$(WATCH_PARTS))
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Wl,--as-needed -o $@ $(WATCH_OBJS) $(OBJ)/$(WATCH_DIR)/main.o $(WATCH_EXTRA) $(call nt_link,$(WATCH_PARTS))
