# libntnccl: the readers of what NCCL and nccl-tests write: NCCL Inspector logs and their
# alignment across ranks, NCCL log lines and their launcher
# prefixes, nccl-tests outputs and the anomaly rule on them, NCCL debug-log facts, NCCL's printed
# tuning table and its topology/graph XML (libxml2). Calls libntcore only. libxml2 is linked
# --as-needed: a binary that reads no XML does not load it.
NT_SRCS_nccl := $(addprefix lib/nccl/,logline.c nccltests.c nccllog.c nccl_table.c anomaly.c \
                  ncclxml.c inspector.c jobalign.c)
NT_LDLIBS_nccl = -Wl,--push-state,--as-needed $(XML2_LIBS) -Wl,--pop-state
$(OBJ)/lib/nccl/ncclxml.o: NT_CFLAGS += $(XML2_CFLAGS)
$(eval $(call NT_ARCHIVE,nccl))
