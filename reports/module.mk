# nettune-report: render, export, diff and validate nettune documents. It links the
# core (JSON helpers, logging, the report reader), the engine (the pair schedule, for --diff),
# the judge (the thresholds file, for --validate) and the NCCL readers (the doctor's knowledge
# base names NCCL versions): cJSON and zlib, so the binary starts without MPI, CUDA, RDMA, hwloc
# or libxml2.
# The command itself is main.c, params.c and run.c (REPORT_CMD_SRCS), outside the archive.
REPORT_CMD_SRCS := reports/main.c reports/params.c reports/run.c
REPORT_SRCS := $(REPORT_CMD_SRCS) reports/buf.c reports/table.c \
               reports/validate.c reports/render_text.c reports/render_md.c \
               reports/render_html.c reports/render_prom.c reports/render_csv.c reports/render_diagnosis.c \
               reports/render_tuning.c reports/diff.c reports/history.c \
               reports/render_watch.c reports/render_fabric.c
# The renderers and readers are one archive, libntrender, that nettune-probe links too (its
# closing summary is the text renderer's).
RENDER_LIB := $(LIBDIR)/libntrender.a
ALL_TARGETS += $(RENDER_LIB)
$(RENDER_LIB): $(patsubst %.c,$(OBJ)/%.o,$(filter-out $(REPORT_CMD_SRCS),$(REPORT_SRCS)))
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^
# The tuning-file format is the plugin's (one definition): its parser is compiled in.
REPORT_OBJS := $(patsubst %.c,$(OBJ)/%.o,$(REPORT_CMD_SRCS)) $(RENDER_LIB) $(OBJ)/reports/schema_blob.o $(NT_TUNING_FMT_OBJ) \
               $(OBJ)/reports/doctor/kb.o $(OBJ)/reports/doctor/fmtmatch.o $(OBJ)/reports/doctor/kb_data.o
$(OBJ)/reports/%.o: NT_CFLAGS += -I$(NTP_SRC)
ALL_TARGETS += $(BIN)/nettune-report

# The schemas are compiled in with .incbin: rebuild when they change. The diagnosis schema
# (nettune doctor's) is optional: without it --validate does not know nettune.diagnosis/1.
REPORT_DIAG_SCHEMA := $(wildcard reports/schema/diagnosis.schema.json)
$(OBJ)/reports/schema_blob.o: reports/schema_blob.S reports/schema/report.schema.json \
                              reports/schema/plugin-report.schema.json reports/schema/watch.schema.json \
                              reports/schema/history.schema.json \
                              $(REPORT_DIAG_SCHEMA)
	@mkdir -p $(dir $@)
	$(CC) $(if $(REPORT_DIAG_SCHEMA),-DNT_DIAGNOSIS_SCHEMA='"$(REPORT_DIAG_SCHEMA)"') -c $< -o $@

$(BIN)/nettune-report: $(REPORT_OBJS) $(call nt_archives,judge engine nccl core)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Wl,--as-needed -o $@ $(REPORT_OBJS) $(call nt_link,judge engine nccl core)

# Tests: tests/report/run.sh runs every case and ends with "report tests: N passed, N failed,
# N skipped". REPORT_TEST_ARGS passes options to it (e.g. -k html).
# nettune-doctor too, when the tree has it: the diagnosis agreement test runs it on the logs in
# tests/fixtures.
.PHONY: test-report
test-report: $(BIN)/nettune-report $(BIN)/nettune-watch $(if $(wildcard reports/doctor/module.mk),$(BIN)/nettune-doctor)
	@BUILD=$(BUILD) tests/report/run.sh $(REPORT_TEST_ARGS)
	@BUILD=$(BUILD) $$([ -x /usr/bin/python3 ] && echo /usr/bin/python3 || echo python3) tests/report/test_watch.py
	@BUILD=$(BUILD) $$([ -x /usr/bin/python3 ] && echo /usr/bin/python3 || echo python3) tests/report/test_watch_out.py
TEST_TARGETS += test-report
