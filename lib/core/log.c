/* Logging: levels, subsystems, host:rank prefix. Configuration is read once per nt_log_init;
 * the state is process-wide by nature (one stderr). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "nettune/log.h"

static struct {
    nt_log_level_t level;
    unsigned subsys;
    char prefix[96];
} nt_log_state = {NT_LOG_WARN, NT_SUB_ALL, "nettune"};

static const struct {
    const char *name;
    nt_log_subsys_t bit;
} nt_subsys_names[] = {
    {"INIT", NT_SUB_INIT},   {"TOPO", NT_SUB_TOPO},       {"PCIE", NT_SUB_PCIE},
    {"MPI", NT_SUB_MPI},     {"RDMA", NT_SUB_RDMA},       {"GPU", NT_SUB_GPU},
    {"SCHED", NT_SUB_SCHED}, {"VERDICT", NT_SUB_VERDICT}, {"REPORT", NT_SUB_REPORT},
    {"TUNE", NT_SUB_TUNE},   {"DOCTOR", NT_SUB_DOCTOR},
};

static const char *const nt_level_names[] = {"NONE", "ERROR", "WARN", "INFO", "DEBUG", "TRACE"};

const char *nt_log_subsys_name(nt_log_subsys_t subsys)
{
    for (size_t i = 0; i < sizeof(nt_subsys_names) / sizeof(nt_subsys_names[0]); i++)
        if (nt_subsys_names[i].bit == subsys)
            return nt_subsys_names[i].name;
    return "?";
}

static unsigned nt_log_parse_subsys(const char *s, int *bad)
{
    int exclude = 0;
    unsigned mask = 0;
    char buf[256], *save = NULL;

    if (s[0] == '^') {
        exclude = 1;
        s++;
    }
    snprintf(buf, sizeof(buf), "%s", s);
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int found = 0;
        if (strcasecmp(tok, "ALL") == 0) {
            mask |= NT_SUB_ALL;
            continue;
        }
        for (size_t i = 0; i < sizeof(nt_subsys_names) / sizeof(nt_subsys_names[0]); i++) {
            if (strcasecmp(tok, nt_subsys_names[i].name) == 0) {
                mask |= nt_subsys_names[i].bit;
                found = 1;
            }
        }
        if (!found)
            *bad = 1;
    }
    return exclude ? (NT_SUB_ALL & ~mask) : mask;
}

void nt_log_init(const char *host, int rank)
{
    char hn[64] = "";
    const char *lv = getenv("NETTUNE_DEBUG");
    const char *ss = getenv("NETTUNE_DEBUG_SUBSYS");
    int bad_level = 0, bad_subsys = 0;

    if (!host) {
        gethostname(hn, sizeof(hn) - 1);
        host = hn;
    }
    if (rank >= 0)
        snprintf(nt_log_state.prefix, sizeof(nt_log_state.prefix), "nettune %s:%d", host, rank);
    else
        snprintf(nt_log_state.prefix, sizeof(nt_log_state.prefix), "nettune %s", host);

    nt_log_state.level = NT_LOG_WARN;
    if (lv && *lv) {
        bad_level = 1;
        for (int i = 0; i <= NT_LOG_TRACE; i++) {
            if (strcasecmp(lv, nt_level_names[i]) == 0) {
                nt_log_state.level = (nt_log_level_t)i;
                bad_level = 0;
            }
        }
    }
    nt_log_state.subsys = NT_SUB_ALL;
    if (ss && *ss)
        nt_log_state.subsys = nt_log_parse_subsys(ss, &bad_subsys);
    /* nt_log_init runs again once the rank is known: say it once. */
    static int warned;
    if ((bad_level || bad_subsys) && warned++)
        return;
    if (bad_level)
        nt_log(NT_LOG_WARN, NT_SUB_INIT,
               "ignoring NETTUNE_DEBUG='%s': use ERROR, WARN, INFO, DEBUG or TRACE", lv);
    if (bad_subsys)
        nt_log(NT_LOG_WARN, NT_SUB_INIT,
               "unknown name in NETTUNE_DEBUG_SUBSYS='%s': use INIT,TOPO,PCIE,MPI,RDMA,GPU,"
               "SCHED,VERDICT,REPORT,TUNE,DOCTOR or ALL",
               ss);
}

int nt_log_enabled(nt_log_level_t level, nt_log_subsys_t subsys)
{
    if (level == NT_LOG_NONE || level > nt_log_state.level)
        return 0;
    /* Errors and warnings are never filtered by subsystem: they must reach the operator. */
    if (level >= NT_LOG_INFO && !(nt_log_state.subsys & subsys))
        return 0;
    return 1;
}

void nt_log(nt_log_level_t level, nt_log_subsys_t subsys, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;

    if (!nt_log_enabled(level, subsys))
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    /* One fprintf per line so lines of concurrent ranks do not interleave mid-line. */
    fprintf(stderr, "%s %s %s: %s\n", nt_log_state.prefix, nt_level_names[level],
            nt_log_subsys_name(subsys), msg);
}
