#!/bin/sh
# Slurm HealthCheckProgram for nettune (docs/slurm.md). Slurm ignores its exit code, kills it
# after 60 s and runs it on all nodes at once, so nettune drains and resumes by itself:
# --drain drains a node failing its local checks with its reason; --resume-passing resumes it
# once it passes again, only if its reason starts with nettune: and names a check this run
# makes (a node the check job drained for its links stays drained; an administrator's drain
# is never touched). --local --checks-only makes no traffic at all (none between nodes, no RDMA
# loopback, no GPU copies) and takes no GPU memory: inventory, link states, counters, software,
# so it is safe beside a running job (HealthCheckNodeState=ANY works; IDLE is still gentler).
# Settings (environment): NETTUNE, NETTUNE_HEALTHCHECK_ARGS (extra probe options),
# NETTUNE_HEALTHCHECK_TIMEOUT (seconds, default 50), NETTUNE_REPORT_DIR.
PATH=$PATH:/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin
NETTUNE=${NETTUNE:-nettune}
dir=${NETTUNE_REPORT_DIR:-/var/tmp/nettune}
mkdir -p "$dir" || exit 0
node=${SLURMD_NODENAME:-$(hostname)}
# shellcheck disable=SC2086 # NETTUNE_HEALTHCHECK_ARGS is a list of options
timeout -k 1 "${NETTUNE_HEALTHCHECK_TIMEOUT:-50}" "$NETTUNE" probe --local --checks-only --quiet --drain \
    --resume-passing --output "$dir/healthcheck-$node.json" $NETTUNE_HEALTHCHECK_ARGS
exit 0
