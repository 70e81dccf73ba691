# nettune: one top-level Makefile. Each part adds itself through its module.mk:
#   ALL_TARGETS  files `make` builds          TEST_TARGETS  phony targets `make test` runs
#   BENCH_TARGETS phony targets of `make bench` FUZZ_TARGETS  phony targets of `make fuzz`
#   INSTALL_TARGETS phony targets of `make install`
# Optional parts (CUDA, NCCL, ibverbs, MPI) are detected in mk/config.mk; `make config` shows them.
.DEFAULT_GOAL := all
.SECONDEXPANSION:
# SANITIZE=1: AddressSanitizer + UndefinedBehaviorSanitizer, built into build-san/ so that the
# normal build/ stays as it is (docs/fuzzing.md, "Sanitizers").
BUILD   ?= $(if $(filter 1,$(SANITIZE)),build-san,build)
PREFIX  ?= /usr/local
BIN     := $(BUILD)/bin
LIBDIR  := $(BUILD)/lib
OBJ     := $(BUILD)/obj

include mk/config.mk
include mk/sanitize.mk

CC      ?= cc
CFLAGS  ?= -O2 -g
WARN    := -Wall -Wextra -Werror
CPPFLAGS_NT := -Iinclude -D_GNU_SOURCE \
               $(CJSON_CFLAGS) $(HWLOC_CFLAGS)
NT_CFLAGS := -std=gnu11 $(WARN) $(CFLAGS) $(CPPFLAGS_NT) -MMD -MP -fPIC
# Only lib/core/version.c sees the version (lib/core/module.mk rebuilds it when the string
# changes).
$(OBJ)/lib/core/version.o: NT_CFLAGS += -DNETTUNE_VERSION=\"$(NETTUNE_VERSION)\"

ALL_TARGETS :=
TEST_TARGETS :=
BENCH_TARGETS :=
FUZZ_TARGETS :=
INSTALL_TARGETS :=

# Object rule shared by every C module: build/obj/<path>.o from <path>.c
$(OBJ)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(NT_CFLAGS) -c $< -o $@

# The libraries of lib/ (docs/architecture.md): each folder lib/<part>/ is one archive,
# build/lib/libnt<part>.a, whose lib/<part>/module.mk lists its sources in NT_SRCS_<part> and
# the system libraries they need in NT_LDLIBS_<part>, then calls NT_ARCHIVE. A binary names the
# parts it calls, highest first, and links exactly those:
#   $(BIN)/x: $(X_OBJS) $(call nt_archives,nccl core)
#   	$(CC) -o $@ $(X_OBJS) $(call nt_link,nccl core)
# Every library source is in NT_LIB_SRCS too (the fuzz build instruments them all).
NT_LIB_SRCS :=
define NT_ARCHIVE
NT_LIB_$(1) := $(LIBDIR)/libnt$(1).a
NT_LIB_SRCS += $(NT_SRCS_$(1))
ALL_TARGETS += $(LIBDIR)/libnt$(1).a
$(LIBDIR)/libnt$(1).a: $(patsubst %.c,$(OBJ)/%.o,$(NT_SRCS_$(1)))
	@mkdir -p $$(dir $$@)
	rm -f $$@
	$$(AR) rcs $$@ $$^
endef
# nt_archives(parts): the archives of the parts; nt_link(parts): them and their system libraries
# (the sanitizer build's own last).
nt_archives = $(foreach p,$(1),$(NT_LIB_$(p)))
nt_ldlibs = $(foreach p,$(1),$(NT_LDLIBS_$(p))) $(SAN_LDLIBS)
nt_link = $(call nt_archives,$(1)) $(call nt_ldlibs,$(1))

include $(sort $(wildcard */module.mk */*/module.mk))

.PHONY: all test bench fuzz install config deps deps-test demo clean
all: $(ALL_TARGETS)

deps:
	@mk/deps.sh build
deps-test:
	@mk/deps.sh test

# `make test` installs what is missing (as root), builds, then runs every suite and ends with
# one summary line "N passed, N failed" (tests/run-suites.sh).
test: deps-test
	@$(MAKE) --no-print-directory $(NT_SUBJOBS) all
	@+tests/run-suites.sh $(TEST_TARGETS)

# Internal: the suites themselves; tests/run-suites.sh calls `make test-<name>` one by one.
bench: all $(BENCH_TARGETS)
fuzz: all $(FUZZ_TARGETS)

install: all $(INSTALL_TARGETS)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/nettune/schema
	install -m 755 $(wildcard $(BIN)/*) $(DESTDIR)$(PREFIX)/bin/
	install -m 644 $(wildcard reports/schema/*.json) $(DESTDIR)$(PREFIX)/share/nettune/schema/

config:
	@echo "nettune $(NETTUNE_VERSION) build configuration"
	@echo "  compiler       $(CC)"
	@echo "  hwloc          $(if $(filter 1,$(HAVE_HWLOC)),yes ($(HWLOC_LIBS)),MISSING: required (apt-get install libhwloc-dev))"
	@echo "  cJSON          $(if $(filter 1,$(HAVE_CJSON)),yes ($(CJSON_LIBS)),MISSING: required (apt-get install libcjson-dev))"
	@echo "  MPI            $(if $(filter 1,$(HAVE_MPI)),yes ($(shell command -v $(MPICC))),no: nettune-probe is not built (apt-get install libopenmpi-dev openmpi-bin))"
	@echo "  libibverbs     $(if $(filter 1,$(HAVE_IBVERBS)),headers yes: the library is opened at run time (RDMA skipped where it is missing),headers MISSING: nettune-probe is not built (apt-get install libibverbs-dev))"
	@echo "  CUDA           $(if $(filter 1,$(HAVE_CUDA)),yes ($(CUDA_HOME)),no CUDA_HOME: GPU runtime is still found at run time via dlopen)"
	@echo "  nvcc           $(if $(strip $(GPU_ARCHS)),yes: GPU kernels for sm_$(firstword $(GPU_ARCHS))..sm_$(lastword $(GPU_ARCHS)) + compute_75 PTX,no: GPU SM-copy and latency probes skipped (copy-engine probes still built))"
	@echo "  NCCL           $(if $(filter 1,$(HAVE_NCCL)),yes ($(NCCL_HEADER)),no: not needed to build the tuner plugin (it declares the ABI itself))"
	@echo "  cmocka         $(if $(filter 1,$(HAVE_CMOCKA)),yes,no: unit tests cannot build (apt-get install libcmocka-dev))"
	@echo "  clang          $(if $(filter 1,$(HAVE_CLANG)),yes: make fuzz uses libFuzzer,no: make fuzz is unavailable)"

demo: deps
	@$(MAKE) --no-print-directory all
	@tests/integration/demo.sh

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
