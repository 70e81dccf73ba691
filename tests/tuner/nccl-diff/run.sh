#!/bin/sh
# Compares the tuner model with NCCL's own tuning.cc, tag by tag (a developer check, not part of
# `make test`: it needs an NVIDIA/nccl git checkout and compiles NCCL's file, which is never
# copied into this repository). Usage (from the repository root, after `make`):
#   tests/tuner/nccl-diff/run.sh /path/to/nccl.git [N] [TAG:CODE ...]
# With no TAG:CODE, every modelled tag (tuner/nccl_versions.c); `make nccl-follow` passes one.
set -e
git_dir=$1
n=${2:-5000}
[ $# -ge 2 ] && shift 2 || shift $#
here=$(dirname "$0")
# The model library and the libraries it calls (make tuner-model-diff passes them).
libs=${NT_MODEL_LIBS:-build/lib/libnttuner_model.a build/lib/libntnccl.a build/lib/libntcore.a -lcjson -lz -lm}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
specs=$*
[ -n "$specs" ] || specs="v2.14.3-1:21403 v2.21.5-1:22105 v2.22.3-1:22203 v2.23.4-1:22304 \
v2.24.3-1:22403 v2.25.1-1:22501 v2.26.6-1:22606 v2.27.3-1:22703 v2.27.7-1:22707 v2.28.3-1:22803 \
v2.28.7-1:22807 v2.28.9-1:22809 v2.29.3-1:22903 v2.29.7-1:22907 v2.30.4-1:23004 v2.30.7-1:23007"
fail=0
# build TAG DEFS: NCCL's tuning.cc at TAG with the shim and the harness
build() {
    git --git-dir="$git_dir" show "$1:src/graph/tuning.cc" > "$tmp/tuning.cc"
    g++ -O1 -w -std=c++17 $2 -I"$here/shim" -Iinclude -I. -o "$tmp/harness" "$here/harness.cc" \
        "$tmp/tuning.cc" $libs
}
# check LABEL CODE SEED ARCH [NCCL_ALGO NCCL_PROTO]
check() {
    printf '%s: ' "$1"
    if [ $# -gt 4 ]; then
        env ${5:+NCCL_ALGO=$5} ${6:+NCCL_PROTO=$6} "$tmp/harness" "$2" "$n" "$3" "$4" || fail=1
    else
        "$tmp/harness" "$2" "$n" "$3" "$4" || fail=1
    fi
}
for spec in $specs; do
    tag=${spec%%:*}
    code=${spec##*:}
    # each tag's shape: algorithm count, log2i(0), ncclTopoGetAlgoTime's signature, tuner constants
    case $tag in
    v2.14*) defs="-DSHIM_NUM_ALGORITHMS=4 -DSHIM_LOG2I_ZERO_IS_ZERO" ;;
    v2.21*) defs="-DSHIM_NUM_ALGORITHMS=6 -DSHIM_LOG2I_ZERO_IS_ZERO -DSHIM_ALGOTIME_INFO" ;;
    v2.22*) defs="-DSHIM_NUM_ALGORITHMS=6 -DSHIM_ALGOTIME_BACKUP" ;;
    v2.23*) defs="-DSHIM_ALGOTIME_BACKUP" ;;
    v2.24* | v2.25* | v2.26* | v2.27*) defs="" ;;
    *) defs="-DSHIM_TUNER_CONSTANTS" ;;
    esac
    build "$tag" "$defs"
    for arch in other power; do
        check "$tag" "$code" 12345 $arch
    done
    # the job's NCCL_ALGO / NCCL_PROTO: one list for every function before 2.24, per function
    # from 2.24; before 2.24 also NCCL_ALGO naming only CollNet (Ring and Tree come back) and
    # Tree alone (Broadcast is left with nothing: the Ring fallback)
    case $tag in
    v2.14*) check "$tag" "$code" 777 other "Tree,Ring,bogus" "^LL" ;;
    v2.21* | v2.22* | v2.23*)
        check "$tag" "$code" 777 other "Tree,Ring,bogus" "^LL"
        check "$tag" "$code" 778 other "CollNetDirect,NVLS" "LL128,Simple"
        check "$tag" "$code" 779 other "Tree" "" ;;
    *) check "$tag" "$code" 777 other "ring,nvls;allreduce:tree,collnetchain,nvlstree" \
        "^LL;allgather:LL128,Simple" ;;
    esac
done
# NCCL built with CUDA 11.8: the LL128 exception (v2.28.9-1 tuning.cc:493), with the full list only
case " $specs " in
*" v2.28.9-1:"*)
    build v2.28.9-1 "-DSHIM_TUNER_CONSTANTS -DCUDART_VERSION=11080"
    check "v2.28.9-1 CUDA 11.8" 22809 99 other ;;
esac
exit $fail
