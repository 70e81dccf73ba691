/* tree_put - write text to root/rel, creating its directories: stand-in sysfs and cgroup trees
 * for the unit tests (test_core_io, test_probe_nodes). Fails the cmocka test on any error. */
#ifndef NT_TEST_TREE_PUT_H
#define NT_TEST_TREE_PUT_H

#include <stdio.h>
#include <stdlib.h>

static inline void tree_put(const char *root, const char *rel, const char *text)
{
    char path[512], cmd[600];
    snprintf(path, sizeof(path), "%s/%s", root, rel[0] == '/' ? rel + 1 : rel);
    snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
    assert_int_equal(system(cmd), 0);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

#endif
