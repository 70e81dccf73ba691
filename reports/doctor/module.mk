# nettune doctor: build/bin/nettune-doctor (libc, cJSON, libxml2 and zlib only) and its tests
# (its fuzz target, fuzz-doctor, is one line of tests/fuzz/module.mk, like every other).
# The knowledge base reports/doctor/knowledge.json is embedded at build time as a C array
# (generated with od, which every system has), so the binary needs no data file at run time;
# --kb FILE replaces it.

DOCTOR_DIR  := reports/doctor
# The readers it shares with nettune tune and nettune report come from the libraries: the NCCL
# readers (log lines and prefixes, nccl-tests, the anomaly rule, NCCL's topology XML through
# libxml2), the thresholds' expectations and the core (the line reader through zlib, the report
# reader, JSON): libc, cJSON, libxml2 and zlib.
DOCTOR_SRCS := $(addprefix $(DOCTOR_DIR)/,fmtmatch.c kb.c facts.c read_log.c read_operator.c read_nodefiles.c rules.c \
                 rules_operator.c output.c output_operator.c)
DOCTOR_OBJS := $(DOCTOR_SRCS:%.c=$(OBJ)/%.o) $(OBJ)/$(DOCTOR_DIR)/kb_data.o
# The ibnetdiscover/iblinkinfo reader (libc and the core's log only), not all of libntnode.
DOCTOR_OBJS += $(OBJ)/lib/node/ibtopo.o
# The command itself (main.c, params.c, run.c) is linked into nettune-doctor only: nettune tune
# links DOCTOR_OBJS and has its own main.
DOCTOR_CMD_OBJS := $(addprefix $(OBJ)/$(DOCTOR_DIR)/,main.o params.o run.o)
DOCTOR_PARTS := judge node nccl core
DOCTOR_BIN  := $(BIN)/nettune-doctor
DOCTOR_TEST_BIN := $(BUILD)/tests/doctor/test-doctor-unit

ALL_TARGETS   += $(DOCTOR_BIN)
TEST_TARGETS  += test-doctor
INSTALL_TARGETS += install-doctor

# The knowledge base as a NUL-terminated byte array.
$(OBJ)/$(DOCTOR_DIR)/kb_data.c: $(DOCTOR_DIR)/knowledge.json $(DOCTOR_DIR)/module.mk
	@mkdir -p $(dir $@)
	{ echo '/* generated from $< by $(DOCTOR_DIR)/module.mk: do not edit */'; \
	  echo '#include <stddef.h>'; \
	  echo 'const unsigned char nt_doctor_kb_data[] = {'; \
	  od -An -v -tx1 $< | sed -e 's/  */ /g' -e 's/^ //' -e 's/\([0-9a-f][0-9a-f]\)/0x\1,/g'; \
	  echo '0x00};'; \
	  echo 'const size_t nt_doctor_kb_size = sizeof(nt_doctor_kb_data) - 1;'; } > $@.tmp && mv $@.tmp $@

$(OBJ)/$(DOCTOR_DIR)/kb_data.o: $(OBJ)/$(DOCTOR_DIR)/kb_data.c
	$(CC) $(NT_CFLAGS) -c $< -o $@

$(DOCTOR_BIN): $(DOCTOR_OBJS) $(DOCTOR_CMD_OBJS) $(call nt_archives,$(DOCTOR_PARTS))
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $(DOCTOR_OBJS) $(DOCTOR_CMD_OBJS) $(call nt_link,$(DOCTOR_PARTS))

$(DOCTOR_TEST_BIN): tests/doctor/test_unit.c $(DOCTOR_OBJS) $(call nt_archives,$(DOCTOR_PARTS))
	@mkdir -p $(dir $@)
	$(CC) $(NT_CFLAGS) -I$(DOCTOR_DIR) -o $@ $(filter %.c %.o,$^) $(call nt_link,$(DOCTOR_PARTS))

.PHONY: test-doctor install-doctor
test-doctor: $(DOCTOR_BIN) $(DOCTOR_TEST_BIN) $(BIN)/nettune-report
	@$(DOCTOR_TEST_BIN)
	@DOCTOR=$(DOCTOR_BIN) BUILD=$(BUILD) tests/doctor/run-tests.sh

install-doctor: $(DOCTOR_BIN)
	install -d $(DESTDIR)$(PREFIX)/share/nettune
	install -m 644 $(DOCTOR_DIR)/knowledge.json $(DESTDIR)$(PREFIX)/share/nettune/doctor-knowledge.json

# make bench-doctor: MB/s on a generated 512-rank log beside wc -l on the same file (tests/doctor/bench.sh)
BENCH_TARGETS += bench-doctor
.PHONY: bench-doctor
bench-doctor: $(DOCTOR_BIN)
	@BUILD=$(BUILD) DOCTOR=$(DOCTOR_BIN) sh tests/doctor/bench.sh
