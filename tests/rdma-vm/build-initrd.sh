#!/bin/bash
# Build $W/initrd.gz for the soft-RoCE test VM: busybox, the rdma_rxe kernel modules (from the
# unpacked Debian kernel in $W/kernel), rdma-core userspace, perftest, Open MPI, and the files
# named on the command line (our binaries), which land in /usr/bin of the guest, plus the guest
# scripts of this folder. Adapted from the rxe-vm recipe's build-initrd.sh (a soft-RoCE VM recipe).
# Usage: build-initrd.sh W FILE...
set -euo pipefail
W=$1; shift
HERE=$(cd "$(dirname "$0")" && pwd)
KVER=$(ls "$W/kernel/lib/modules" | head -n1)
KROOT=$W/kernel
R=$W/rootfs
ML=/usr/lib/x86_64-linux-gnu
rm -rf "$R"; mkdir -p "$R"/{bin,sbin,etc,proc,sys,dev,tmp,run,root,lib/modules,usr/bin,usr/sbin,nt}
cp /bin/busybox "$R/bin/busybox"
for a in $(/bin/busybox --list); do
  case $a in ip) continue;; esac      # busybox 'ip' cannot add a dummy link: iproute2's ip is copied
  [ -e "$R/bin/$a" ] || ln -s busybox "$R/bin/$a"
done

# kernel modules in dependency order (the .deb has no modules.dep: depmod first)
depmod -b "$KROOT" "$KVER"
MODS="virtio_pci virtio_net dummy crc32_generic rdma_rxe ib_uverbs ib_umad rdma_ucm"
: > "$R/lib/modules/load-order"
for m in $MODS; do modprobe -d "$KROOT" -S "$KVER" --show-depends "$m" | awk '$1=="insmod"{print $2}'; done |
awk '!s[$0]++' | while read -r f; do
  b=$(basename "$f")
  case "$f" in
    *.xz)  xz -dc "$f"    > "$R/lib/modules/${b%.xz}";  b=${b%.xz};;
    *.zst) zstd -qdc "$f" > "$R/lib/modules/${b%.zst}"; b=${b%.zst};;
    *)     cp "$f" "$R/lib/modules/$b";;
  esac
  echo "$b" >> "$R/lib/modules/load-order"
done

FILES="/usr/bin/ibv_devinfo /usr/bin/ibv_devices /usr/bin/ib_write_bw /usr/bin/ib_write_lat
 /usr/bin/ib_send_lat /usr/bin/rdma /usr/sbin/ip
 $ML/libibverbs/librxe-rdmav34.so /etc/libibverbs.d/rxe.driver"
if [ "${WITH_MPI:-1}" = 1 ]; then
  FILES="$FILES /usr/bin/orterun /usr/bin/mpirun /usr/bin/mpiexec /usr/bin/orted
   $ML/openmpi /etc/openmpi /usr/share/openmpi $ML/pmix2 $ML/hwloc
   $ML/librdmacm.so.1 $ML/libibumad.so.3"
fi
for f in $FILES; do
  [ -e "$f" ] || { echo "build-initrd: missing $f" >&2; continue; }
  mkdir -p "$R$(dirname "$f")"
  cp -a "$f" "$R$f" 2>/dev/null || cp -aL "$f" "$R$f"
done
for f in "$@"; do
  [ -e "$f" ] || { echo "build-initrd: missing $f" >&2; exit 1; }
  cp -L "$f" "$R/usr/bin/$(basename "$f")"
done
cp "$HERE"/guest-tests.sh "$R/nt/"; cp "$HERE"/*.json "$R/nt/" 2>/dev/null || true
# a topology with GPUs for the "gpu" step (GPU-memory links on a node without CUDA)
cp "$HERE"/../fixtures/hwloc-xml/xeon-4xV100-2xmlx5-hwloc1.xml "$R/nt/gpu-topo.xml" 2>/dev/null || true
# symlinks that would dangle inside the initramfs (mpirun -> /etc/alternatives/...) become copies
find "$R" -type l ! -path "$R/bin/*" | while read -r l; do
  t=$(readlink "$l"); case $t in /*) chk=$R$t;; *) chk=$(dirname "$l")/$t;; esac
  [ -e "$chk" ] || { rm "$l"; cp -aL "$(readlink -f "${l#$R}")" "$l"; }
done
# shared-library closure of every ELF (ldd is recursive), the dynamic loader included
find "$R" -type f ! -path "$R/lib/modules/*" -exec sh -c 'file -b "$1" | grep -q ELF && ldd "$1" 2>/dev/null' _ {} \; |
  grep -o '/[^ ]*' | sort -u | while read -r l; do
    [ -e "$R$l" ] && continue
    mkdir -p "$R$(dirname "$l")"; cp -L "$l" "$R$l"
  done
cp "$HERE/guest-init" "$R/init"; chmod +x "$R/init" "$R/nt/guest-tests.sh"
echo "root:x:0:0:root:/root:/bin/sh" > "$R/etc/passwd"
echo "root:x:0:" > "$R/etc/group"
printf "127.0.0.1 localhost rxevm\n" > "$R/etc/hosts"
(cd "$R" && find . -print0 | cpio --null -o -H newc --quiet | gzip -1) > "$W/initrd.gz"
rm -rf "$R"
echo "build-initrd: $(du -sh "$W/initrd.gz" | cut -f1) initrd with: $*"
