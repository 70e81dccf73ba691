# libFuzzer targets (docs/fuzzing.md). `make fuzz` runs every target for FUZZ_SECONDS each (the
# doctor's and the plugin's own targets too, through their modules); the `test-fuzz` suite
# replays each target's regression inputs and fuzzes it for FUZZ_SMOKE_SECONDS.
#
# Adding a target is one line:
#   $(eval $(call NT_FUZZ_TARGET,NAME,HARNESS.c [OTHER.c ...],SEED DIRS[,EXTRA LINK FLAGS]))
# HARNESS.c defines LLVMFuzzerTestOneInput; OTHER.c are sources outside lib/ (every library of
# lib/ is linked, built once with the fuzzing instrumentation into one archive).
# tests/fuzz/corpus/NAME/ holds the target's regression inputs (every crash found, kept after its
# fix) and hand-made seeds.
# docs/fuzzing.md says how to run one target, reproduce a crash and keep its input.
comma := ,
FUZZ_SECONDS ?= 60
FUZZ_SMOKE_SECONDS ?= 5
# libFuzzer's -seed: 0 draws one (make fuzz explores anew each time); the smoke run takes a fixed
# one, so that a CI result is reproduced by running it again (a new crash there comes from a
# change of the code, not from the draw). A crash found by make fuzz joins the corpus.
FUZZ_SEED ?= 0
FUZZ_SMOKE_SEED ?= 1
NT_FUZZ_DIR := $(BUILD)/fuzz
NT_FUZZ_CFLAGS := -g -O1 -MMD -MP -fsanitize=fuzzer-no-link,address,undefined \
                  -fno-sanitize-recover=undefined -std=gnu11 -Wall -Wextra $(CPPFLAGS_NT) \
                  -Iprobes -Ireports -Iplugins/nccl-tuner/src
NT_FUZZ_LIB := $(NT_FUZZ_DIR)/libnettune-fuzz.a
NT_FUZZ_SMOKE :=

# Instrumented objects of any source of the tree.
$(NT_FUZZ_DIR)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	clang $(NT_FUZZ_CFLAGS) -c $< -o $@

$(NT_FUZZ_LIB): $$(patsubst %.c,$(NT_FUZZ_DIR)/obj/%.o,$$(sort $$(NT_LIB_SRCS)))
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

# NT_FUZZ_TARGET(name, sources, seed dirs, link flags): build/fuzz/fuzz-NAME, `make fuzz-NAME`
# and its smoke run `make fuzz-smoke-NAME`.
define NT_FUZZ_TARGET
FUZZ_TARGETS += fuzz-$(1)
NT_FUZZ_SMOKE += fuzz-smoke-$(1)
$(NT_FUZZ_DIR)/fuzz-$(1): $(patsubst %.c,$(NT_FUZZ_DIR)/obj/%.o,$(2)) $(NT_FUZZ_LIB)
	clang -fsanitize=fuzzer,address,undefined -o $$@ $$^ $(OBJ)/reports/schema_blob.o \
	    $(call nt_ldlibs,judge engine node nccl core) $(4)
.PHONY: fuzz-$(1) fuzz-smoke-$(1)
fuzz-$(1): $(NT_FUZZ_DIR)/fuzz-$(1)
	@FUZZ_SEED=$(FUZZ_SEED) tests/fuzz/run.sh $(1) $$< $(FUZZ_SECONDS) tests/fuzz/corpus/$(1) $(3)
fuzz-smoke-$(1): $(NT_FUZZ_DIR)/fuzz-$(1)
	@FUZZ_SEED=$(FUZZ_SMOKE_SEED) tests/fuzz/run.sh $(1) $$< $(FUZZ_SMOKE_SECONDS) tests/fuzz/corpus/$(1) $(3)
endef

ifeq ($(HAVE_CLANG),1)
# The tuning format's parser is the plugin's (one definition), compiled into nettune report.
$(eval $(call NT_FUZZ_TARGET,report,tests/fuzz/fuzz_report.c $(filter-out $(REPORT_CMD_SRCS),$(REPORT_SRCS)) plugins/nccl-tuner/src/nt_tuning.c reports/doctor/kb.c reports/doctor/fmtmatch.c $(OBJ)/reports/doctor/kb_data.c,tests/fixtures/reports plugins/nccl-tuner/examples))
$(eval $(call NT_FUZZ_TARGET,thresholds,tests/fuzz/fuzz_thresholds.c,tests/fixtures/thresholds))
$(eval $(call NT_FUZZ_TARGET,params,tests/fuzz/fuzz_params.c probes/params.c probes/registry.c,))
$(eval $(call NT_FUZZ_TARGET,nccl,tests/fuzz/fuzz_nccl.c,tests/fixtures/nccl-debug-logs tests/fixtures/nccl-tests-logs tests/fixtures/nccl-tuning-tables))
# NCCL Inspector's JSON logs and its Prometheus textfiles, seeded with its README's records.
$(eval $(call NT_FUZZ_TARGET,inspector,tests/fuzz/fuzz_inspector.c,tests/fixtures/inspector))
$(eval $(call NT_FUZZ_TARGET,inspector-prom,tests/fuzz/fuzz_inspector_prom.c,tests/fixtures/inspector))
# ibnetdiscover and iblinkinfo output (--fabric-topology), seeded with the captures.
$(eval $(call NT_FUZZ_TARGET,ibtopo,tests/fuzz/fuzz_ibtopo.c,tests/fixtures/ibtopo))
# ncclras -f json, seeded with a report in its writer's layout.
$(eval $(call NT_FUZZ_TARGET,ras,tests/fuzz/fuzz_ras.c,tests/fixtures/inspector))
# hwloc parses XML in a plugin it unloads again (hwloc_xml_libxml.so): libxml2 linked in stays
# loaded, so leaks inside it keep their names for tests/fuzz/lsan.supp.
$(eval $(call NT_FUZZ_TARGET,topo,tests/fuzz/fuzz_topo.c,tests/fixtures/hwloc-xml,-Wl$(comma)--no-as-needed -l:libxml2.so.2))
# The doctor: its sources outside lib/ (reports/doctor/*.c and the embedded knowledge base), seeded with every kind of input it reads.
$(NT_FUZZ_DIR)/obj/lib/nccl/ncclxml.o: NT_FUZZ_CFLAGS += $(XML2_CFLAGS)
$(NT_FUZZ_DIR)/obj/tests/doctor/fuzz_doctor.o: NT_FUZZ_CFLAGS += -I$(DOCTOR_DIR)
$(eval $(call NT_FUZZ_TARGET,doctor,tests/doctor/fuzz_doctor.c $(DOCTOR_SRCS) $(OBJ)/reports/doctor/kb_data.c,tests/fixtures/nccl-debug-logs tests/fixtures/nccl-tests-logs tests/fixtures/nvidia-smi-topo tests/fixtures/ibv-devinfo tests/fixtures/nccl-topo-xml tests/doctor/data,$(XML2_LIBS)))
endif

# The CI smoke run: every target here for FUZZ_SMOKE_SECONDS after replaying its corpus (the
# plugin's runs in its own suite, from its own Makefile, since the plugin builds alone).
# The instrumented build and the runs go NT_JOBS at a time (mk/config.mk): a run is one
# single-threaded process fuzzing for a fixed wall time, so on N free cores N of them at once
# each execute what they would alone; each run's lines come out together (--output-sync).
TEST_TARGETS += test-fuzz
.PHONY: test-fuzz
ifeq ($(HAVE_CLANG),1)
test-fuzz: all
	@$(MAKE) --no-print-directory $(NT_SUBJOBS) --output-sync=target $(NT_FUZZ_SMOKE)
else
test-fuzz:
	@echo "test-fuzz: skipped: clang is not installed (apt-get install clang)"
endif
