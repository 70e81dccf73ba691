# libntnode: what this node is: the hwloc topology, PCIe link state, sysfs through its root
# (NETTUNE_SYSFS_ROOT), the GPUs (the CUDA driver and NVML, both opened at run time) and the
# software versions. Calls libntcore only.
NT_SRCS_node := $(addprefix lib/node/,topo.c pcie.c sysfs.c gpu.c cuda.c nvml.c software.c \
                  nodecheck.c pcie_acs.c limits.c modules.c gpu_health.c xid.c)
NT_LDLIBS_node = $(HWLOC_LIBS) -ldl -lpthread
$(eval $(call NT_ARCHIVE,node))
