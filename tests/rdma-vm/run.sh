#!/bin/bash
# make test-rdma-vm: boot Debian's kernel with soft-RoCE (rdma_rxe) under qemu and run the RDMA
# probe for real inside it (guest-tests.sh), then check the artifacts here (check.py).
# Prints one "SKIP: <reason>" line and exits 0 when this machine cannot run the VM.
# Env: NT_RDMA_VM_DIR (work folder, default /tmp/nettune-rdma-vm-<uid>), NT_TESTS (guest steps),
#      NT_VM_TIMEOUT (seconds, default 420), NT_VM_BINS (binaries to put in the guest).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
# Not under build/: the top Makefile includes every *.d found there, and the guest tree has
# /etc/libibverbs.d.
W=${NT_RDMA_VM_DIR:-${TMPDIR:-/tmp}/nettune-rdma-vm-$(id -u)}
mkdir -p "$W"; W=$(cd "$W" && pwd)
skip() { echo "SKIP: test-rdma-vm: $*"; exit 0; }
die() { echo "FAIL: test-rdma-vm: $*"; exit 1; }
ts() { echo "rdma-vm [$(date +%T)] $*"; }
# One run at a time per work folder (two checkouts testing at once would overwrite each other's
# initrd, log and artifacts): the second waits for the first, then reuses its kernel.
exec 9>"$W/.lock"
if ! flock -n 9; then
  ts "another test-rdma-vm uses $W: waiting for it"
  flock -w $(( ${NT_VM_TIMEOUT:-420} + 300 )) 9 || die "$W/.lock still held after $(( ${NT_VM_TIMEOUT:-420} + 300 )) s (a stuck run? remove it, or set NT_RDMA_VM_DIR)"
fi

# 1. tools. CI runs as root on a fresh Debian 12: install what is missing; elsewhere skip.
PKGS="qemu-system-x86 busybox-static cpio kmod xz-utils zstd file iproute2 perftest ibverbs-utils rdma-core ibverbs-providers openmpi-bin"
missing=""
for p in $PKGS; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"; done
if [ -n "$missing" ]; then
  [ "$(id -u)" = 0 ] || skip "missing Debian packages:$missing (run as root: apt-get install$missing)"
  ts "installing:$missing"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null 2>&1 ||
    { apt-get update -qq >/dev/null 2>&1; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null 2>&1; } ||
    skip "cannot install$missing (apt-get failed: no package registry reachable?)"
fi
file -b /bin/busybox | grep -q static || skip "/bin/busybox is not the static one (apt-get install busybox-static)"

# 2. Debian's kernel (has rdma_rxe as a module), downloaded once, unpacked, not installed.
if [ ! -s "$W/vmlinuz" ]; then
  KPKG=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-/{print $2; exit}')
  if [ -z "$KPKG" ] && [ "$(id -u)" = 0 ]; then
    apt-get update -qq >/dev/null 2>&1
    KPKG=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-/{print $2; exit}')
  fi
  [ -n "$KPKG" ] || skip "apt-cache knows no linux-image-amd64 (no Debian package lists: run apt-get update)"
  (cd "$W" && rm -f linux-image-*.deb && apt-get download "$KPKG" >/dev/null 2>&1) ||
    skip "cannot download $KPKG from the Debian archive (apt-get download failed)"
  rm -rf "$W/kernel" && dpkg -x "$W"/linux-image-*.deb "$W/kernel" || die "cannot unpack the kernel"
  cp "$W"/kernel/boot/vmlinuz-* "$W/vmlinuz"
  rm -f "$W"/linux-image-*.deb
fi

# 3. initrd with our binaries
BINS=${NT_VM_BINS:-$ROOT/build/bin/nettune-probe}
ts "building the initrd"
WITH_MPI=1 "$HERE/build-initrd.sh" "$W" $BINS > "$W/build-initrd.log" 2>&1 || { cat "$W/build-initrd.log"; die "build-initrd.sh failed"; }

# 4. boot. TCG (no KVM in CI); 2 vCPUs.
# TCG unless NT_VM_KVM=1: a /dev/kvm that exists can still hang the boot (nested hosts that lack
# CPU features: seen on this project's build machines), and TCG boots in ~30 s.
ACCEL="-accel tcg"; [ "${NT_VM_KVM:-0}" = 1 ] && ACCEL="-accel kvm"
ts "booting ($ACCEL, tests ${NT_TESTS:-default})"
start=$(date +%s)
timeout "${NT_VM_TIMEOUT:-420}" qemu-system-x86_64 $ACCEL -m 2048 -smp 2 -nographic -no-reboot \
  -kernel "$W/vmlinuz" -initrd "$W/initrd.gz" \
  -append "console=ttyS0 quiet panic=1 NT_TESTS=${NT_TESTS:-probe,perftest,loopback,faults,gpu,fabric}" \
  -netdev user,id=n0 -device virtio-net-pci,netdev=n0,romfile= > "$W/vm.log" 2>&1
rc=$?
ts "qemu rc=$rc after $(( $(date +%s) - start )) s, log $W/vm.log"
tr -d '\r' < "$W/vm.log" > "$W/vm.clean.log"
grep -q NT_GUEST_DONE "$W/vm.clean.log" || { tail -n 40 "$W/vm.clean.log"; die "the guest did not finish (rc=$rc: hang, panic or timeout)"; }

# 5. artifacts back from the serial console
rm -rf "$W/out"; mkdir -p "$W/out"
awk -v out="$W/out" '
  /^NT_FILE_BEGIN /{name=$2; f=out "/" name ".b64"; printf "" > f; next}
  /^NT_FILE_END /{close(f); name=""; next}
  name!=""{print >> f}' "$W/vm.clean.log"
for b in "$W"/out/*.b64; do [ -e "$b" ] || continue; base64 -d "$b" > "${b%.b64}" 2>/dev/null || die "corrupt artifact $b"; rm -f "$b"; done
grep -E "^NT_(RESULT|INFO)" "$W/vm.clean.log"
ls "$W/out"
exec python3 "$HERE/check.py" "$W/out" "$W/vm.clean.log"
