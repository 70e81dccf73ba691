# The NCCL tuner plugin in the top-level build. Its own Makefile does the work (it builds on
# its own too); this file only points it at build/ and registers the suite targets.
NTP_DIR  := plugins/nccl-tuner
# The plugin's tuning-file parser is the one definition of nettune.tuning/1: nettune report
# and nettune tune link this object (built with the project's flags) and include $(NTP_SRC).
NTP_SRC  := $(NTP_DIR)/src
NT_TUNING_FMT_OBJ := $(OBJ)/$(NTP_SRC)/nt_tuning.o
NTP_LIB  := $(LIBDIR)/libnccl-tuner-nettune.so
NTP_MAKE  = $(MAKE) --no-print-directory -C $(NTP_DIR) OUT=$(abspath $(BUILD))/nccl-tuner \
            LIBOUT=$(abspath $(LIBDIR)) $(if $(filter 1,$(SANITIZE)),SAN_FLAGS="$(SAN_FLAGS)")

ALL_TARGETS     += $(NTP_LIB)
TEST_TARGETS    += test-plugin
BENCH_TARGETS   += bench-plugin
FUZZ_TARGETS    += fuzz-plugin
INSTALL_TARGETS += install-plugin

.PHONY: ntp-always test-plugin bench-plugin fuzz-plugin install-plugin
# Always ask the plugin's Makefile: it knows the plugin's own dependencies.
$(NTP_LIB): ntp-always
	+$(NTP_MAKE) lib
ntp-always:

test-plugin:
	+$(NTP_MAKE) test
bench-plugin:
	+$(NTP_MAKE) bench
fuzz-plugin:
	+$(NTP_MAKE) fuzz $(if $(FUZZ_SECONDS),FUZZ_SECONDS=$(FUZZ_SECONDS))
install-plugin:
	+$(NTP_MAKE) install PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)
