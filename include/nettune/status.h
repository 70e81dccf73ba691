/* nettune status codes: one status type for the whole project (UCX ucs_status_t style).
 * Foreign error conventions (errno, MPI, verbs, CUDA) are converted once, in the wrapper
 * that calls them. "Unsupported on this node" is its own code, never a failure. */
#ifndef NETTUNE_STATUS_H
#define NETTUNE_STATUS_H

typedef enum nt_status {
    NT_OK = 0,
    NT_ERR_UNSUPPORTED, /* the hardware or library is absent on this node: a skip, not a failure */
    NT_ERR_INVALID,     /* bad argument, bad option or malformed input */
    NT_ERR_PARSE,       /* a file that cannot be parsed (JSON, XML, CSV) */
    NT_ERR_NOT_FOUND,   /* a named file, device or entry does not exist */
    NT_ERR_IO,          /* read or write failed (errno is logged where it happened) */
    NT_ERR_NOMEM,       /* allocation failed */
    NT_ERR_TIMEOUT,     /* a deadline passed (a wait, a poll, a peer) */
    NT_ERR_PEER,        /* the peer rank failed or reported an error */
    NT_ERR_INTERRUPTED, /* SIGTERM/SIGINT or the run's time limit stopped the work */
    NT_ERR_SYSTEM,      /* a system or library call failed for another reason */
    NT_STATUS_COUNT
} nt_status_t;

/* nt_status_string - a short lowercase description of a status ("timed out"), never NULL.
 * Unknown values give "unknown status". */
const char *nt_status_string(nt_status_t status);

#endif
