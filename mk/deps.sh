#!/bin/sh
# Install the Debian packages that building and testing nettune needs.
# Usage: mk/deps.sh [build|test]   (test = build + what the test suite runs)
# As root it runs apt-get; otherwise it prints the apt-get line to run.
set -eu
what=${1:-build}
BUILD_PKGS="build-essential pkg-config libhwloc-dev hwloc libcjson-dev libxml2-dev zlib1g-dev libibverbs-dev librdmacm-dev \
ibverbs-providers rdma-core libopenmpi-dev openmpi-bin"
TEST_PKGS="libcmocka-dev python3 python3-jsonschema perftest valgrind binutils \
qemu-system-x86 busybox-static cpio kmod xz-utils zstd file iproute2 ibverbs-utils prometheus \
chromium clang slurm-wlm slurmctld slurmd slurm-client munge"
pkgs=$BUILD_PKGS
[ "$what" = test ] && pkgs="$pkgs $TEST_PKGS"
missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "deps: installing:$missing" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends $missing >&2
else
  echo "deps: missing Debian packages; run as root:" >&2
  echo "  apt-get install -y$missing" >&2
  exit 1
fi
