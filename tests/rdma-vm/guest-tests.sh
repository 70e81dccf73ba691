#!/bin/sh
# The tests inside the soft-RoCE VM. Output protocol on the serial console, read by run.sh:
#   NT_FILE_BEGIN name / base64 lines / NT_FILE_END name   an artifact for the host
#   NT_RESULT name rc=N                                    exit status of a step
#   NT_INFO text                                           for the log
# NT_TESTS (kernel command line) selects steps: capture, selftest, probe, perftest, faults.
T=${NT_TESTS:-capture,probe,perftest,faults}
ts() { echo "NT_INFO [T+$(cut -d' ' -f1 /proc/uptime)s] $*"; }
emit() { # name file: send a file to the host
  echo "NT_FILE_BEGIN $1"; base64 < "$2"; echo "NT_FILE_END $1"
}
result() { echo "NT_RESULT $1 rc=$2"; }
want() { case ",$T," in *",$1,"*) return 0;; esac; return 1; }

# cap SRC DST DEPTH: copy a sysfs directory: regular files with their contents, symlinks as
# symlinks (their targets kept as text: they dangle in the copy, which is what readlink needs),
# real directories recursively up to DEPTH. Unreadable attributes (EINVAL, write-only) are left
# out, as they read on the live system.
ZGID=0000:0000:0000:0000:0000:0000:0000:0000
cap() {
  local src=$1 dst=$2 depth=$3 f b
  mkdir -p "$dst"
  for f in "$src"/*; do
    b=${f##*/}
    case $b in power|subsystem|uevent|cm_rx_*|cm_tx_*|'*') continue;; esac
    # a GID table has 1024 entries, nearly all zero: keep the first 8 and every non-zero one
    case $src in */gids) if [ "$b" -ge 8 ] && [ "$(cat "$f")" = "$ZGID" ]; then continue; fi;; esac
    if [ -L "$f" ]; then ln -s "$(readlink "$f")" "$dst/$b"
    elif [ -d "$f" ]; then [ "$depth" -gt 0 ] && cap "$f" "$dst/$b" $((depth - 1))
    else cat "$f" > "$dst/$b" 2>/dev/null || rm -f "$dst/$b"
    fi
  done
}

ts "guest tests: $T"
ibv_devinfo -v 2>&1 | grep -E "hca_id|state|link_layer|active_|GID\[" | sed 's/^/NT_INFO /'

if want capture; then
  # rxe0 on eth0 (up, ACTIVE); rxe1 on dummy0 taken down for the capture (port DOWN)
  ip link set dummy0 down; sleep 1
  C=/tmp/cap/sysfs-rxe
  for d in /sys/class/infiniband/*; do
    n=${d##*/}; cap "$d/" "$C/sys/class/infiniband/$n" 6
  done
  for n in eth0 dummy0 lo; do [ -e /sys/class/net/$n ] && cap "/sys/class/net/$n/" "$C/sys/class/net/$n" 0; done
  mkdir -p "$C/sys/devices/system/node"
  [ -d /sys/devices/system/node/node0 ] && cap /sys/devices/system/node/node0 "$C/sys/devices/system/node/node0" 0
  (cd /tmp/cap && tar czf /tmp/sysfs-rxe.tgz sysfs-rxe)
  emit sysfs-rxe.tgz /tmp/sysfs-rxe.tgz
  ip link set dummy0 up; sleep 1
  result capture 0
fi
