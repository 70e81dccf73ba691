/* NCCL topology and graph XML (NCCL_TOPO_FILE / NCCL_TOPO_DUMP_FILE root <system>, NCCL_GRAPH_FILE
 * root <graphs>): the one reader of these files, with libxml2.
 *
 * Format (NVIDIA/nccl v2.28.9-1 src/graph/xml.cc, ncclTopoGetXmlFromFile / ncclTopoDumpXmlToFile,
 * and src/graph/search.cc ncclTopoGetXmlGraphFromFile): <system version="1"> holds <cpu numaid=..>
 * elements; under a CPU, <pci busid class vendor device link_speed link_width> elements nest as the
 * PCIe tree (class 0x0604xx a bridge or switch, 0x0302xx / 0x0300xx a GPU, 0x0207xx an InfiniBand
 * NIC, 0x0200xx an Ethernet NIC); a GPU <pci> may hold <gpu dev rank sm gdr> with <nvlink>
 * children, a NIC <pci> (or the CPU itself) a <nic> with <net name dev speed port gdr> children.
 * <graphs version="1"> holds <graph id pattern nchannels speedintra speedinter typeintra typeinter>
 * elements with <channel> lists. See docs/doctor-inputs.md. */
#ifndef NETTUNE_NCCLXML_H
#define NETTUNE_NCCLXML_H

#include <stddef.h>

#include "nettune/status.h"

typedef enum { NT_NCCLXML_SYSTEM = 1, NT_NCCLXML_GRAPHS = 2 } nt_ncclxml_kind_t;

typedef enum { NT_XDEV_GPU = 1, NT_XDEV_NIC = 2 } nt_xdev_kind_t;

/* A GPU or NIC of a <system> file. */
typedef struct {
    nt_xdev_kind_t kind;
    char busid[32];  /* the <pci> busid, "" for a <nic> directly under a CPU */
    char name[64];   /* NIC: the first <net> name ("mlx5_0", "eth0"), else "" ; GPU: "" */
    int cpu;         /* index of its <cpu> element in document order (0-based) */
    int numaid;      /* that CPU's numaid attribute, -1 when absent */
    int parent;      /* id of the nearest enclosing <pci> bridge, -1 when directly on the CPU */
    int bridges[16]; /* ids of the enclosing bridges, nearest first */
    int nbridges;
    int rdma;          /* NIC: 1 InfiniBand class, a Mellanox (0x15b3) or EFA (0x1d0f) vendor, or a
                          <net gdr="1">; 0 a plain Ethernet NIC; -1 unknown */
    double speed_Mbps; /* NIC: <net speed>, -1 unknown */
    long line;         /* line of the element in the file */
} nt_xdev_t;

/* One <graph> of a <graphs> file. */
typedef struct {
    int id, pattern, nchannels;
    char typeintra[8], typeinter[8];
    long line;
} nt_xgraph_t;

typedef struct {
    nt_ncclxml_kind_t kind;
    int version; /* the root's version attribute, -1 when absent */
    int ncpus;
    nt_xdev_t *devs;
    size_t ndevs;
    nt_xgraph_t *graphs;
    size_t ngraphs;
} nt_ncclxml_t;

/* nt_ncclxml_read_memory - parses `len` bytes of XML named `name` (for messages). Fills *out
 * (free with nt_ncclxml_free). Errors: NT_ERR_PARSE (not well-formed XML, or a root that is
 * neither <system> nor <graphs>; `err` says which and where), NT_ERR_NOMEM. No network access,
 * no external entities. */
nt_status_t nt_ncclxml_read_memory(const char *buf, size_t len, const char *name,
                                   nt_ncclxml_t **out, char *err, size_t errlen);

/* nt_ncclxml_read_file - the same from a file (NT_ERR_IO when it cannot be read). */
nt_status_t nt_ncclxml_read_file(const char *path, nt_ncclxml_t **out, char *err, size_t errlen);

/* nt_ncclxml_free - frees what a read returned; NULL is fine. */
void nt_ncclxml_free(nt_ncclxml_t *x);

/* nt_ncclxml_path - the PCIe path between two devices in nvidia-smi topo -m terms: "PIX" (the same
 * bridge above both), "PXB" (a common bridge further up), "PHB" (the same CPU, no common bridge),
 * "SYS" (different CPUs: across the CPU interconnect). */
const char *nt_ncclxml_path(const nt_ncclxml_t *x, size_t a, size_t b);

#endif
