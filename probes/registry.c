/* The probe registry: the one list of link probes of nettune-probe (see probe.h, "Registry").
 * The run (run.c), the option parser (params.c, --probes) and the retest selection (judge.c)
 * all read this table; a new probe is one folder and one row here. */
#include <stdio.h>
#include <string.h>

#include "probe.h"

/* The link probes, in the order they run: the MPI baseline first, then the hardware probes. */
static const nt_link_probe_ops_t *const nt_probe_table[] = {
    &nt_mpi_probe_ops,
    &nt_rdma_probe_ops,
};

const nt_link_probe_ops_t *const *nt_probe_registry(int *n)
{
    *n = (int)(sizeof(nt_probe_table) / sizeof(nt_probe_table[0]));
    return nt_probe_table;
}

int nt_probe_registry_find(const char *kind)
{
    int n;
    const nt_link_probe_ops_t *const *t = nt_probe_registry(&n);
    for (int k = 0; k < n; k++)
        if (kind && strcmp(t[k]->kind, kind) == 0)
            return k;
    return -1;
}

void nt_probe_registry_names(char *buf, size_t len, const char *sep)
{
    int n;
    size_t off = 0;
    const nt_link_probe_ops_t *const *t = nt_probe_registry(&n);
    if (len)
        buf[0] = '\0';
    for (int k = 0; k < n && off < len; k++)
        off += (size_t)snprintf(buf + off, len - off, "%s%s", k ? sep : "", t[k]->kind);
}

int nt_probe_selected(const char *list, const char *kind)
{
    size_t klen = strlen(kind);
    if (!list)
        return 1;
    for (const char *s = list; *s;) {
        size_t tl = strcspn(s, ",");
        if (tl == klen && strncmp(s, kind, klen) == 0)
            return 1;
        s += tl;
        if (*s == ',')
            s++;
    }
    return 0;
}
