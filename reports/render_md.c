/* Markdown: the terminal summary's content as GitHub-flavoured Markdown, for tickets and
 * wikis. Every cell goes through nt_buf_put_md, so a host or reason cannot break a table. */
#include "rpt.h"

nt_status_t nt_render_md(const nt_rdoc_t *doc, const nt_render_opts_t *o, nt_buf_t *out)
{
    nt_render_opts_t plain = *o;

    plain.color = 0;
    return nt_render_summary(doc, &plain, NT_TABLE_MD, out);
}
