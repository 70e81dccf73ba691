/* libFuzzer target for the switch topology readers of --fabric-topology (lib/node/ibtopo.c):
 * the input is sniffed and read as ibnetdiscover and as iblinkinfo output, and every host is
 * looked up by name. Any crash, leak or UB is a bug. */
#include <stdint.h>
#include <stdio.h>

#include "nettune/ibtopo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    char why[256];
    nt_ibtopo_t t;

    (void)nt_ibtopo_sniff(text, size);
    for (int k = 0; k < 2; k++) {
        nt_status_t st = k ? nt_ibtopo_parse_iblinkinfo(text, size, &t, why, sizeof(why))
                           : nt_ibtopo_parse_ibnetdiscover(text, size, &t, why, sizeof(why));
        if (st != NT_OK)
            continue;
        for (size_t i = 0; i < t.nhosts && i < 64; i++) {
            int leaf = nt_ibtopo_leaf_of(&t, t.hosts[i].name);
            if (leaf < 0 || (size_t)leaf >= t.nswitches)
                __builtin_trap(); /* a host read is found, on a switch read */
        }
        nt_ibtopo_free(&t);
    }
    return 0;
}
