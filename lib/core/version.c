/* The build's version string (include/nettune/version.h). */
#include "nettune/version.h"

#ifndef NETTUNE_VERSION
#define NETTUNE_VERSION "unknown"
#endif

const char *nt_version(void)
{
    return NETTUNE_VERSION;
}
