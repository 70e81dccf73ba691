/* Node topology inventory with hwloc 2.x (live or from an hwloc 1.x / 2.x XML export).
 *
 * Everything below works on hwloc's object tree through its API, never on the XML text, so
 * both export formats look the same here: hwloc 2 converts a 1.x file on import (NUMA nodes
 * become memory children, the I/O subtrees that hung below a 1.x NUMANode are re-attached to
 * the nearest normal object, and 1.x host bridges, written as type="Bridge" with
 * bridge_type="0-1", come back as bridges whose upstream side is the host).
 *
 * Path classes follow `nvidia-smi topo -m` (and NCCL's PATH_* of the same names):
 *   PIX  the two devices sit below one PCIe bridge or one PCIe switch (at most one switch
 *        between them: both are at most one bridge below their common ancestor bridge)
 *   PXB  their common ancestor is a PCIe bridge, but the path crosses several switches
 *   PHB  their common ancestor is a host bridge (same root complex)
 *   NODE different host bridges whose I/O locality is the same NUMA node (or package)
 *   SYS  different host bridges on different NUMA nodes, or a locality that is unknown
 *
 * A PCIe switch shows up in hwloc as an upstream-port bridge with one bridge per downstream
 * port below it; counting each of those as "a bridge" would turn every pair of devices on one
 * switch into PXB, which is not what nvidia-smi (or NCCL, which merges the ports of a switch
 * into one node) reports. POWER9 puts every root complex (PHB4) in its own PCI domain: hwloc
 * shows one host bridge per domain with the PHB's root port as a PCI bridge below it, so two
 * devices in different domains have no common I/O ancestor and are NODE or SYS, never PHB. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hwloc.h>

#include "nettune/log.h"
#include "nettune/report.h"
#include "nettune/topo.h"

#define NT_PCI_VENDOR_NVIDIA 0x10de
#define NT_PCI_VENDOR_MELLANOX 0x15b3
#define NT_PCI_VENDOR_AMAZON 0x1d0f
#define NT_PCI_CLASS_VGA 0x0300
#define NT_PCI_CLASS_3D 0x0302

/* Internal: the hwloc objects behind the inventory, parallel to t->gpus and t->nics, used only
 * while paths are computed (the topology is destroyed before nt_topo_load returns). */
typedef struct nt_topo_objs {
    hwloc_obj_t *gpu;
    hwloc_obj_t *nic; /* the PCI device of the NIC (NULL when the osdev has none) */
} nt_topo_objs_t;

const char *nt_path_string(nt_path_t p)
{
    switch (p) {
    case NT_PATH_PIX:
        return "PIX";
    case NT_PATH_PXB:
        return "PXB";
    case NT_PATH_PHB:
        return "PHB";
    case NT_PATH_NODE:
        return "NODE";
    case NT_PATH_SYS:
        return "SYS";
    default:
        return "unknown";
    }
}

static int nt_is_hostbridge(hwloc_obj_t o)
{
    return o->type == HWLOC_OBJ_BRIDGE && o->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_HOST;
}

static int nt_is_pcibridge(hwloc_obj_t o)
{
    return o->type == HWLOC_OBJ_BRIDGE && !nt_is_hostbridge(o);
}

static void nt_busid(hwloc_obj_t pci, char *buf, size_t len)
{
    snprintf(buf, len, "%04x:%02x:%02x.%01x", pci->attr->pcidev.domain, pci->attr->pcidev.bus,
             pci->attr->pcidev.dev, pci->attr->pcidev.func);
}

/* The NUMA node OS index of an I/O object: its locality (the nearest non-I/O ancestor) when
 * that covers exactly one NUMA node, else -1. */
static int nt_numa_of(hwloc_topology_t topo, hwloc_obj_t o)
{
    hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(topo, o);
    if (!anc || !anc->nodeset || hwloc_bitmap_weight(anc->nodeset) != 1)
        return -1;
    return hwloc_bitmap_first(anc->nodeset);
}

/* Number of PCI bridges strictly between o and its ancestor anc. */
static int nt_bridges_below(hwloc_obj_t o, hwloc_obj_t anc)
{
    int n = 0;
    for (hwloc_obj_t p = o->parent; p && p != anc; p = p->parent)
        if (nt_is_pcibridge(p))
            n++;
    return n;
}

/* The deepest object that is an ancestor of both a and b (or one of them). hwloc's own
 * hwloc_get_common_ancestor_obj() walks by depth, and I/O objects all have special negative
 * depths (bridges -3, PCI devices -4): on I/O objects it returns wrong ancestors or walks off
 * the root. So walk the parent links instead. */
static hwloc_obj_t nt_common_ancestor(hwloc_obj_t a, hwloc_obj_t b)
{
    for (hwloc_obj_t x = a; x; x = x->parent)
        for (hwloc_obj_t y = b; y; y = y->parent)
            if (x == y)
                return x;
    return NULL;
}

/* Path class between two PCI devices (see the top of the file). */
static nt_path_t nt_path_between(hwloc_topology_t topo, hwloc_obj_t a, hwloc_obj_t b)
{
    hwloc_obj_t c, la, lb;

    if (!a || !b)
        return NT_PATH_UNKNOWN;
    if (a == b)
        return NT_PATH_PIX;
    c = nt_common_ancestor(a, b);
    if (!c)
        return NT_PATH_UNKNOWN;
    if (nt_is_pcibridge(c))
        return (nt_bridges_below(a, c) <= 1 && nt_bridges_below(b, c) <= 1) ? NT_PATH_PIX
                                                                            : NT_PATH_PXB;
    if (nt_is_hostbridge(c))
        return NT_PATH_PHB;
    if (c->type == HWLOC_OBJ_PCI_DEVICE || c->type == HWLOC_OBJ_OS_DEVICE)
        return NT_PATH_PIX; /* one device holds the other: not a PCIe path at all */

    /* Different host bridges: the CPU side decides. A locality that covers every NUMA node
     * of a multi-node machine means hwloc could not place the device: assume the worst. */
    la = hwloc_get_non_io_ancestor_obj(topo, a);
    lb = hwloc_get_non_io_ancestor_obj(topo, b);
    if (!la || !lb || !la->nodeset || !lb->nodeset)
        return NT_PATH_SYS;
    {
        hwloc_obj_t root = hwloc_get_root_obj(topo);
        int multi = hwloc_bitmap_weight(root->nodeset) > 1;
        if (multi && (hwloc_bitmap_isequal(la->nodeset, root->nodeset) ||
                      hwloc_bitmap_isequal(lb->nodeset, root->nodeset)))
            return NT_PATH_SYS;
    }
    return hwloc_bitmap_intersects(la->nodeset, lb->nodeset) ? NT_PATH_NODE : NT_PATH_SYS;
}

nt_path_t nt_topo_path(const nt_topo_t *t, int gpu, int nic)
{
    if (!t || gpu < 0 || gpu >= t->ngpus || nic < 0 || nic >= t->nnics || !t->paths)
        return NT_PATH_UNKNOWN;
    return t->paths[gpu * t->nnics + nic];
}

/* nt_topo_gpu_path - path class between GPUs a and b (indices); NT_PATH_PIX for a == b (the
 * GPU itself, nvidia-smi's "X"), NT_PATH_UNKNOWN if out of range. */
nt_path_t nt_topo_gpu_path(const nt_topo_t *t, int a, int b)
{
    if (!t || a < 0 || a >= t->ngpus || b < 0 || b >= t->ngpus || !t->gpu_paths)
        return NT_PATH_UNKNOWN;
    return t->gpu_paths[a * t->ngpus + b];
}

int nt_topo_nearest_gpu(const nt_topo_t *t, int nic)
{
    int best = -1;
    nt_path_t best_p = NT_PATH_UNKNOWN;

    if (!t || nic < 0 || nic >= t->nnics)
        return -1;
    for (int g = 0; g < t->ngpus; g++) {
        nt_path_t p = nt_topo_path(t, g, nic);
        if (p < best_p) {
            best_p = p;
            best = g;
        }
    }
    return best;
}

int nt_topo_find_nic(const nt_topo_t *t, const char *name)
{
    if (!t || !name)
        return -1;
    for (int i = 0; i < t->nnics; i++)
        if (strcmp(t->nics[i].name, name) == 0)
            return i;
    return -1;
}

int nt_topo_find_gpu(const nt_topo_t *t, const char *pci_bus_id)
{
    if (!t || !pci_bus_id)
        return -1;
    for (int i = 0; i < t->ngpus; i++)
        if (strcasecmp(t->gpus[i].pci_bus_id, pci_bus_id) == 0)
            return i;
    return -1;
}

/* CUDA and NVML OS devices carry the marketing name in the GPUModel info. hwloc 2.x marks
 * them by subtype ("CUDA", "NVML"), older exports only by name ("cuda0", "nvml0") and by
 * osdev type (GPU or COPROC, depending on the hwloc version that wrote the file). */
static int nt_is_nvidia_osdev(hwloc_obj_t o)
{
    if (o->type != HWLOC_OBJ_OS_DEVICE || !o->name)
        return 0;
    if (o->subtype && (strcmp(o->subtype, "CUDA") == 0 || strcmp(o->subtype, "NVML") == 0))
        return 1;
    return strncmp(o->name, "cuda", 4) == 0 || strncmp(o->name, "nvml", 4) == 0;
}

static hwloc_obj_t nt_nvidia_osdev_child(hwloc_obj_t pci)
{
    for (hwloc_obj_t c = pci->io_first_child; c; c = c->next_sibling)
        if (nt_is_nvidia_osdev(c))
            return c;
    return NULL;
}

static int nt_is_gpu(hwloc_obj_t pci)
{
    unsigned cls = pci->attr->pcidev.class_id;
    if (pci->attr->pcidev.vendor_id == NT_PCI_VENDOR_NVIDIA &&
        (cls == NT_PCI_CLASS_VGA || cls == NT_PCI_CLASS_3D))
        return 1;
    /* A CUDA or NVML device on a PCI function of another class (e.g. 0x0380) is a GPU too. */
    return nt_nvidia_osdev_child(pci) != NULL;
}

static int nt_cmp_pci(const void *a, const void *b)
{
    hwloc_obj_t x = *(hwloc_obj_t const *)a, y = *(hwloc_obj_t const *)b;
    const struct hwloc_pcidev_attr_s *p = &x->attr->pcidev, *q = &y->attr->pcidev;
    if (p->domain != q->domain)
        return p->domain < q->domain ? -1 : 1;
    if (p->bus != q->bus)
        return p->bus < q->bus ? -1 : 1;
    if (p->dev != q->dev)
        return p->dev < q->dev ? -1 : 1;
    return (int)p->func - (int)q->func;
}

static int nt_cmp_osdev_name(const void *a, const void *b)
{
    return strverscmp((*(hwloc_obj_t const *)a)->name, (*(hwloc_obj_t const *)b)->name);
}

static void nt_copy(char *dst, size_t len, const char *src)
{
    snprintf(dst, len, "%s", src ? src : "");
}

static nt_status_t nt_topo_collect_cpus(hwloc_topology_t topo, nt_topo_t *t)
{
    hwloc_obj_t root = hwloc_get_root_obj(topo);
    const char *model = NULL;

    t->npackages = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
    t->nnuma = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
    t->ncores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
    t->npus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
    if (t->npackages < 0 || t->nnuma < 0 || t->ncores < 0 || t->npus < 0)
        return NT_ERR_PARSE; /* hwloc says the type spans several depths: not a sane tree */

    for (int i = 0; i < t->npackages && !model; i++)
        model = hwloc_obj_get_info_by_name(hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE, i),
                                           "CPUModel");
    if (!model)
        model = hwloc_obj_get_info_by_name(root, "CPUModel");
    nt_copy(t->cpu_model, sizeof(t->cpu_model), model);
    nt_copy(t->hwloc_version, sizeof(t->hwloc_version),
            hwloc_obj_get_info_by_name(root, "hwlocVersion"));

    if (t->nnuma > 0) {
        t->numa = calloc((size_t)t->nnuma, sizeof(*t->numa));
        if (!t->numa)
            return NT_ERR_NOMEM;
    }
    for (int i = 0; i < t->nnuma; i++) {
        hwloc_obj_t n = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, i);
        t->numa[i].os_index = (int)n->os_index;
        t->numa[i].memory_bytes = n->attr ? n->attr->numanode.local_memory : 0;
        t->numa[i].ncores =
            n->cpuset ? hwloc_get_nbobjs_inside_cpuset_by_type(topo, n->cpuset, HWLOC_OBJ_CORE) : 0;
        t->numa[i].npus = n->cpuset ? hwloc_bitmap_weight(n->cpuset) : 0;
    }
    return NT_OK;
}

static nt_status_t nt_topo_collect_gpus(hwloc_topology_t topo, nt_topo_t *t, nt_topo_objs_t *o)
{
    int npci = 0;
    hwloc_obj_t pci = NULL;

    while ((pci = hwloc_get_next_pcidev(topo, pci)))
        if (nt_is_gpu(pci))
            npci++;
    if (npci == 0)
        return NT_OK;
    o->gpu = calloc((size_t)npci, sizeof(*o->gpu));
    t->gpus = calloc((size_t)npci, sizeof(*t->gpus));
    if (!o->gpu || !t->gpus)
        return NT_ERR_NOMEM;
    pci = NULL;
    while ((pci = hwloc_get_next_pcidev(topo, pci)))
        if (nt_is_gpu(pci))
            o->gpu[t->ngpus++] = pci;
    qsort(o->gpu, (size_t)t->ngpus, sizeof(*o->gpu), nt_cmp_pci);

    for (int i = 0; i < t->ngpus; i++) {
        nt_topo_gpu_t *g = &t->gpus[i];
        hwloc_obj_t os = nt_nvidia_osdev_child(o->gpu[i]);
        const char *name = os ? hwloc_obj_get_info_by_name(os, "GPUModel") : NULL;
        if (!name)
            name = hwloc_obj_get_info_by_name(o->gpu[i], "PCIDevice");
        g->index = i;
        nt_copy(g->name, sizeof(g->name), name);
        nt_busid(o->gpu[i], g->pci_bus_id, sizeof(g->pci_bus_id));
        g->numa_node = nt_numa_of(topo, o->gpu[i]);
        g->pci_device = o->gpu[i]->attr->pcidev.device_id;
        g->link_GBps = o->gpu[i]->attr->pcidev.linkspeed;
    }
    return NT_OK;
}

static nt_status_t nt_topo_collect_nics(hwloc_topology_t topo, nt_topo_t *t, nt_topo_objs_t *o)
{
    int n = 0;
    hwloc_obj_t os = NULL, *osdevs;

    while ((os = hwloc_get_next_osdev(topo, os)))
        if (os->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS && os->name)
            n++;
    if (n == 0)
        return NT_OK;
    osdevs = calloc((size_t)n, sizeof(*osdevs));
    o->nic = calloc((size_t)n, sizeof(*o->nic));
    t->nics = calloc((size_t)n, sizeof(*t->nics));
    if (!osdevs || !o->nic || !t->nics) {
        free(osdevs);
        return NT_ERR_NOMEM;
    }
    os = NULL;
    while ((os = hwloc_get_next_osdev(topo, os)))
        if (os->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS && os->name)
            osdevs[t->nnics++] = os;
    /* Natural order of names, so mlx5_10 comes after mlx5_9, as ibv_devices lists them. */
    qsort(osdevs, (size_t)t->nnics, sizeof(*osdevs), nt_cmp_osdev_name);

    for (int i = 0; i < t->nnics; i++) {
        nt_topo_nic_t *nic = &t->nics[i];
        hwloc_obj_t pci = osdevs[i]->parent;
        nt_copy(nic->name, sizeof(nic->name), osdevs[i]->name);
        nic->numa_node = nt_numa_of(topo, osdevs[i]);
        /* hwloc's Linux backend records each port's state ("Port1State" = ibv_port_state): an
         * XML export thus says which ports were ACTIVE on the machine it came from. */
        for (int p = 1; p <= 8; p++) {
            char key[32];
            const char *v;
            snprintf(key, sizeof(key), "Port%dState", p);
            v = hwloc_obj_get_info_by_name(osdevs[i], key);
            if (!v)
                break;
            nic->port_state[p - 1] = atoi(v);
            nic->nports = p;
        }
        if (!pci || pci->type != HWLOC_OBJ_PCI_DEVICE) {
            nt_copy(nic->kind, sizeof(nic->kind), "other");
            continue;
        }
        o->nic[i] = pci;
        nt_busid(pci, nic->pci_bus_id, sizeof(nic->pci_bus_id));
        switch (pci->attr->pcidev.vendor_id) {
        case NT_PCI_VENDOR_MELLANOX:
            nt_copy(nic->kind, sizeof(nic->kind), "infiniband_or_roce");
            break;
        case NT_PCI_VENDOR_AMAZON:
            nt_copy(nic->kind, sizeof(nic->kind), "efa");
            break;
        default:
            nt_copy(nic->kind, sizeof(nic->kind), "other");
        }
        for (hwloc_obj_t c = pci->io_first_child; c; c = c->next_sibling)
            if (c->type == HWLOC_OBJ_OS_DEVICE && c->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK &&
                c->name && nic->nnetdevs < (int)(sizeof(nic->netdevs) / sizeof(nic->netdevs[0])))
                nt_copy(nic->netdevs[nic->nnetdevs++], sizeof(nic->netdevs[0]), c->name);
    }
    free(osdevs);
    return NT_OK;
}

static nt_status_t nt_topo_collect_paths(hwloc_topology_t topo, nt_topo_t *t, nt_topo_objs_t *o)
{
    if (t->ngpus > 0 && t->nnics > 0) {
        t->paths = calloc((size_t)t->ngpus * (size_t)t->nnics, sizeof(*t->paths));
        if (!t->paths)
            return NT_ERR_NOMEM;
        for (int g = 0; g < t->ngpus; g++)
            for (int n = 0; n < t->nnics; n++)
                t->paths[g * t->nnics + n] = nt_path_between(topo, o->gpu[g], o->nic[n]);
    }
    if (t->ngpus > 0) {
        t->gpu_paths = calloc((size_t)t->ngpus * (size_t)t->ngpus, sizeof(*t->gpu_paths));
        if (!t->gpu_paths)
            return NT_ERR_NOMEM;
        for (int a = 0; a < t->ngpus; a++)
            for (int b = 0; b < t->ngpus; b++)
                t->gpu_paths[a * t->ngpus + b] = nt_path_between(topo, o->gpu[a], o->gpu[b]);
    }
    return NT_OK;
}

/* Whether hwloc can read the XML file at path without crashing. hwloc 2.9 (Debian 12) dereferences
 * a NULL cpuset on some malformed exports inside hwloc_topology_load (found by fuzz-topo; inputs
 * in tests/fuzz/corpus/topo/crash-hwloc-*): a child process reads the file first, so that such a
 * file is refused with a message instead of killing the probe. 1 when the child loaded it or
 * refused it cleanly (or could not be started: then the load below decides). */
static int nt_topo_xml_survives(const char *path)
{
    int status = 0;
    pid_t pid = fork();

    if (pid < 0)
        return 1;
    if (pid == 0) {
        /* A crash ends the child by its signal, without a core file and without the parent's
         * crash handlers (a sanitizer's or a fuzzer's) taking it for the parent's. */
        static const int sigs[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL};
        struct rlimit nocore = {0, 0};
        hwloc_topology_t t;
        int ok;
        setrlimit(RLIMIT_CORE, &nocore);
        for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
            signal(sigs[i], SIG_DFL);
        ok = hwloc_topology_init(&t) == 0 &&
             hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_ALL) == 0 &&
             hwloc_topology_set_xml(t, path) == 0 && hwloc_topology_load(t) == 0;
        _exit(ok ? 0 : 3);
    }
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return 1;
    /* 0 loaded, 3 refused; a signal (or a sanitizer's exit code) is a crash. */
    return WIFEXITED(status) && (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 3);
}

nt_status_t nt_topo_load(const char *xml_path, nt_topo_t **out)
{
    hwloc_topology_t topo;
    nt_topo_objs_t objs = {NULL, NULL};
    nt_topo_t *t;
    nt_status_t st;

    *out = NULL;
    if (xml_path) {
        struct stat sb;
        if (stat(xml_path, &sb) != 0) {
            NT_ERROR(TOPO,
                     "cannot open topology file '%s': %s: fix the path (an hwloc XML export, "
                     "lstopo file.xml)",
                     xml_path, strerror(errno));
            return errno == ENOENT || errno == ENOTDIR ? NT_ERR_NOT_FOUND : NT_ERR_IO;
        }
        if (!nt_topo_xml_survives(xml_path)) {
            NT_ERROR(TOPO,
                     "cannot load topology file '%s': hwloc crashed reading it (a damaged "
                     "export?): export it again with lstopo file.xml",
                     xml_path);
            return NT_ERR_PARSE;
        }
    }
    t = calloc(1, sizeof(*t));
    if (!t)
        return NT_ERR_NOMEM;
    nt_copy(t->source, sizeof(t->source), xml_path ? xml_path : "live");

    if (hwloc_topology_init(&topo) != 0) {
        NT_ERROR(TOPO, "hwloc_topology_init failed: %s", strerror(errno));
        st = NT_ERR_SYSTEM;
        goto free_t;
    }
    /* Keep every bridge and PCI device: the path classes need the full PCI tree, which the
     * default filter (no I/O at all) and "important" (which prunes some bridges) would cut. */
    if (hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_ALL) != 0) {
        NT_ERROR(TOPO, "hwloc_topology_set_io_types_filter failed: %s", strerror(errno));
        st = NT_ERR_SYSTEM;
        goto destroy_topo;
    }
    if (xml_path && hwloc_topology_set_xml(topo, xml_path) != 0) {
        NT_ERROR(TOPO,
                 "cannot use topology file '%s': %s: give an hwloc XML export (lstopo file.xml)",
                 xml_path, strerror(errno));
        st = NT_ERR_PARSE;
        goto destroy_topo;
    }
    if (hwloc_topology_load(topo) != 0) {
        if (xml_path)
            NT_ERROR(TOPO,
                     "cannot load topology file '%s': not an hwloc XML export (%s): export one "
                     "with lstopo file.xml",
                     xml_path, strerror(errno));
        else
            NT_ERROR(TOPO, "hwloc_topology_load failed: %s", strerror(errno));
        st = xml_path ? NT_ERR_PARSE : NT_ERR_SYSTEM;
        goto destroy_topo;
    }

    if ((st = nt_topo_collect_cpus(topo, t)) != NT_OK ||
        (st = nt_topo_collect_gpus(topo, t, &objs)) != NT_OK ||
        (st = nt_topo_collect_nics(topo, t, &objs)) != NT_OK ||
        (st = nt_topo_collect_paths(topo, t, &objs)) != NT_OK)
        goto free_objs;

    NT_INFO(TOPO, "topology '%s': %d packages, %d NUMA nodes, %d cores, %d GPUs, %d RDMA NICs",
            t->source, t->npackages, t->nnuma, t->ncores, t->ngpus, t->nnics);
    free(objs.gpu);
    free(objs.nic);
    hwloc_topology_destroy(topo);
    *out = t;
    return NT_OK;

free_objs:
    free(objs.gpu);
    free(objs.nic);
destroy_topo:
    hwloc_topology_destroy(topo);
free_t:
    nt_topo_destroy(t);
    return st;
}

void nt_topo_destroy(nt_topo_t *t)
{
    if (!t)
        return;
    free(t->numa);
    free(t->gpus);
    free(t->nics);
    free(t->paths);
    free(t->gpu_paths);
    free(t);
}

/* Adds key: OS index, or null when unknown (-1). */
static nt_status_t nt_json_add_index(cJSON *obj, const char *key, int v)
{
    if (v < 0)
        return cJSON_AddNullToObject(obj, key) ? NT_OK : NT_ERR_NOMEM;
    return nt_json_add_num(obj, key, v);
}

nt_status_t nt_topo_to_json(const nt_topo_t *t, cJSON *node)
{
    cJSON *cpus, *numa, *gpus, *aff;

    if (!t || !node)
        return NT_ERR_INVALID;
    cpus = nt_json_add_obj(node, "cpus");
    if (!cpus || nt_json_add_str(cpus, "model", t->cpu_model[0] ? t->cpu_model : NULL) ||
        nt_json_add_num(cpus, "packages", t->npackages) ||
        nt_json_add_num(cpus, "cores", t->ncores) || nt_json_add_num(cpus, "pus", t->npus))
        return NT_ERR_NOMEM;

    numa = nt_json_add_arr(node, "numa_nodes");
    if (!numa)
        return NT_ERR_NOMEM;
    for (int i = 0; i < t->nnuma; i++) {
        cJSON *n = cJSON_CreateObject();
        if (!n || !cJSON_AddItemToArray(numa, n)) {
            cJSON_Delete(n);
            return NT_ERR_NOMEM;
        }
        if (nt_json_add_num(n, "index", t->numa[i].os_index) ||
            (t->numa[i].memory_bytes &&
             nt_json_add_num(n, "memory_bytes", (double)t->numa[i].memory_bytes)) ||
            nt_json_add_num(n, "cores", t->numa[i].ncores) ||
            nt_json_add_num(n, "pus", t->numa[i].npus))
            return NT_ERR_NOMEM;
    }

    gpus = nt_json_add_arr(node, "gpus");
    if (!gpus)
        return NT_ERR_NOMEM;
    for (int i = 0; i < t->ngpus; i++) {
        const nt_topo_gpu_t *g = &t->gpus[i];
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(gpus, o)) {
            cJSON_Delete(o);
            return NT_ERR_NOMEM;
        }
        if (nt_json_add_num(o, "index", g->index) ||
            nt_json_add_str(o, "name", g->name[0] ? g->name : NULL) ||
            nt_json_add_str(o, "pci_bus_id", g->pci_bus_id) ||
            nt_json_add_index(o, "numa_node", g->numa_node))
            return NT_ERR_NOMEM;
        /* An hwloc XML records the link speed only: reported as is (docs/gpu.md). */
        if (strcmp(t->source, "live") != 0 && g->link_GBps > 0) {
            cJSON *pc = nt_json_add_obj(o, "pcie");
            if (!pc || nt_json_add_num(pc, "link_GBps", round(g->link_GBps * 100.0) / 100.0))
                return NT_ERR_NOMEM;
        }
    }

    aff = nt_json_add_arr(node, "affinity");
    if (!aff)
        return NT_ERR_NOMEM;
    for (int g = 0; g < t->ngpus; g++)
        for (int n = 0; n < t->nnics; n++) {
            cJSON *o = cJSON_CreateObject();
            if (!o || !cJSON_AddItemToArray(aff, o)) {
                cJSON_Delete(o);
                return NT_ERR_NOMEM;
            }
            if (nt_json_add_num(o, "gpu", g) || nt_json_add_str(o, "nic", t->nics[n].name) ||
                nt_json_add_str(o, "path", nt_path_string(nt_topo_path(t, g, n))))
                return NT_ERR_NOMEM;
        }
    return NT_OK;
}

nt_status_t nt_topo_nic_to_json(const nt_topo_t *t, int n, cJSON *obj)
{
    const nt_topo_nic_t *nic;
    cJSON *nd;

    if (!t || !obj || n < 0 || n >= t->nnics)
        return NT_ERR_INVALID;
    nic = &t->nics[n];
    if (nt_json_add_str(obj, "name", nic->name) || nt_json_add_str(obj, "kind", nic->kind) ||
        nt_json_add_str(obj, "pci_bus_id", nic->pci_bus_id[0] ? nic->pci_bus_id : NULL) ||
        nt_json_add_index(obj, "numa_node", nic->numa_node))
        return NT_ERR_NOMEM;
    nd = nt_json_add_arr(obj, "netdevs");
    if (!nd)
        return NT_ERR_NOMEM;
    for (int i = 0; i < nic->nnetdevs; i++) {
        cJSON *s = cJSON_CreateString(nic->netdevs[i]);
        if (!s || !cJSON_AddItemToArray(nd, s)) {
            cJSON_Delete(s);
            return NT_ERR_NOMEM;
        }
    }
    return NT_OK;
}
