# nettune watch: build/bin/nettune-watch, the job's NCCL telemetry judged (docs/watch.md). The
# readers and the alignment are the nccl archive's (lib/nccl/inspector.c, jobalign.c); the check
# table and the output writer the core's: libc, cJSON and zlib. Its tests are in test-unit
# (tests/unit/test_jobrec.c) and test-report (tests/report/test_watch.py).
WATCH_DIR   := reports/watch
WATCH_SRCS  := $(addprefix $(WATCH_DIR)/,params.c finding.c judge.c judge_node.c run.c)
WATCH_OBJS  := $(WATCH_SRCS:%.c=$(OBJ)/%.o)
WATCH_PARTS := nccl core
WATCH_BIN   := $(BIN)/nettune-watch

ALL_TARGETS += $(WATCH_BIN)

$(WATCH_BIN): $(WATCH_OBJS) $(OBJ)/$(WATCH_DIR)/main.o $(call nt_archives,$(WATCH_PARTS))
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $(WATCH_OBJS) $(OBJ)/$(WATCH_DIR)/main.o $(call nt_link,$(WATCH_PARTS))
