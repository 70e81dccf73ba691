# shellcheck shell=bash
# A real Slurm on nettune's namespace test cluster (tests/cluster/lib.sh): source it after lib.sh.
#
# Layout: the cluster has N+1 hosts. Hosts PREFIX1..PREFIXN run one slurmd each, under Slurm
# node names sn1..snN (NodeHostname=PREFIXi: Slurm's node name is not the host name, so the
# drain's host-to-node mapping is exercised). The last host, PREFIX(N+1), is the controller:
# slurmctld runs there, its host name is SlurmctldHost. Keeping the controller in a namespace
# of its own (instead of giving the root namespace an address on the bridge) keeps all Slurm
# traffic among the cluster's own hosts. One munged runs in the root namespace with its own
# key and socket under the run directory (a path-name Unix socket is reachable from every
# network namespace; AuthInfo=socket= points Slurm at it).
#
# Interface:
#   nts_skip_reason           why Slurm cannot run here (empty: it can)
#   nts_up N                  ntc_up N+1, munged, slurmctld, N slurmds; waits for N idle nodes
#   nts_down                  stops the daemons (by pid, via ntc_down) and the cluster
#   nts_run CMD...            runs a Slurm client (srun, sinfo, scontrol...) on the controller
#                             host with SLURM_CONF set
#   nts_node I                Slurm node name of host I (sn<I>)
#   nts_state NODE            the node's state (sinfo %T, e.g. idle, drained, draining)
#   nts_reason NODE           the node's reason (sinfo %E)
#   nts_wait_state NODE RE SECONDS  waits until the state matches RE
# Variables: NTS_CONF (slurm.conf), NTS_CTL (controller host), NTS_NODES (array of node names),
# NTS_DIR (Slurm's files).

NTS_SLURM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

nts_skip_reason()
{
    local t
    for t in slurmctld slurmd srun sinfo scontrol munged mungekey; do
        command -v "$t" >/dev/null 2>&1 || { echo "'$t' not installed (Debian: slurm-wlm, slurm-client, munge)"; return; }
    done
    [ -f /usr/lib/x86_64-linux-gnu/slurm-wlm/mpi_pmix.so ] || ls /usr/lib/*/slurm-wlm/mpi_pmix.so >/dev/null 2>&1 ||
        { echo "Slurm's mpi_pmix plugin is not installed"; return; }
    ntc_skip_reason
}

nts_node() { echo "sn$1"; }

nts_run()
{
    ntc_exec "$NTS_CTL" env SLURM_CONF="$NTS_CONF" "$@"
}

nts_state() { nts_run sinfo -h -n "$1" -o %T 2>/dev/null | head -1; }
nts_reason() { nts_run sinfo -h -n "$1" -o %E 2>/dev/null | head -1; }

nts_wait_state()
{
    local node=$1 re=$2 t=$3 s
    for _ in $(seq 1 $((t * 2))); do
        s=$(nts_state "$node")
        [[ $s =~ ^($re)$ ]] && return 0
        sleep 0.5
    done
    echo "slurm: node $node is '$s' after $t s, expected '$re'" >&2
    return 1
}

# Writes slurm.conf and cgroup.conf for N nodes.
nts__conf()
{
    local n=$1 i h
    {
        cat <<CONF
# nettune's Slurm test cluster (tests/slurm/slurm.sh); generous timeouts: the test machine is loaded.
ClusterName=nettune
SlurmctldHost=$NTS_CTL
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$NTS_DIR/munge/munge.socket
SlurmctldPort=$NTS_CTLPORT
SlurmdPort=$NTS_DPORT
StateSaveLocation=$NTS_DIR/ctld
SlurmdSpoolDir=$NTS_DIR/d/%n
SlurmctldPidFile=$NTS_DIR/slurmctld.pid
SlurmdPidFile=$NTS_DIR/d/%n.pid
SlurmctldLogFile=$NTS_DIR/slurmctld.log
SlurmdLogFile=$NTS_DIR/d/%n.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
MessageTimeout=30
TCPTimeout=10
SlurmdTimeout=300
SlurmctldTimeout=300
InactiveLimit=0
KillWait=5
MinJobAge=30
PrologEpilogTimeout=60
PrologFlags=Alloc
Prolog=$NTS_DIR/prolog.sh
HealthCheckProgram=$NTS_DIR/healthcheck.sh
HealthCheckInterval=${NTS_HC_INTERVAL:-5}
HealthCheckNodeState=IDLE
SlurmdParameters=config_overrides
${NTS_EXTRA_CONF:-}
CONF
        for i in $(seq 1 "$n"); do
            h=${NTC_HOST_LIST[$((i - 1))]}
            # sn3 is allocated first (lowest weight): the prolog scenario needs it in its job.
            echo "NodeName=$(nts_node "$i") Weight=$([ "$i" = 3 ] && echo 1 || echo 10) NodeHostname=$h NodeAddr=$(ntc_ip "$h") CPUs=2 Sockets=1 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=500 State=UNKNOWN"
        done
        echo "PartitionName=all Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4"
    } > "$NTS_CONF"
    # Prolog and health check: wrappers as docs/slurm.md shows them around the shipped
    # scripts (contrib/slurm), off until the test touches prolog-on / healthcheck-on. The
    # prolog runs on its installed defaults; the health check with thresholds.json.
    local w
    for w in prolog healthcheck; do
        cat > "$NTS_DIR/$w.sh" <<WRAP
#!/bin/sh
[ -e "$NTS_DIR/$w-on" ] || exit 0
export SLURM_CONF="$NTS_CONF" NETTUNE="$NTC_ROOT/build/bin/nettune" NETTUNE_REPORT_DIR="$NTS_DIR/reports"
export NETTUNE_HEALTHCHECK_ARGS="--thresholds $NTS_DIR/thresholds.json" NETTUNE_TEXTFILE_DIR="$NTS_DIR/textfile"
export PATH="$NTS_DIR/gresbin:\$PATH"
echo "\$(date +%T) $w on \${SLURMD_NODENAME:-?}" >> "$NTS_DIR/$w.runs"
exec "$NTC_ROOT/contrib/slurm/nettune-$w.sh" --on-config-error=pass
WRAP
        chmod +x "$NTS_DIR/$w.sh"
    done
    cat > "$NTS_DIR/cgroup.conf" <<CONF
CgroupPlugin=cgroup/v1
CONF
    # sn3 as a GPU node: a GPU GRES needs device files that a slurmd here does not have
    # (slurmctld sets a node with Gres=gpu:2 and none INVAL, "gres/gpu count reported lower",
    # config_overrides or not), so the prolog's scontrol prints sn3's real line with the Gres
    # field of a GPU node, gpu:2(S:0).
    mkdir -p "$NTS_DIR/gresbin"
    cat > "$NTS_DIR/gresbin/scontrol" <<SC
#!/bin/sh
if [ "\$1 \$2 \$3" = "show node $(nts_node 3)" ]; then
    $(command -v scontrol) "\$@" | sed 's/Gres=[^ ]*/Gres=gpu:2(S:0)/'
    exit
fi
exec $(command -v scontrol) "\$@"
SC
    chmod +x "$NTS_DIR/gresbin/scontrol"
}

nts_up()
{
    local n=$1 i h reason
    reason=$(nts_skip_reason)
    [ -z "$reason" ] || { echo "slurm: cannot start: $reason" >&2; return 1; }
    ntc_up $((n + 1)) || return 1
    NTS_CTL=${NTC_HOST_LIST[$n]}
    NTS_DIR=$NTC_DIR/slurm
    NTS_CONF=$NTS_DIR/slurm.conf
    NTS_CTLPORT=6817
    NTS_DPORT=6818
    NTS_NODES=()
    for i in $(seq 1 "$n"); do NTS_NODES+=("$(nts_node "$i")"); done
    mkdir -p "$NTS_DIR/ctld" "$NTS_DIR/d" "$NTS_DIR/munge" "$NTS_DIR/reports"
    for i in $(seq 1 "$n"); do mkdir -p "$NTS_DIR/d/$(nts_node "$i")"; done
    chmod 700 "$NTS_DIR/munge"
    nts__conf "$n"
    # munged: its own key, socket, pid, log and seed files (never the system's).
    mungekey -c -k "$NTS_DIR/munge/munge.key" -b 1024 >/dev/null 2>&1 ||
        dd if=/dev/urandom of="$NTS_DIR/munge/munge.key" bs=1024 count=1 2>/dev/null
    chmod 400 "$NTS_DIR/munge/munge.key"
    munged -f --key-file="$NTS_DIR/munge/munge.key" --socket="$NTS_DIR/munge/munge.socket" \
        --pid-file="$NTS_DIR/munge/munged.pid" --log-file="$NTS_DIR/munge/munged.log" \
        --seed-file="$NTS_DIR/munge/munged.seed" --num-threads=2 ||
        { echo "slurm: munged did not start: $(tail -2 "$NTS_DIR/munge/munged.log")" >&2; return 1; }
    # munged daemonises: record its pid so that ntc_down kills it.
    local mp
    for _ in $(seq 1 50); do [ -s "$NTS_DIR/munge/munged.pid" ] && break; sleep 0.1; done
    mp=$(cat "$NTS_DIR/munge/munged.pid")
    echo "$mp $(ntc__starttime "$mp")" > "$NTC_DIR/spawned/$mp"
    # slurmctld on the controller host, in the foreground (-D) so that ntc_spawn knows its pid.
    ntc_spawn "$NTS_CTL" env SLURM_CONF="$NTS_CONF" slurmctld -D -i -f "$NTS_CONF" \
        > "$NTS_DIR/slurmctld.out" 2>&1
    for i in $(seq 1 "$n"); do
        h=${NTC_HOST_LIST[$((i - 1))]}
        ntc_spawn "$h" env SLURM_CONF="$NTS_CONF" slurmd -D -N "$(nts_node "$i")" -f "$NTS_CONF" \
            > "$NTS_DIR/d/$(nts_node "$i").out" 2>&1
    done
    for i in $(seq 1 "$n"); do
        nts_wait_state "$(nts_node "$i")" idle 90 || {
            echo "slurm: $(nts_node "$i") not idle; slurmctld log:" >&2
            tail -5 "$NTS_DIR/slurmctld.log" >&2
            tail -5 "$NTS_DIR/d/$(nts_node "$i").log" >&2
            return 1
        }
    done
    echo "slurm: up: slurmctld on $NTS_CTL, nodes ${NTS_NODES[*]} idle" >&2
}

nts_down() { ntc_down; }
