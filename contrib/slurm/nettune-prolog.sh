#!/bin/sh
# Slurm Prolog for nettune (docs/slurm.md): this node's local checks before a job starts.
# slurm.conf: Prolog=/path/nettune-prolog.sh, PrologFlags=Alloc (else it runs only at a
# node's first step), PrologEpilogTimeout=... (bounds it; 22.05 expects a prolog to end within
# MessageTimeout, 10 s by default).
# A node that fails its checks is drained by nettune itself with its reason (nettune:<check>
# <observed>/<expected><unit> <detail>), before the prolog exits 1: Slurm's own "Prolog error"
# drain is then skipped and nettune's reason stays; the job is requeued, held unless
# SchedulerParameters=nohold_on_prolog_fail.
# nettune that cannot run (exit 2), stops early (3) or overruns NETTUNE_PROLOG_TIMEOUT: the
# job goes ahead (exit 0), the node is left as it was, one line on stderr (slurmd's log).
# Settings (environment): NETTUNE (the nettune program, default nettune in PATH),
# NETTUNE_PROLOG_ARGS (extra probe options, e.g. --thresholds FILE), NETTUNE_PROLOG_TIMEOUT
# (seconds, default 8), NETTUNE_REPORT_DIR (reports, default /var/tmp/nettune).
PATH=$PATH:/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin
NETTUNE=${NETTUNE:-nettune}
dir=${NETTUNE_REPORT_DIR:-/var/tmp/nettune}
mkdir -p "$dir" || exit 0
node=${SLURMD_NODENAME:-$(hostname)}
report=$dir/prolog-$node.json
# shellcheck disable=SC2086 # NETTUNE_PROLOG_ARGS is a list of options
timeout -k 1 "${NETTUNE_PROLOG_TIMEOUT:-8}" "$NETTUNE" probe --local --quiet --drain \
    --output "$report" $NETTUNE_PROLOG_ARGS
rc=$?
case $rc in
0) exit 0 ;;
1)
    echo "nettune prolog: $node failed its checks (drained, report $report)" >&2
    exit 1
    ;;
*)
    echo "nettune prolog: nettune probe exit $rc on $node (2: could not run, 3: stopped early," \
        "124/137: timed out): job not held, node left as it was" >&2
    exit 0
    ;;
esac
