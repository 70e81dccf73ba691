# libnettune: the core library (no MPI). Every library source is listed here, and only here.
LIBNT_SRCS += lib/status.c lib/version.c lib/log.c lib/clock.c lib/stats.c lib/sysfs.c lib/report.c lib/output.c \
              lib/bench.c lib/launcher.c lib/launcher_inproc.c lib/launcher_tcp.c lib/schedule.c \
              lib/topo.c lib/pcie.c lib/software.c \
              lib/thresholds.c lib/exitcode.c \
              lib/cuda.c lib/nvml.c lib/gpu.c \
              lib/nccl_table.c lib/units.c lib/checks.c
# The one reader each of NCCL log lines, nccl-tests outputs, NCCL debug-log facts and the probe
# report, and the anomaly rule (shared by nettune doctor, nettune tune and nettune report).
LIBNT_SRCS += lib/linereader.c lib/logline.c lib/nccltests.c lib/anomaly.c lib/rdoc.c lib/nccllog.c
LIBNT := $(LIBDIR)/libnettune.a
LIBNT_LDLIBS = $(HWLOC_LIBS) $(CJSON_LIBS) -lpthread -ldl -lm $(SAN_LDLIBS)
ALL_TARGETS += $(LIBNT)

# LIBNT_SRCS is complete only after every module.mk is read: expand it in the rule (=).
$(LIBNT): $$(patsubst %.c,$(OBJ)/%.o,$$(sort $$(LIBNT_SRCS)))
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

# The version string is compiled into lib/version.o only; the stamp changes (and the object is
# rebuilt) whenever `git describe` does, so --version and tool.version never show an old commit.
$(BUILD)/version.stamp: FORCE
	@mkdir -p $(dir $@)
	@echo '$(NETTUNE_VERSION)' | cmp -s - $@ || echo '$(NETTUNE_VERSION)' > $@
$(OBJ)/lib/version.o: $(BUILD)/version.stamp
.PHONY: FORCE
FORCE:
