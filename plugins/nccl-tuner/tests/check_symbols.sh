#!/bin/sh
# Checks the built plugin the way a production node will see it:
#  - it exports exactly ncclTunerPlugin_v2..v6 and nettune_tuner_control_v1 (everything else
#    hidden);
#  - it needs nothing but libc and libcjson.so.1, found through RUNPATH $ORIGIN;
#  - neither it nor the libcjson.so.1 that `make install` copies beside it uses a glibc symbol
#    version newer than $2 (default 2.28: RHEL 8, Ubuntu 20.04 containers).
# Usage: check_symbols.sh PATH/libnccl-tuner-nettune.so [GLIBC_MAX]
set -u
lib=$1
max=${2:-2.28}
n=0; bad=0
ok()   { n=$((n + 1)); echo "ok $n - $1"; }
nok()  { n=$((n + 1)); bad=$((bad + 1)); echo "not ok $n - $1"; }

exports=$(nm -D --defined-only "$lib" | awk '{print $NF}' | sort | tr '\n' ' ')
want="ncclTunerPlugin_v2 ncclTunerPlugin_v3 ncclTunerPlugin_v4 ncclTunerPlugin_v5 ncclTunerPlugin_v6 nettune_tuner_control_v1 "
if [ "$exports" = "$want" ]; then ok "exports exactly: $exports"; else nok "exports '$exports', expected '$want'"; fi

needed=$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
if [ "$needed" = "libc.so.6 libcjson.so.1 " ]; then ok "needs only: $needed"; else nok "needs '$needed', expected 'libc.so.6 libcjson.so.1'"; fi

if readelf -d "$lib" | grep -E '\((RUNPATH|RPATH)\)' | grep -q '\$ORIGIN'; then
  ok "run path is \$ORIGIN"
else
  nok "no \$ORIGIN run path"
fi

check_glibc() {
  newest=$(objdump -T "$1" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -1)
  if [ -z "$newest" ]; then nok "$2: no glibc versions found by objdump -T"; return; fi
  top=$(printf '%s\n%s\n' "$newest" "$max" | sort -V | tail -1)
  if [ "$top" = "$max" ]; then
    ok "$2: newest glibc symbol version $newest <= $max"
  else
    nok "$2: needs GLIBC_$newest > $max:"
    objdump -T "$1" | grep "GLIBC_$newest" | sed 's/^/    /'
  fi
}
check_glibc "$lib" "$(basename "$lib")"
cjson=$(ldd "$lib" | awk '/libcjson.so.1/ {print $3}')
if [ -n "$cjson" ] && [ -f "$cjson" ]; then check_glibc "$cjson" "libcjson.so.1 ($cjson)"; else nok "libcjson.so.1 not resolved by ldd"; fi

# It loads with nothing but its own run path (no LD_LIBRARY_PATH help).
if env -u LD_LIBRARY_PATH ldd "$lib" | grep -q 'not found'; then nok "unresolved libraries"; else ok "all libraries resolve"; fi

echo "symbols: $((n - bad)) passed, $bad failed"
[ "$bad" = 0 ]
