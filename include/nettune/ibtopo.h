/* The InfiniBand switches' view of the fabric: which hosts hang under which leaf switch, read
 * from an operator's `ibnetdiscover` or `iblinkinfo` output (infiniband-diags, rdma-core). One
 * reader per format, both into one nt_ibtopo_t; the fabric judge checks its inferred groups
 * against it (docs/fabric.md) and the doctor's reader stage recognizes the files. */
#ifndef NETTUNE_IBTOPO_H
#define NETTUNE_IBTOPO_H

#include <stddef.h>

#include "nettune/status.h"

/* One host port seen on a switch: the host's name (the first word of its node description,
 * "node018" of "node018 HCA-1"; the node id "H-<guid>" when the description names no host)
 * and the switch it is cabled to (index into nt_ibtopo_t.switches). */
typedef struct nt_ibtopo_host {
    char name[128];
    int leaf;
} nt_ibtopo_host_t;

typedef struct nt_ibtopo_switch {
    char guid[40];  /* "0x0002c9020046c588" */
    char desc[128]; /* its node description ("MF0;leaf01:MQM9700/U1"), "" when not given */
    int nhosts;     /* host ports cabled to it: a switch with none is a spine */
} nt_ibtopo_switch_t;

typedef struct nt_ibtopo {
    const char *format; /* "ibnetdiscover" or "iblinkinfo" */
    nt_ibtopo_host_t *hosts;
    size_t nhosts;
    nt_ibtopo_switch_t *switches;
    size_t nswitches;
} nt_ibtopo_t;

/* nt_ibtopo_parse_ibnetdiscover - read the text of `ibnetdiscover` (its default topology-file
 * format: "switchguid=0x..." and "Switch N \"S-...\"" blocks with "[port] \"H-...\"[port](guid)
 * # \"desc\"" lines, as infiniband-diags' ibnetdiscover.c prints them) into *out. A host with
 * ports on several switches (two rails) is listed once per switch. len bytes of text, not
 * NUL-terminated. NT_ERR_PARSE (why says what, with the line number) when no switch block is
 * found; NT_ERR_NOMEM. Free with nt_ibtopo_free. */
nt_status_t nt_ibtopo_parse_ibnetdiscover(const char *text, size_t len, nt_ibtopo_t *out,
                                          char *why, size_t whylen);

/* nt_ibtopo_parse_iblinkinfo - the same from `iblinkinfo` output, in its default layout
 * ("Switch: 0x<guid> <desc>:" headers, then one line per port "LID PORT[  ] ==( ... )==> LID
 * PORT[  ] \"desc\" ( )") and in its one-line layout (`iblinkinfo -l`: "0x<guid> \"desc\" LID PORT
 * ... ==> ..."). CA headers ("CA: host HCA-1:") and their lines are read too: a CA's link to a
 * switch names the switch by its description only, so the switch sections are what counts.
 * NT_ERR_PARSE when no switch port line is found; NT_ERR_NOMEM. */
nt_status_t nt_ibtopo_parse_iblinkinfo(const char *text, size_t len, nt_ibtopo_t *out,
                                       char *why, size_t whylen);

/* nt_ibtopo_sniff - which of the two formats text looks like: "ibnetdiscover", "iblinkinfo"
 * or NULL (neither). Reads at most the first 64 KiB. */
const char *nt_ibtopo_sniff(const char *text, size_t len);

/* nt_ibtopo_line - 1 when one line of text is a line of ibnetdiscover or iblinkinfo output (a
 * node header, a port or link line), else 0: the doctor's operator-file reader stage counts
 * such lines as read (reports/doctor/read_operator.c). */
int nt_ibtopo_line(const char *line);

/* nt_ibtopo_load - read the file at path (either format, told apart by nt_ibtopo_sniff) into
 * *out. A file that cannot be read or is neither format is logged as one line naming the file
 * and the fix; NT_ERR_NOT_FOUND / NT_ERR_IO / NT_ERR_PARSE then. */
nt_status_t nt_ibtopo_load(const char *path, nt_ibtopo_t *out);

/* nt_ibtopo_leaf_of - the leaf switch index of host name (compared up to its first '.', so
 * "node018.cluster" finds "node018"), -1 when absent; the first one for a host on several. */
int nt_ibtopo_leaf_of(const nt_ibtopo_t *t, const char *host);

/* nt_ibtopo_free - free what a parse filled in (a zeroed or partly filled one is fine). */
void nt_ibtopo_free(nt_ibtopo_t *t);

#endif
