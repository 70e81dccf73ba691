# libntengine: the measuring engine: the launcher interface (in-process and TCP; the MPI one is
# nettune-probe's), the pair schedule, the fabric phases' schedule, the benchmark driver and its
# statistics. Calls libntcore only.
NT_SRCS_engine := $(addprefix lib/engine/,launcher.c launcher_inproc.c launcher_tcp.c \
                    schedule.c fabsched.c bench.c stats.c)
NT_LDLIBS_engine = -lpthread -lm
$(eval $(call NT_ARCHIVE,engine))
