/* NCCL_IB_HCA parsing and matching, with NCCL's semantics (src/misc/utils.cc parseStringList,
 * matchIfList; src/transport/net_ib.cc for "^" and "="). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rdma.h"

void nt_hca_filter_parse(const char *s, nt_hca_filter_t *f)
{
    const char *p;
    int c = 0;
    char ch;

    memset(f, 0, sizeof(*f));
    if (!s)
        return;
    f->set = 1;
    snprintf(f->text, sizeof(f->text), "%s", s);
    p = s;
    if (*p == '^') {
        f->exclude = 1;
        p++;
    }
    if (*p == '=') {
        f->exact = 1;
        p++;
    }
    /* One pass as parseStringList: a name ends at ',' or at ':' (then a port follows, read
     * with atoi, and the rest up to ',' is skipped); empty names are dropped. */
    do {
        ch = *p;
        if (ch == ':') {
            if (c > 0) {
                f->e[f->n].prefix[c] = '\0';
                f->e[f->n].port = atoi(p + 1);
                f->n++;
                c = 0;
            }
            while (ch != ',' && ch != '\0')
                ch = *(++p);
        } else if (ch == ',' || ch == '\0') {
            if (c > 0) {
                f->e[f->n].prefix[c] = '\0';
                f->e[f->n].port = -1;
                f->n++;
                c = 0;
            }
        } else if (c < (int)sizeof(f->e[0].prefix) - 1) {
            f->e[f->n].prefix[c++] = ch;
        }
        p++;
    } while (f->n < NT_HCA_MAX && ch);
}

static int nt_hca_match_list(const nt_hca_filter_t *f, const char *dev, int port)
{
    if (f->n == 0)
        return 1;
    for (int i = 0; i < f->n; i++) {
        int name_ok = f->exact ? strcmp(dev, f->e[i].prefix) == 0
                               : strncmp(dev, f->e[i].prefix, strlen(f->e[i].prefix)) == 0;
        int port_ok = f->e[i].port == -1 || port == -1 || f->e[i].port == port;
        if (name_ok && port_ok)
            return 1;
    }
    return 0;
}

int nt_hca_filter_match(const nt_hca_filter_t *f, const char *dev, int port)
{
    if (!f->set)
        return 1;
    return nt_hca_match_list(f, dev, port) ^ f->exclude;
}
