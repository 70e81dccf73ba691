# libntcore: what every command shares and nothing else below it: status codes, logging, the
# clock, units, the exit codes, the check table, the version string, atomic output files, the
# JSON helpers and check objects of every nettune document, the bounded line reader (gzip
# through zlib), the one reader of the probe report (nettune.report/1) and of the thresholds
# file (nettune.thresholds/1, --expect, --require).
NT_SRCS_core := $(addprefix lib/core/,status.c log.c clock.c units.c exitcode.c checks.c checks_same.c \
                  version.c json_text.c output.c report.c linereader.c rdoc.c thresholds.c)
NT_LDLIBS_core = $(CJSON_LIBS) $(ZLIB_LIBS) -lm
$(eval $(call NT_ARCHIVE,core))

# The version string is compiled into lib/core/version.o only; the stamp changes (and the object
# is rebuilt) whenever `git describe` does, so --version and tool.version never show an old
# commit.
$(BUILD)/version.stamp: FORCE
	@mkdir -p $(dir $@)
	@echo '$(NETTUNE_VERSION)' | cmp -s - $@ || echo '$(NETTUNE_VERSION)' > $@
$(OBJ)/lib/core/version.o: $(BUILD)/version.stamp
.PHONY: FORCE
FORCE:
