/* Units on command lines: the one reader of a size in bytes (lib/core/units.c). */
#ifndef NETTUNE_UNITS_H
#define NETTUNE_UNITS_H

#include <stddef.h>

#include "nettune/status.h"

/* The largest size nt_parse_size accepts: 1 TiB (no message, buffer or sweep is larger; a
 * bound also keeps value x multiple from wrapping). */
#define NT_SIZE_MAX_BYTES (1ull << 40)

/* nt_parse_size - "8", "4K", "1M", "2G" (binary multiples K = 2^10, M = 2^20, G = 2^30, either
 * case, an optional "iB" or "B" after them) -> bytes in *out. NT_ERR_INVALID, *out untouched,
 * for anything else: no leading digit (a sign, a space), another suffix, or more than
 * NT_SIZE_MAX_BYTES (checked before the multiplication, so "17179869185G" is refused, not
 * wrapped). The callers bound it further and name the option in their message: nettune probe
 * --sizes, --rdma-max-size, --gpu-buffer-size; nettune tune --min-bytes, --max-bytes. */
nt_status_t nt_parse_size(const char *s, size_t *out);

#endif
