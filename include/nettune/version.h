/* The one version string of this build, for --version output and the reports' tool.version. */
#ifndef NETTUNE_VERSION_H
#define NETTUNE_VERSION_H

/* nt_version - the build's version: `git describe --always --dirty` of the tree it was built
 * from (mk/config.mk), else "0.1.0". Only lib/core/version.c is compiled with it, and that object is
 * rebuilt whenever the string changes (build/version.stamp), so a rebuild after a commit never
 * shows the commit before. Never NULL; static storage. */
const char *nt_version(void);

#endif
