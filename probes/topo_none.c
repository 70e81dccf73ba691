/* Temporary stand-in until lib/topo.c lands. */
#include <stdlib.h>

#include "nettune/topo.h"

nt_status_t nt_topo_load(const char *xml_path, nt_topo_t **out)
{
    (void)xml_path;
    *out = NULL;
    return NT_ERR_UNSUPPORTED;
}
void nt_topo_destroy(nt_topo_t *t) { free(t); }
nt_status_t nt_topo_to_json(const nt_topo_t *t, cJSON *node)
{
    (void)t, (void)node;
    return NT_OK;
}
