/* The links as CSV (RFC 4180: CRLF line ends, fields with , " CR LF quoted, " doubled), one
 * row per link in file order, figures in the JSON's units (GB/s, us); absent values empty. */
#include <math.h>
#include <string.h>

#include "rpt.h"

static void nt_csv_num(nt_buf_t *out, double v)
{
    char num[64];
    nt_buf_puts(out, ",");
    if (!isnan(v))
        nt_buf_puts(out, nt_fmt_num(num, sizeof(num), v, 10));
}

static void nt_csv_int(nt_buf_t *out, int v)
{
    if (v >= 0)
        nt_buf_printf(out, ",%d", v);
    else
        nt_buf_puts(out, ",");
}

static void nt_csv_str(nt_buf_t *out, const char *s)
{
    nt_buf_puts(out, ",");
    nt_buf_put_csv(out, s);
}

nt_status_t nt_render_csv(const nt_rdoc_t *doc, const nt_render_opts_t *o, nt_buf_t *out)
{
    if (o->node && nt_rdoc_find_node(doc, o->node) < 0)
        return NT_ERR_NOT_FOUND;
    nt_buf_puts(out, "id,kind,variant,scope,src_host,src_rank,src_device,dst_host,dst_rank,"
                     "dst_device,peak_bw_GBps,peak_bw_bytes,small_msg_lat_us,"
                     "small_msg_lat_bytes,expected_bw_GBps,efficiency,verdict,reasons,code,category\r\n");
    for (size_t i = 0; i < doc->nlinks; i++) {
        const nt_rlink_t *l = &doc->links[i];
        char reasons[4096];
        if (o->node && strcmp(l->src_host, o->node) != 0)
            continue;
        nt_buf_put_csv(out, l->id);
        nt_csv_str(out, l->kind);
        nt_csv_str(out, l->variant);
        nt_csv_str(out, l->scope);
        nt_csv_str(out, l->src_host);
        nt_csv_int(out, l->src_rank);
        nt_csv_str(out, l->src_dev);
        nt_csv_str(out, l->dst_host);
        nt_csv_int(out, l->dst_rank);
        nt_csv_str(out, l->dst_dev);
        nt_csv_num(out, l->peak_bw_GBps);
        nt_csv_num(out, nt_json_get_num(l->j, "peak_bw_bytes", NAN));
        nt_csv_num(out, l->small_msg_lat_us);
        nt_csv_num(out, nt_json_get_num(l->j, "small_msg_lat_bytes", NAN));
        nt_csv_num(out, l->expected_bw_GBps);
        nt_csv_num(out, nt_link_efficiency(l));
        nt_csv_str(out, nt_verdict_string(l->verdict));
        nt_csv_str(out, nt_link_reasons(l, reasons, sizeof(reasons)));
        nt_csv_str(out, nt_json_get_str(l->j, "code", "")); /* docs/codes.md */
        nt_csv_str(out, nt_json_get_str(l->j, "category", ""));
        nt_buf_puts(out, "\r\n");
    }
    return out->oom ? NT_ERR_NOMEM : NT_OK;
}
