# libntnode: what this node is: the hwloc topology, PCIe link state, sysfs through its root
# (NETTUNE_SYSFS_ROOT), the GPUs (the CUDA driver and NVML, both opened at run time) and the
# software versions, and the node checks' readers and rules. Calls libntcore only. Its system
# libraries are linked --as-needed: nettune doctor calls only the rules and the text readers,
# so it loads no hwloc.
NT_SRCS_node := $(addprefix lib/node/,topo.c pcie.c sysfs.c gpu.c cuda.c nvml.c software.c \
                  nodecheck.c pcie_acs.c limits.c modules.c gpu_health.c xid.c opfiles.c ibtopo.c)
NT_LDLIBS_node = -Wl,--push-state,--as-needed $(HWLOC_LIBS) -ldl -lpthread -Wl,--pop-state
$(eval $(call NT_ARCHIVE,node))
