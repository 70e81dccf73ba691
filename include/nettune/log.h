/* Logging with levels and subsystems, every line prefixed with host and rank.
 *
 * NETTUNE_DEBUG=ERROR|WARN|INFO|DEBUG|TRACE selects the level (default WARN).
 * NETTUNE_DEBUG_SUBSYS=INIT,TOPO,... limits INFO and below to those subsystems ("ALL" or unset:
 * every subsystem; a leading '^' excludes the listed ones, as NCCL_DEBUG_SUBSYS does).
 * Lines go to stderr: "nettune <host>:<rank> WARN MPI: message". */
#ifndef NETTUNE_LOG_H
#define NETTUNE_LOG_H

typedef enum nt_log_level {
    NT_LOG_NONE = 0,
    NT_LOG_ERROR,
    NT_LOG_WARN,
    NT_LOG_INFO,
    NT_LOG_DEBUG,
    NT_LOG_TRACE
} nt_log_level_t;

typedef enum nt_log_subsys {
    NT_SUB_INIT = 1 << 0,
    NT_SUB_TOPO = 1 << 1,
    NT_SUB_PCIE = 1 << 2,
    NT_SUB_MPI = 1 << 3,
    NT_SUB_RDMA = 1 << 4,
    NT_SUB_GPU = 1 << 5,
    NT_SUB_SCHED = 1 << 6,
    NT_SUB_VERDICT = 1 << 7,
    NT_SUB_REPORT = 1 << 8,
    NT_SUB_TUNE = 1 << 9,
    NT_SUB_DOCTOR = 1 << 10,
    NT_SUB_ALL = 0x7ff
} nt_log_subsys_t;

/* nt_log_init - read NETTUNE_DEBUG and NETTUNE_DEBUG_SUBSYS and set the line prefix.
 * host: this node's name (NULL = gethostname()); rank: -1 when there is no launcher.
 * May be called again (e.g. once the rank is known). Never fails: bad values are warned about
 * once and the defaults kept. */
void nt_log_init(const char *host, int rank);

/* nt_log_enabled - whether a message of this level and subsystem would be printed. */
int nt_log_enabled(nt_log_level_t level, nt_log_subsys_t subsys);

/* nt_log - print one line (printf format, no trailing newline needed) if enabled. */
void nt_log(nt_log_level_t level, nt_log_subsys_t subsys, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* nt_log_subsys_name - "MPI" for NT_SUB_MPI; "?" for anything else. */
const char *nt_log_subsys_name(nt_log_subsys_t subsys);

#define NT_ERROR(sub, ...) nt_log(NT_LOG_ERROR, NT_SUB_##sub, __VA_ARGS__)
#define NT_WARN(sub, ...) nt_log(NT_LOG_WARN, NT_SUB_##sub, __VA_ARGS__)
#define NT_INFO(sub, ...) nt_log(NT_LOG_INFO, NT_SUB_##sub, __VA_ARGS__)
#define NT_DEBUG(sub, ...) nt_log(NT_LOG_DEBUG, NT_SUB_##sub, __VA_ARGS__)
#define NT_TRACE(sub, ...) nt_log(NT_LOG_TRACE, NT_SUB_##sub, __VA_ARGS__)

#endif
