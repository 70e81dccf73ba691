/* IB and RoCE port rates: see rdma.h for the rules and their sources. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rdma.h"

/* Per lane: the figure ibverbs prints, signalling, data. SDR/DDR/QDR: 8b/10b, the printed
 * figure is the signalling rate. FDR: printed 14 = 14.0625 Gb/s signalling, 64b/66b.
 * FDR10, EDR, HDR, NDR, XDR: the printed figure is the data rate, signalling = x 66/64. */
static const nt_ib_speed_t nt_ib_speeds[] = {
    {"SDR", 1, 2.5, 2.5, 2.0, "8b/10b"},
    {"DDR", 2, 5.0, 5.0, 4.0, "8b/10b"},
    {"QDR", 4, 10.0, 10.0, 8.0, "8b/10b"},
    {"FDR10", 8, 10.0, 10.3125, 10.0, "64b/66b"},
    {"FDR", 16, 14.0, 14.0625, 14.0625 * 64.0 / 66.0, "64b/66b"},
    {"EDR", 32, 25.0, 25.78125, 25.0, "64b/66b"},
    {"HDR", 64, 50.0, 51.5625, 50.0, "64b/66b"},
    {"NDR", 128, 100.0, 103.125, 100.0, "64b/66b"},
    {"XDR", 256, 200.0, 206.25, 200.0, "64b/66b"},
};
#define NT_NSPEEDS (int)(sizeof(nt_ib_speeds) / sizeof(nt_ib_speeds[0]))

const nt_ib_speed_t *nt_ib_speed_from_code(int code)
{
    for (int i = 0; i < NT_NSPEEDS; i++)
        if (nt_ib_speeds[i].ibv_code == code)
            return &nt_ib_speeds[i];
    return NULL;
}

const nt_ib_speed_t *nt_ib_speed_from_name(const char *name)
{
    if (!name)
        return NULL;
    for (int i = 0; i < NT_NSPEEDS; i++)
        if (strcasecmp(nt_ib_speeds[i].name, name) == 0)
            return &nt_ib_speeds[i];
    return NULL;
}

int nt_ib_width_lanes(int code)
{
    switch (code) {
    case 1:
        return 1;
    case 2:
        return 4;
    case 4:
        return 8;
    case 8:
        return 12;
    case 16:
        return 2;
    default:
        return 0;
    }
}

nt_status_t nt_port_rate_compute(int lanes, const nt_ib_speed_t *speed, int is_ethernet,
                                 nt_port_rate_t *out)
{
    memset(out, 0, sizeof(*out));
    out->encoding = "unknown";
    if (lanes <= 0 || !speed)
        return NT_ERR_INVALID;
    out->lanes = lanes;
    out->speed = speed;
    out->nominal_Gbps = lanes * speed->lane_Gbps;
    if (is_ethernet) {
        out->signal_Gbps = out->data_Gbps = out->nominal_Gbps;
        out->encoding = "ethernet";
    } else {
        out->signal_Gbps = lanes * speed->lane_signal_Gbps;
        out->data_Gbps = lanes * speed->lane_data_Gbps;
        out->encoding = speed->encoding;
    }
    return NT_OK;
}

nt_status_t nt_port_rate_parse_sysfs(const char *text, int is_ethernet, nt_port_rate_t *out)
{
    char *end;
    double g;
    const char *par;
    int lanes = 0;
    char name[16] = "";

    memset(out, 0, sizeof(*out));
    out->encoding = "unknown";
    if (!text)
        return NT_ERR_PARSE;
    g = strtod(text, &end);
    if (end == text || !(g > 0))
        return NT_ERR_PARSE;
    par = strchr(end, '(');
    if (par && sscanf(par, "(%dX %15[A-Za-z0-9]", &lanes, name) >= 1 && lanes > 0) {
        const nt_ib_speed_t *sp = nt_ib_speed_from_name(name);
        /* Trust the speed name only when it agrees with the figure (within rounding). */
        if (sp && fabs(lanes * sp->lane_Gbps - g) < 0.05 * g)
            return nt_port_rate_compute(lanes, sp, is_ethernet, out);
        out->lanes = lanes;
    }
    out->nominal_Gbps = out->signal_Gbps = out->data_Gbps = g;
    if (is_ethernet)
        out->encoding = "ethernet";
    return NT_OK;
}
