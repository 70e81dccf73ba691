# `make ... SANITIZE=1`: every C file of the tree (the libraries, the commands, nettune-probe
# through mpicc, the plugin, the tests) is compiled and linked with ASan + UBSan. The flags go
# into CC and MPICC themselves, so that every link line gets the runtime too, whatever flags it
# passes.
# UBSan findings abort (no recovery), so a test that hits one fails. GCC's -fsanitize=undefined
# leaves out float-cast-overflow (a double beyond the integer it is cast to, e.g. a JSON
# number of 1e300 read as an int): it is named too (clang's fuzz targets have it in undefined). The run-time options are
# exported to every test the suites start (docs/fuzzing.md, "Sanitizers", says why each is set).
comma := ,
SAN_FLAGS := -fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=undefined,float-cast-overflow -fno-omit-frame-pointer
ifeq ($(SANITIZE),1)
CC    := $(CC) $(SAN_FLAGS)
MPICC := $(MPICC) $(SAN_FLAGS)
# -O1 keeps the stacks readable and the suites fast enough for CI. GCC's flow warnings see the
# instrumented code and report paths that the plain build proves impossible (format-truncation
# of sysfs strings already bounded, maybe-uninitialized after ASan checks): they stay warnings
# here; the plain build keeps them errors.
CFLAGS := -O1 -g -Wno-error=format-truncation -Wno-error=stringop-truncation \
          -Wno-error=maybe-uninitialized -Wno-error=stringop-overflow
# Leak checking stays on; Open MPI's own allocations that it never frees (MPI_Init's, the
# launcher's) are suppressed by library in mk/lsan.supp. abort_on_error=0: a finding ends the
# process with exit 1 as the tests expect of a failure, not with a core dump.
# hwloc loads its PCI discovery as a plugin (hwloc_pci.so -> libpciaccess) and unloads it at
# hwloc_topology_destroy; libpciaccess keeps its PCI name table until exit. Linked in here, the
# library stays loaded, so its stacks have names and mk/lsan.supp can name it.
SAN_PCIACCESS := $(firstword $(wildcard /usr/lib/x86_64-linux-gnu/libpciaccess.so.0 /usr/lib*/libpciaccess.so.0))
SAN_LDLIBS := $(if $(SAN_PCIACCESS),-Wl$(comma)--no-as-needed $(SAN_PCIACCESS) -Wl$(comma)--as-needed)
export ASAN_OPTIONS := detect_leaks=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=0
export LSAN_OPTIONS := suppressions=$(abspath mk/lsan.supp):print_suppressions=0
export UBSAN_OPTIONS := print_stacktrace=1:halt_on_error=1
# Tests that time themselves or run valgrind skip those parts on this build.
export NETTUNE_SANITIZE := 1
endif
