# shellcheck shell=bash
# nettune's multi-host test cluster on one machine: a library for bash scripts (source it).
#
# N "hosts" h1..hN, each a holder process with its own network, UTS (host name) and mount
# namespace (private /tmp, /dev/shm, /etc/hosts), kept alive by the holder and entered with
# nsenter, so daemons (Open MPI's orted, slurmd) can live in them. Each host has one veth
# `eth0` (<subnet>.<i>/24) whose peer is a port of a bridge in the root namespace. The bridge
# has no address: traffic flows only between the cluster's own hosts; no default route, no
# IPv6. Faults go on a host's link: tc tbf (rate), an eBPF cls_bpf classifier (loss; this
# kernel has no sch_netem) and a user-space frame forwarder spliced into the link (delay).
#
# Interface (every function returns non-zero and prints one line on failure):
#   ntc_skip_reason           prints why the cluster cannot run here (empty: it can)
#   ntc_up N [PREFIX]         builds the cluster; hosts are PREFIX1..PREFIXN (default h);
#                             installs `trap ntc_down EXIT` (and INT/TERM/HUP) unless
#                             NTC_NO_TRAP=1; cleans stale state of dead earlier runs first
#   ntc_down                  tears everything down (processes in the hosts by pid, the
#                             holders, forwarders, links, bridge, files); idempotent
#   ntc_hosts                 prints the host names, one per line
#   ntc_ip HOST               prints HOST's address
#   ntc_pid HOST              prints HOST's holder pid (for nsenter -t)
#   ntc_exec HOST CMD...      runs CMD in HOST's namespaces, in the foreground
#   ntc_spawn HOST CMD...     runs CMD in HOST's namespaces in the background; its pid is in
#                             NTC_SPAWNED (an array) and in $NTC_LAST_PID; ntc_down kills it
#   ntc_host_pids HOST [COMM] pids of the processes in HOST's network namespace (named COMM)
#   ntc_fault HOST KIND ARGS  rate BITS_PER_S [egress|both] | loss PERCENT [egress|both] |
#                             delay MICROSECONDS [egress|both] | down | up | clear
#                             egress = what HOST sends, both = also what it receives
#   ntc_rto_min HOST MS|off   TCP's minimum retransmission timeout to and from HOST (routes)
#   ntc_hostfile SLOTS        writes $NTC_DIR/hostfile (every host, SLOTS slots); prints its path
#   ntc_mpirun ARGS...        mpirun on the first host with the cluster's settings (rsh agent
#                             into the hosts, TCP on the cluster subnet, short oob keepalive);
#                             foreground; extra mpirun options go first, then the program
# Variables after ntc_up: NTC_ID (unique per run: the prefix of every object name), NTC_DIR
# (run directory, outside /tmp, visible at the same path inside every host), NTC_SUBNET
# (a.b.c), NTC_BR (bridge), NTC_N, NTC_HOST_LIST (array).
# Settings: NTC_WORK (parent of run directories, default /var/tmp/nettune-cluster; must not be
# under /tmp, which is private in the hosts), NTC_SUBNET (a.b.c to use instead of picking a
# free 10.213.x), NTC_BUILD (where the helper programs are built, default build/cluster),
# NTC_KEEPALIVE (oob keepalive "time intvl probes", default "5 2 3": a lost host aborts
# mpirun after about 11 s instead of about 8 minutes), NTC_TCP_RETRIES2 (the hosts'
# net.ipv4.tcp_retries2, default 4: a connection with data in flight to a host that is cut off
# fails after about 6 s (200 ms x (2^5 - 1)) instead of the kernel's 15 retries, about 15
# minutes; 4 timeouts in a row of one segment under 5% loss are about 1 in 10^5; keepalive does
# not apply to such a connection, and mpirun's abort message to the lost host's orted is one).

NTC_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NTC_ROOT=$(cd "$NTC_LIB_DIR/../.." && pwd)
NTC_WORK=${NTC_WORK:-/var/tmp/nettune-cluster}
NTC_BUILD=${NTC_BUILD:-$NTC_ROOT/build/cluster}
NTC_KEEPALIVE=${NTC_KEEPALIVE:-5 2 3}
NTC_TCP_RETRIES2=${NTC_TCP_RETRIES2:-4}
NTC_SPAWNED=()
NTC_UP=0

ntc_log() { echo "cluster: $*" >&2; }

# Why the cluster cannot run here, or nothing.
ntc_skip_reason()
{
    local t
    [ "$(id -u)" = 0 ] || { echo "not root (namespaces, veth and tc need root)"; return; }
    for t in unshare nsenter ip tc python3 gcc; do
        command -v "$t" >/dev/null 2>&1 || { echo "'$t' not installed"; return; }
    done
    command -v clang >/dev/null 2>&1 || { echo "clang not installed (the loss classifier is eBPF)"; return; }
    if ! unshare --net --uts --mount true 2>/dev/null; then
        echo "cannot create network/UTS/mount namespaces here"
        return
    fi
    if ! unshare --net sh -c 'ip link add ntcprobe0 type veth peer name ntcprobe1 &&
            tc qdisc add dev ntcprobe0 root tbf rate 1mbit burst 32kbit latency 50ms &&
            tc qdisc add dev ntcprobe1 clsact' 2>/dev/null; then
        echo "no veth, tc tbf or clsact in this kernel"
        return
    fi
    if ! unshare --net sh -c 'ip link add ntcprobebr type bridge' 2>/dev/null; then
        echo "no bridge support in this kernel"
        return
    fi
    if [[ $NTC_WORK == /tmp || $NTC_WORK == /tmp/* ]]; then
        echo "NTC_WORK=$NTC_WORK is under /tmp, which is private inside the hosts"
        return
    fi
}

# Start time of a process (field 22 of /proc/PID/stat), to tell a pid from a reused one.
ntc__starttime() { awk '{ sub(/.*\) /, ""); print $20 }' "/proc/$1/stat" 2>/dev/null; }

# True when PID is alive and has the recorded start time.
ntc__same_proc()
{
    local pid=$1 st=$2
    [ -n "$pid" ] && [ -d "/proc/$pid" ] && [ "$(ntc__starttime "$pid")" = "$st" ]
}

# Network namespace inode of a process.
ntc__netns() { stat -L -c %i "/proc/$1/ns/net" 2>/dev/null; }

# Kills (SIGKILL) every process whose network namespace is the one of holder PID, except the
# holder itself, then the holder. Processes stopped with SIGSTOP die too (SIGKILL).
ntc__kill_netns()
{
    local holder=$1 ns p
    ns=$(ntc__netns "$holder") || return 0
    [ -n "$ns" ] || return 0
    for p in /proc/[0-9]*; do
        p=${p#/proc/}
        [ "$p" = "$holder" ] && continue
        # -ef (same device and inode) is a builtin test: a stat process per /proc entry made a
        # teardown of 12 namespaces take about 10 s on a loaded machine.
        [ "/proc/$p/ns/net" -ef "/proc/$holder/ns/net" ] && kill -KILL "$p" 2>/dev/null
    done
    kill -KILL "$holder" 2>/dev/null
    for _ in $(seq 1 50); do [ -d "/proc/$holder" ] || break; sleep 0.05; done
}

# Tears down the run in directory DIR: processes in its hosts, holders, forwarders, links,
# bridge, files. Used by ntc_down and by the stale-state cleanup of a later run.
ntc__teardown_dir()
{
    local dir=$1 f pid st id
    [ -d "$dir" ] || return 0
    id=$(cat "$dir/id" 2>/dev/null)
    for f in "$dir"/spawned/* "$dir"/fwd/*.pid; do
        [ -f "$f" ] || continue
        read -r pid st < "$f"
        ntc__same_proc "$pid" "$st" && kill -KILL "$pid" 2>/dev/null
    done
    for f in "$dir"/hosts/*/holder "$dir"/routers/*/holder; do
        [ -f "$f" ] || continue
        read -r pid st < "$f"
        ntc__same_proc "$pid" "$st" && ntc__kill_netns "$pid"
    done
    if [ -n "$id" ]; then
        # Every link of the run starts with its id (veth peers in the hosts die with them).
        for f in $(ip -o link show 2>/dev/null | awk -F': ' '{ sub(/@.*/, "", $2); print $2 }'); do
            case $f in "$id"*) ip link del "$f" 2>/dev/null ;; esac
        done
    fi
    # Bind mounts live in the hosts' mount namespaces only: gone with the holders.
    rm -rf "$dir"
}

# Removes the runs whose owner process is gone (an interrupted earlier run).
ntc__clean_stale()
{
    local d pid st
    for d in "$NTC_WORK"/nt[0-9a-f][0-9a-f][0-9a-f][0-9a-f]; do
        [ -d "$d" ] || continue
        pid=; st=
        [ -f "$d/owner" ] && read -r pid st < "$d/owner"
        # Alive: the pid exists and started no later than recorded (a reused pid starts later;
        # an owner file of an earlier lib.sh recorded a subshell's later start time).
        if ! { [ -n "$pid" ] && [ -d "/proc/$pid" ] && [ "$(ntc__starttime "$pid")" -le "${st:-0}" ]; }; then
            ntc_log "removing stale state of an interrupted run: $d"
            ntc__teardown_dir "$d"
        fi
    done
}

# Picks a /24 that no address or route of the root namespace and no live run uses: a.b.c.
ntc__pick_subnet()
{
    python3 - "$NTC_WORK" "${NTC_SUBNET:-}" <<'EOF'
import ipaddress, json, os, subprocess, sys
work, want = sys.argv[1], sys.argv[2]
used = []
for cmd in (["ip", "-4", "-j", "addr"], ["ip", "-4", "-j", "route", "show", "table", "all"]):
    for e in json.loads(subprocess.run(cmd, capture_output=True, text=True).stdout or "[]"):
        for a in e.get("addr_info", []):
            used.append(ipaddress.ip_network("%s/%s" % (a["local"], a["prefixlen"]), strict=False))
        dst = e.get("dst")
        if dst and dst != "default" and e.get("type", "unicast") in ("unicast", "local", "blackhole", "unreachable", "prohibit"):
            try:
                used.append(ipaddress.ip_network(dst if "/" in dst else dst + "/32", strict=False))
            except ValueError:
                pass
for d in os.listdir(work) if os.path.isdir(work) else []:
    try:
        used.append(ipaddress.ip_network(open(os.path.join(work, d, "subnet")).read().strip() + ".0/24"))
    except (OSError, ValueError):
        pass
cands = [want] if want else ["10.213.%d" % i for i in range(1, 255)]
for c in cands:
    net = ipaddress.ip_network(c + ".0/24")
    clash = [u for u in used if u.overlaps(net)]
    if not clash:
        print(c)
        sys.exit(0)
    if want:
        print("subnet %s.0/24 is in use here (%s): choose another NTC_SUBNET" % (c, clash[0]), file=sys.stderr)
        sys.exit(1)
print("no free 10.213.x.0/24 subnet: set NTC_SUBNET", file=sys.stderr)
sys.exit(1)
EOF
}

# Builds the helper programs (delay forwarder, TCP ping-pong) into NTC_BUILD when missing or
# older than their sources.
ntc_build_tools()
{
    mkdir -p "$NTC_BUILD" || return 1
    local p
    for p in delay pingpong flow; do
        if [ ! -x "$NTC_BUILD/ntc-$p" ] || [ "$NTC_LIB_DIR/$p.c" -nt "$NTC_BUILD/ntc-$p" ]; then
            gcc -std=gnu11 -O2 -Wall -Wextra -Werror -o "$NTC_BUILD/ntc-$p" "$NTC_LIB_DIR/$p.c" -lm ||
                { ntc_log "cannot build $p.c"; return 1; }
        fi
    done
}

# The eBPF loss classifier for PPM parts per million, built with clang; prints its path.
ntc__loss_obj()
{
    local ppm=$1 o="$NTC_BUILD/loss_$1.o"
    if [ ! -f "$o" ] || [ "$NTC_LIB_DIR/bpf/loss.c" -nt "$o" ]; then
        clang -O2 -g0 -target bpf -I/usr/include/"$(gcc -dumpmachine)" -DNTC_LOSS_PPM="$ppm" \
            -c "$NTC_LIB_DIR/bpf/loss.c" -o "$o" || { ntc_log "cannot build bpf/loss.c"; return 1; }
    fi
    echo "$o"
}

ntc_up()
{
    local n=$1 hp=${2:-h} i h pid st dir reason
    reason=$(ntc_skip_reason)
    [ -z "$reason" ] || { ntc_log "cannot start: $reason"; return 1; }
    [ "$NTC_UP" = 1 ] && { ntc_log "a cluster is already up in this shell ($NTC_ID)"; return 1; }
    ntc_build_tools || return 1
    mkdir -p "$NTC_WORK" || return 1
    # One run at a time picks a subnet and names (two runs or suites at once do not collide).
    exec {NTC_LOCK_FD}>"$NTC_WORK/.lock"
    flock -w 60 "$NTC_LOCK_FD" || { ntc_log "cannot lock $NTC_WORK/.lock"; return 1; }
    ntc__clean_stale
    NTC_SUBNET=$(ntc__pick_subnet) || { flock -u "$NTC_LOCK_FD"; return 1; }
    # Id: "nt" + 4 hex digits, free among the links and the run directories; interface names
    # (at most 15 characters) are the id + a short suffix.
    while :; do
        NTC_ID=nt$(od -An -N2 -tx2 /dev/urandom | tr -d ' ')
        [ -e "$NTC_WORK/$NTC_ID" ] && continue
        ip -o link show | grep -q ": $NTC_ID" && continue
        break
    done
    NTC_DIR=$NTC_WORK/$NTC_ID
    mkdir -p "$NTC_DIR/hosts" "$NTC_DIR/spawned" "$NTC_DIR/fwd"
    echo "$NTC_ID" > "$NTC_DIR/id"
    echo "$NTC_SUBNET" > "$NTC_DIR/subnet"
    # The owner is this shell (pid + start time); BASHPID read here, not inside $(...), where it
    # would be the command substitution's own subshell.
    local owner=$BASHPID
    echo "$owner $(ntc__starttime "$owner")" > "$NTC_DIR/owner"
    flock -u "$NTC_LOCK_FD"
    exec {NTC_LOCK_FD}>&-
    NTC_UP=1
    export NTC_N=$n
    NTC_BR=${NTC_ID}br
    if [ "${NTC_NO_TRAP:-0}" != 1 ]; then
        trap 'ntc_down' EXIT
        trap 'ntc_down; trap - INT; kill -INT $$' INT
        trap 'ntc_down; trap - TERM; kill -TERM $$' TERM
        trap 'ntc_down; trap - HUP; kill -HUP $$' HUP
    fi
    NTC_HOST_LIST=()
    {
        echo "127.0.0.1 localhost"
        for i in $(seq 1 "$n"); do echo "$NTC_SUBNET.$i $hp$i"; done
    } > "$NTC_DIR/etc-hosts"
    ip link add "$NTC_BR" type bridge stp_state 0 forward_delay 0 mcast_snooping 0 || return 1
    sysctl -qw "net.ipv6.conf.$NTC_BR.disable_ipv6=1"
    ip link set "$NTC_BR" up || return 1
    for i in $(seq 1 "$n"); do
        h=$hp$i
        NTC_HOST_LIST+=("$h")
        dir=$NTC_DIR/hosts/$h
        mkdir -p "$dir/tmp"
        chmod 1777 "$dir/tmp"
        echo "$h" > "$dir/hostname"
        echo "$i" > "$dir/index"
        # The holder: new net, UTS and mount namespaces (mounts private to it), host name set,
        # /tmp and /etc/hosts bound to the run's files, a fresh /dev/shm; then it sleeps. A
        # checkout under /tmp would be hidden by the private /tmp: it is bound at its own path
        # inside the host's /tmp first, and the whole tree (--rbind) then replaces /tmp.
        unshare --net --uts --mount --propagation private -- bash -c '
            h=$1 dir=$2 hosts=$3 tag=$4
            for root in "$6" "$7"; do
                [[ $root == /tmp/* ]] || continue
                mkdir -p "$dir/tmp/${root#/tmp/}" && mount --bind "$root" "$dir/tmp/${root#/tmp/}" || exit 1
            done
            hostname "$h" && mount --rbind "$dir/tmp" /tmp && mount --bind "$hosts" /etc/hosts &&
            mount --bind "$dir/hostname" /etc/hostname &&
            mount -t tmpfs -o mode=1777,size=512m ntc-shm /dev/shm &&
            sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 \
                net.ipv4.tcp_retries2="$5" &&
            ip link set lo up && : > "$dir/ready" || exit 1
            exec -a "$tag" sleep infinity' ntc-holder "$h" "$dir" "$NTC_DIR/etc-hosts" "ntc-holder:$NTC_ID:$h" "$NTC_TCP_RETRIES2" \
            "$NTC_ROOT" "$(cd "$NTC_ROOT" && pwd -P)" \
            > "$dir/holder.log" 2>&1 < /dev/null &
        pid=$!
        disown "$pid"
        echo "$pid $(ntc__starttime $pid)" > "$dir/holder"
        for _ in $(seq 1 100); do [ -f "$dir/ready" ] || ! kill -0 "$pid" 2>/dev/null && break; sleep 0.05; done
        if [ ! -f "$dir/ready" ]; then
            ntc_log "host $h did not start: $(cat "$dir/holder.log")"
            return 1
        fi
        # Root side: ${id}h<i> in the bridge; host side: eth0 in the holder's namespace.
        ip link add "${NTC_ID}h$i" type veth peer name eth0 netns "$pid" || return 1
        sysctl -qw "net.ipv6.conf.${NTC_ID}h$i.disable_ipv6=1"
        ip link set "${NTC_ID}h$i" master "$NTC_BR" up || return 1
        nsenter -t "$pid" -n ip addr add "$NTC_SUBNET.$i/24" dev eth0 || return 1
        nsenter -t "$pid" -n ip link set eth0 up || return 1
    done
    # The two-level layout (leaves, spines) and the second rail rewire the links built above.
    if [ "${NTC_LEAVES:-1}" -gt 1 ] || [ "${NTC_RAILS:-1}" -gt 1 ]; then ntc__fabric_up "$hp" || return 1; fi
    # Every host reaches every other before anything runs (bridge ports forward at once).
    for i in $(seq 2 "$n"); do
        for _ in $(seq 1 40); do
            ntc_exec "${NTC_HOST_LIST[0]}" busybox ping -c1 -W1 "$NTC_SUBNET.$i" >/dev/null 2>&1 && break
            sleep 0.1
        done
    done
    ntc_log "up: $n hosts ${NTC_HOST_LIST[*]} on $NTC_SUBNET.0/24, bridge $NTC_BR, run dir $NTC_DIR"
}

ntc_down()
{
    [ "$NTC_UP" = 1 ] || return 0
    NTC_UP=0
    unset NTC_MPI_NET
    ntc__teardown_dir "$NTC_DIR"
    ntc_log "down: $NTC_ID"
}

ntc_hosts() { printf '%s\n' "${NTC_HOST_LIST[@]}"; }

ntc__index() { cat "$NTC_DIR/hosts/$1/index" 2>/dev/null || { ntc_log "no host '$1' in $NTC_ID"; return 1; }; }

ntc_ip() { local i; i=$(ntc__index "$1") && echo "$NTC_SUBNET.$i"; }

ntc_pid()
{
    local pid st
    read -r pid st < "$NTC_DIR/hosts/$1/holder" 2>/dev/null || { ntc_log "no host '$1' in $NTC_ID"; return 1; }
    echo "$pid"
}

ntc_exec()
{
    local pid
    pid=$(ntc_pid "$1") || return 1
    shift
    nsenter -t "$pid" -n -u -m -- "$@"
}

ntc_spawn()
{
    local pid
    pid=$(ntc_pid "$1") || return 1
    shift
    nsenter -t "$pid" -n -u -m -- "$@" &
    NTC_LAST_PID=$!
    NTC_SPAWNED+=("$NTC_LAST_PID")
    echo "$NTC_LAST_PID $(ntc__starttime $NTC_LAST_PID)" > "$NTC_DIR/spawned/$NTC_LAST_PID"
}

ntc_host_pids()
{
    local holder ns p
    holder=$(ntc_pid "$1") || return 1
    ns=$(ntc__netns "$holder")
    for p in /proc/[0-9]*; do
        p=${p#/proc/}
        [ "$p" = "$holder" ] && continue
        [ "$(ntc__netns "$p")" = "$ns" ] || continue
        [ -z "${2:-}" ] || [ "$(cat "/proc/$p/comm" 2>/dev/null)" = "$2" ] || continue
        echo "$p"
    done
}

# Removes every fault from HOST's link.
ntc__fault_clear()
{
    local h=$1 i pid dev f fpid fst
    i=$(ntc__index "$h") || return 1
    pid=$(ntc_pid "$h")
    dev=${NTC_ID}h$i
    nsenter -t "$pid" -n tc qdisc del dev eth0 root 2>/dev/null
    nsenter -t "$pid" -n tc qdisc del dev eth0 clsact 2>/dev/null
    tc qdisc del dev "$dev" root 2>/dev/null
    tc qdisc del dev "$dev" clsact 2>/dev/null
    f=$NTC_DIR/fwd/$h.pid
    if [ -f "$f" ]; then
        read -r fpid fst < "$f"
        if ntc__same_proc "$fpid" "$fst"; then
            kill -TERM "$fpid"
            for _ in $(seq 1 40); do [ -d "/proc/$fpid" ] || break; sleep 0.05; done
            kill -KILL "$fpid" 2>/dev/null
        fi
        rm -f "$f"
        ip link del "${NTC_ID}d${i}a" 2>/dev/null
        ip link set "$dev" master "$NTC_BR"
    fi
    ip link set "$dev" up
    return 0
}

# tc on HOST's egress (inside the host) and, for `both`, on its ingress (the bridge-side peer,
# whose egress is what HOST receives).
ntc__tc_both()
{
    local h=$1 dir=$2 i pid
    shift 2
    i=$(ntc__index "$h") && pid=$(ntc_pid "$h") || return 1
    nsenter -t "$pid" -n tc "${@//@DEV@/eth0}" || return 1
    if [ "$dir" = both ]; then tc "${@//@DEV@/${NTC_ID}h$i}" || return 1; fi
}

# The tc tbf qdisc for BITS bit/s (printed as tc arguments): bucket of 4 ms at the rate (at
# least 64 KiB: a GSO packet must fit), queue of 50 ms at the rate (at least 1 MiB).
ntc__tbf()
{
    local val=$1 burst limit
    burst=$((val / 8 / 250)); [ $burst -lt 65536 ] && burst=65536
    limit=$((val / 8 / 20)); [ $limit -lt 1048576 ] && limit=1048576
    echo "tbf rate ${val}bit burst $burst limit $limit"
}

ntc_fault()
{
    local h=$1 kind=$2 val=${3:-} dir=${4:-egress} i ppm burst limit o fwdpid back
    [ "$NTC_UP" = 1 ] || { ntc_log "no cluster is up"; return 1; }
    [ "$(cat "$NTC_DIR/leaves" 2>/dev/null || echo 1)" = 1 ] ||
        { ntc_log "ntc_fault: under leaves a host link's far end is in its leaf: use ntc_rail_fault HOST 0"; return 1; }
    i=$(ntc__index "$h") || return 1
    case $dir in egress|both) ;; *) ntc_log "direction '$dir': egress or both"; return 1 ;; esac
    case $kind in
    clear) ntc__fault_clear "$h" ;;
    rate)
        [[ $val =~ ^[0-9]+$ ]] && [ "$val" -ge 8000 ] || { ntc_log "rate '$val': bits per second, >= 8000"; return 1; }
        ntc__fault_clear "$h"
        # shellcheck disable=SC2046
        ntc__tc_both "$h" "$dir" qdisc add dev @DEV@ root $(ntc__tbf "$val") ;;
    loss)
        ppm=$(awk -v p="$val" 'BEGIN { if (p !~ /^[0-9.]+$/ || p > 100) exit 1; printf "%d", p * 10000 }') ||
            { ntc_log "loss '$val': a percentage"; return 1; }
        o=$(ntc__loss_obj "$ppm") || return 1
        ntc__fault_clear "$h"
        ntc__tc_both "$h" "$dir" qdisc add dev @DEV@ clsact &&
            ntc__tc_both "$h" "$dir" filter add dev @DEV@ egress bpf direct-action obj "$o" sec tc ;;
    delay)
        # The forwarder sits between the host's bridge-side veth (taken out of the bridge) and
        # a new veth pair ${id}d<i>a/b whose b end is in the bridge.
        [[ $val =~ ^[0-9]+$ ]] || { ntc_log "delay '$val': microseconds"; return 1; }
        ntc__fault_clear "$h"
        back=0; [ "$dir" = both ] && back=$val
        ip link add "${NTC_ID}d${i}a" type veth peer name "${NTC_ID}d${i}b" || return 1
        sysctl -qw "net.ipv6.conf.${NTC_ID}d${i}a.disable_ipv6=1" "net.ipv6.conf.${NTC_ID}d${i}b.disable_ipv6=1"
        ip link set "${NTC_ID}h$i" nomaster
        ip link set "${NTC_ID}d${i}b" master "$NTC_BR" up
        ip link set "${NTC_ID}d${i}a" up
        # Host -> bridge is what the host sends (egress): VAL; bridge -> host: back.
        "$NTC_BUILD/ntc-delay" "${NTC_ID}h$i" "${NTC_ID}d${i}a" "$val" "$back" \
            > "$NTC_DIR/fwd/$h.log" 2>&1 < /dev/null &
        fwdpid=$!
        disown "$fwdpid"
        echo "$fwdpid $(ntc__starttime $fwdpid)" > "$NTC_DIR/fwd/$h.pid"
        for _ in $(seq 1 40); do grep -q '^ready' "$NTC_DIR/fwd/$h.log" 2>/dev/null && break; sleep 0.05; done
        grep -q '^ready' "$NTC_DIR/fwd/$h.log" || { ntc_log "delay forwarder: $(cat "$NTC_DIR/fwd/$h.log")"; return 1; } ;;
    down) ip link set "${NTC_ID}h$i" down ;;
    up) ip link set "${NTC_ID}h$i" up ;;
    *) ntc_log "fault '$kind': rate, loss, delay, down, up or clear"; return 1 ;;
    esac
}

# ntc_rto_min HOST MS: TCP's minimum retransmission timeout for the traffic to and from HOST
# (routes with rto_min in every host), MS milliseconds; "off" restores the kernel's 200 ms.
ntc_rto_min()
{
    local h=$1 ms=$2 ip x pid
    ip=$(ntc_ip "$h") || return 1
    for x in "${NTC_HOST_LIST[@]}"; do
        pid=$(ntc_pid "$x") || return 1
        if [ "$x" = "$h" ]; then
            if [ "$ms" = off ]; then
                nsenter -t "$pid" -n ip route replace "$NTC_SUBNET.0/24" dev eth0 proto kernel scope link src "$ip"
            else
                nsenter -t "$pid" -n ip route replace "$NTC_SUBNET.0/24" dev eth0 proto kernel scope link src "$ip" rto_min "${ms}ms"
            fi
        elif [ "$ms" = off ]; then
            nsenter -t "$pid" -n ip route del "$ip/32" dev eth0 2>/dev/null
        else
            nsenter -t "$pid" -n ip route replace "$ip/32" dev eth0 rto_min "${ms}ms"
        fi || { ntc_log "rto_min on $x failed"; return 1; }
    done
}

ntc_hostfile()
{
    local h
    for h in "${NTC_HOST_LIST[@]}"; do echo "$h slots=${1:-1}"; done > "$NTC_DIR/hostfile"
    echo "$NTC_DIR/hostfile"
}

# The Open MPI settings of the cluster, as mpirun options (printed one per line).
ntc_mpi_options()
{
    local ka_time ka_intvl ka_probes
    read -r ka_time ka_intvl ka_probes <<< "$NTC_KEEPALIVE"
    printf '%s\n' --mca plm_rsh_agent "$NTC_LIB_DIR/ntc-rsh" --mca plm_rsh_no_tree_spawn 1 \
        --mca oob_tcp_if_include "${NTC_MPI_NET:-$NTC_SUBNET.0/24}" \
        --mca btl_tcp_if_include "${NTC_MPI_NET:-$NTC_SUBNET.0/24}" \
        --mca btl tcp,vader,self --mca btl_vader_single_copy_mechanism none \
        --mca oob_tcp_keepalive_time "$ka_time" --mca oob_tcp_keepalive_intvl "$ka_intvl" \
        --mca oob_tcp_keepalive_probes "$ka_probes"
}

ntc_mpirun()
{
    local opts
    mapfile -t opts < <(ntc_mpi_options)
    ntc_exec "${NTC_HOST_LIST[0]}" env NTC_DIR="$NTC_DIR" OMPI_ALLOW_RUN_AS_ROOT=1 \
        OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun "${opts[@]}" "$@"
}

# ---------------------------------------------------------------- two-level layout and rails
# NTC_LEAVES=L (2..4) puts the hosts under L leaf routers joined through NTC_SPINES=S (1..4)
# spine routers; NTC_RAILS=2 gives every host a second interface eth1 on a rail network of its
# own. Both are read by ntc_up (tests/cluster/README.md, "Two-level layout").
#
#   leaf<l>: router namespace with a bridge `leafbr` (proxy ARP, address <subnet>.240+l/32) whose
#            ports are its hosts' links <id>h<i>; one link `s<s>` to each spine (10.254.s.x/30)
#   spine<s>: router namespace; its end `l<l>` of each leaf's link is the one port of a bridge
#            `p<l>` holding the address (a delay forwarder can be spliced in there)
#   hosts keep eth0 <subnet>.<i>/24 (names, ntc_ip, mpirun as before): the leaf answers ARP for
#   the hosts of the other leaves and routes them by /32 routes through the spines
#   rail 1: eth1 <subnet>.128+i/25 on one flat bridge <id>br1 (root namespace); with rails,
#   mpirun's TCP is kept on rail 0 (NTC_MPI_NET = <subnet>.0/25)
#
# Interface (after ntc_up; every function returns non-zero and prints one line on failure):
#   ntc_leaf_of HOST          prints HOST's leaf number (1 without leaves)
#   ntc_leaves_file           writes $NTC_DIR/leaves.json (the leaves' host lists, leaf order)
#                             and prints its path: the truth the fabric judge's groups meet
#   ntc_rail_ip HOST RAIL     HOST's address on RAIL (0 or 1)
#   ntc_spine_pin MODE        routes between leaves: half (default: the hosts of a leaf
#                             alternate between spines by their place in it, so that with 2
#                             spines exactly half of the cross pairs' traffic takes each
#                             spine), S (every cross route through spine S), ecmp (multipath
#                             routes, fib_multipath_hash_policy=1: layer 3+4 hash)
#   ntc_spine_of SRC DST      prints the spine that SRC's traffic to DST takes (the route in
#                             SRC's leaf; "ecmp" for a multipath route, "-" on one leaf)
#   ntc_spine_fault LEAF SPINE rate BITS | delay US | down | up | clear
#                             on the link between leaf LEAF and spine SPINE, both directions
#   ntc_shape BITS|off        tbf at BITS bit/s on what every host sends, every rail, and at
#                             NTC_SHAPE_NET_PCT (default 110) % of it on what it receives (the
#                             network side: NTC_NET_BITS); faults are set relative to that; the hosts'
#                             net.ipv4.tcp_limit_output_bytes at NTC_SHAPE_TSQ_BYTES (65536)
#   ntc_rail_fault HOST RAIL rate BITS [egress|both] | clear
#                             one host link (rail 0 = eth0, 1 = eth1) below the shaped rate;
#                             clear restores the shaping
#   ntc_flows BYTES [rail=R] SRC:DST...
#                             one TCP flow per SRC:DST pair, all at once (ntc-flow, started
#                             together at one clock time); one JSON line per flow: src, dst
#                             host names, rail, bytes, time_us, bw_GBps
#   ntc_shape_to_ceiling [FRACTION]
#                             measures the ceiling (every host sends 64 MiB to the host half
#                             the list away, all at once, unshaped: the sum of the flows' rates)
#                             and shapes every host link so that all hosts sending on all rails
#                             at once stay at 1/FRACTION (default 3) of it; sets NTC_CEILING_GBPS,
#                             NTC_SHAPE_BITS (what a host sends), NTC_NET_BITS

ntc__rpid()
{
    local pid st
    read -r pid st < "$NTC_DIR/routers/$1/holder" 2>/dev/null || { ntc_log "no router '$1' in $NTC_ID"; return 1; }
    echo "$pid"
}

# CMD in router NAME's network namespace.
ntc__rexec()
{
    local pid
    pid=$(ntc__rpid "$1") || return 1
    shift
    nsenter -t "$pid" -n -- "$@"
}

# A router: a holder with its own network namespace, forwarding on, no reverse-path filter
# (the hosts' ARP and traffic arrive on the bridge, their replies leave by a spine).
ntc__router_up()
{
    local name=$1 dir=$NTC_DIR/routers/$1 pid
    mkdir -p "$dir"
    unshare --net -- bash -c '
        sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 \
            net.ipv4.ip_forward=1 net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0 \
            net.ipv4.fib_multipath_hash_policy=1 && ip link set lo up && : > "$1/ready" || exit 1
        exec -a "$2" sleep infinity' ntc-router "$dir" "ntc-holder:$NTC_ID:$name" \
        > "$dir/holder.log" 2>&1 < /dev/null &
    pid=$!
    disown "$pid"
    echo "$pid $(ntc__starttime $pid)" > "$dir/holder"
    for _ in $(seq 1 100); do [ -f "$dir/ready" ] || ! kill -0 "$pid" 2>/dev/null && break; sleep 0.05; done
    [ -f "$dir/ready" ] || { ntc_log "router $name did not start: $(cat "$dir/holder.log")"; return 1; }
}

# Address of leaf L's end (side 1) or spine S's end (side 2) of the link between them.
ntc__spine_addr() { echo "10.254.$2.$((4 * ($1 - 1) + $3))"; }

ntc_leaf_of() { cat "$NTC_DIR/hosts/$1/leaf" 2>/dev/null || echo 1; }

ntc_rail_ip()
{
    local i
    i=$(ntc__index "$1") || return 1
    case $2 in 0) echo "$NTC_SUBNET.$i" ;; 1) echo "$NTC_SUBNET.$((128 + i))" ;;
    *) ntc_log "rail '$2': 0 or 1"; return 1 ;; esac
}

ntc_leaves_file()
{
    # The layout's own record (NTC_LEAVES may have been set for ntc_up's command only).
    python3 - "$NTC_DIR" "$(cat "$NTC_DIR/leaves" 2>/dev/null || echo 1)" "${NTC_HOST_LIST[@]}" > "$NTC_DIR/leaves.json" <<'PY' || return 1
import json, sys
d, n, hosts = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
leaf = lambda h: int(open("%s/hosts/%s/leaf" % (d, h)).read()) if n > 1 else 1
print(json.dumps([[h for h in hosts if leaf(h) == l] for l in range(1, n + 1)]))
PY
    echo "$NTC_DIR/leaves.json"
}

# Builds the leaves, spines and rail 1 over the hosts ntc_up made (their links are in the
# root bridge when this starts).
ntc__fabric_up()
{
    local hp=$1 L=${NTC_LEAVES:-1} S=${NTC_SPINES:-1} R=${NTC_RAILS:-1} map i l s h pid lpid spid
    [[ $L =~ ^[1-4]$ ]] || { ntc_log "NTC_LEAVES=$L: 1 to 4 leaves"; return 1; }
    [[ $S =~ ^[1-4]$ ]] || { ntc_log "NTC_SPINES=$S: 1 to 4 spines"; return 1; }
    [[ $R =~ ^[12]$ ]] || { ntc_log "NTC_RAILS=$R: 1 or 2 rails"; return 1; }
    [ "$NTC_N" -le 120 ] || { ntc_log "the two-level layout takes at most 120 hosts"; return 1; }
    read -r -a map <<< "${NTC_LEAF_MAP:-}"
    [ ${#map[@]} = 0 ] || [ ${#map[@]} = "$NTC_N" ] ||
        { ntc_log "NTC_LEAF_MAP has ${#map[@]} leaves for $NTC_N hosts: one per host"; return 1; }
    echo "$L" > "$NTC_DIR/leaves"
    echo "$S" > "$NTC_DIR/spines"
    if [ "$L" -gt 1 ]; then
        for l in $(seq 1 "$L"); do
            ntc__router_up "leaf$l" || return 1
            ntc__rexec "leaf$l" sh -c "ip link add name leafbr type bridge stp_state 0 forward_delay 0 mcast_snooping 0 &&
                sysctl -qw net.ipv4.conf.leafbr.proxy_arp=1 net.ipv4.neigh.leafbr.proxy_delay=0 &&
                ip addr add $NTC_SUBNET.$((240 + l))/32 dev leafbr && ip link set leafbr up" ||
                { ntc_log "leaf$l: bridge failed"; return 1; }
        done
        for s in $(seq 1 "$S"); do
            ntc__router_up "spine$s" || return 1
            spid=$(ntc__rpid "spine$s")
            for l in $(seq 1 "$L"); do
                lpid=$(ntc__rpid "leaf$l")
                ip link add name "s$s" netns "$lpid" type veth peer name "l$l" netns "$spid" &&
                    ntc__rexec "leaf$l" sh -c "ip addr add $(ntc__spine_addr "$l" "$s" 1)/30 dev s$s && ip link set s$s up" &&
                    ntc__rexec "spine$s" sh -c "ip link add name p$l type bridge stp_state 0 forward_delay 0 &&
                        ip link set l$l master p$l up && ip addr add $(ntc__spine_addr "$l" "$s" 2)/30 dev p$l &&
                        ip link set p$l up" || { ntc_log "link leaf$l-spine$s failed"; return 1; }
            done
        done
        declare -A pos=()
        for i in $(seq 1 "$NTC_N"); do
            h=$hp$i
            l=${map[$((i - 1))]:-$(( (i - 1) * L / NTC_N + 1 ))}
            [[ $l =~ ^[0-9]+$ ]] && [ "$l" -ge 1 ] && [ "$l" -le "$L" ] || { ntc_log "NTC_LEAF_MAP: leaf '$l' of $h is not 1..$L"; return 1; }
            pos[$l]=$(( ${pos[$l]:-0} + 1 ))
            echo "$l" > "$NTC_DIR/hosts/$h/leaf"
            echo "${pos[$l]}" > "$NTC_DIR/hosts/$h/leafpos"
            lpid=$(ntc__rpid "leaf$l")
            ip link set "${NTC_ID}h$i" nomaster && ip link set "${NTC_ID}h$i" netns "$lpid" &&
                ntc__rexec "leaf$l" sh -c "ip link set ${NTC_ID}h$i master leafbr up && ip route add $NTC_SUBNET.$i/32 dev leafbr" ||
                { ntc_log "$h: moving its link into leaf$l failed"; return 1; }
            for s in $(seq 1 "$S"); do
                ntc__rexec "spine$s" ip route add "$NTC_SUBNET.$i/32" via "$(ntc__spine_addr "$l" "$s" 1)" ||
                    { ntc_log "spine$s: route to $h failed"; return 1; }
            done
        done
        ntc_spine_pin "${NTC_SPINE_ROUTES:-half}" || return 1
    fi
    if [ "$R" = 2 ]; then
        NTC_MPI_NET=$NTC_SUBNET.0/25
        ip link add "${NTC_ID}br1" type bridge stp_state 0 forward_delay 0 mcast_snooping 0 || return 1
        sysctl -qw "net.ipv6.conf.${NTC_ID}br1.disable_ipv6=1"
        ip link set "${NTC_ID}br1" up || return 1
        for i in $(seq 1 "$NTC_N"); do
            pid=$(ntc_pid "$hp$i")
            ip link add "${NTC_ID}h${i}r1" type veth peer name eth1 netns "$pid" &&
                sysctl -qw "net.ipv6.conf.${NTC_ID}h${i}r1.disable_ipv6=1" &&
                ip link set "${NTC_ID}h${i}r1" master "${NTC_ID}br1" up &&
                nsenter -t "$pid" -n ip addr add "$NTC_SUBNET.$((128 + i))/25" dev eth1 &&
                nsenter -t "$pid" -n ip link set eth1 up || { ntc_log "$hp$i: rail 1 failed"; return 1; }
        done
    fi
    echo "$R" > "$NTC_DIR/rails"
    ntc_log "fabric: $L leaves, $S spines, $R rails"
}

ntc_spine_pin()
{
    local mode=$1 L S l j lj s nh
    L=$(cat "$NTC_DIR/leaves" 2>/dev/null || echo 1); S=$(cat "$NTC_DIR/spines" 2>/dev/null || echo 1)
    [ "$L" -gt 1 ] || { ntc_log "no leaves in this cluster (NTC_LEAVES)"; return 1; }
    case $mode in half|ecmp) ;; *) [[ $mode =~ ^[0-9]+$ ]] && [ "$mode" -ge 1 ] && [ "$mode" -le "$S" ] ||
        { ntc_log "spine routes '$mode': half, ecmp or a spine 1..$S"; return 1; } ;; esac
    for l in $(seq 1 "$L"); do
        for j in $(seq 1 "$NTC_N"); do
            lj=$(ntc_leaf_of "${NTC_HOST_LIST[$((j - 1))]}")
            [ "$lj" = "$l" ] && continue
            case $mode in
            half) s=$(( ($(cat "$NTC_DIR/hosts/${NTC_HOST_LIST[$((j - 1))]}/leafpos") - 1) % S + 1 ))
                nh=(via "$(ntc__spine_addr "$l" "$s" 2)" dev "s$s") ;;
            ecmp) nh=()
                for s in $(seq 1 "$S"); do nh+=(nexthop via "$(ntc__spine_addr "$l" "$s" 2)" dev "s$s"); done ;;
            *) nh=(via "$(ntc__spine_addr "$l" "$mode" 2)" dev "s$mode") ;;
            esac
            ntc__rexec "leaf$l" ip route replace "$NTC_SUBNET.$j/32" "${nh[@]}" ||
                { ntc_log "leaf$l: route to $NTC_SUBNET.$j failed"; return 1; }
        done
    done
    echo "$mode" > "$NTC_DIR/spine_pin"
}

ntc_spine_of()
{
    local l r
    [ "$(cat "$NTC_DIR/leaves" 2>/dev/null || echo 1)" -gt 1 ] || { echo -; return; }
    l=$(ntc_leaf_of "$1")
    [ "$l" = "$(ntc_leaf_of "$2")" ] && { echo -; return; }
    r=$(ntc__rexec "leaf$l" ip route show "$(ntc_ip "$2")/32") || return 1
    case $r in *nexthop*) echo ecmp ;; *" dev s"*) r=${r##* dev s}; echo "${r%% *}" ;; *) echo "?" ;; esac
}

# Kills the delay forwarder of the link between leaf L and spine S, if any, and splices the
# spine's end back into its bridge.
ntc__spine_fwd_clear()
{
    local l=$1 s=$2 f=$NTC_DIR/fwd/leaf$1-spine$2.pid fpid fst
    [ -f "$f" ] || return 0
    read -r fpid fst < "$f"
    if ntc__same_proc "$fpid" "$fst"; then
        kill -TERM "$fpid"
        for _ in $(seq 1 40); do [ -d "/proc/$fpid" ] || break; sleep 0.05; done
        kill -KILL "$fpid" 2>/dev/null
    fi
    rm -f "$f"
    ntc__rexec "spine$s" ip link del "d$l" 2>/dev/null
    ntc__rexec "spine$s" ip link set "l$l" master "p$l" up
}

ntc_spine_fault()
{
    local l=$1 s=$2 kind=$3 val=${4:-} L S fpid
    L=$(cat "$NTC_DIR/leaves" 2>/dev/null || echo 1); S=$(cat "$NTC_DIR/spines" 2>/dev/null || echo 1)
    [[ $l =~ ^[0-9]+$ ]] && [ "$l" -ge 1 ] && [ "$l" -le "$L" ] && [ "$L" -gt 1 ] ||
        { ntc_log "leaf '$l': 1..$L (NTC_LEAVES)"; return 1; }
    [[ $s =~ ^[0-9]+$ ]] && [ "$s" -ge 1 ] && [ "$s" -le "$S" ] || { ntc_log "spine '$s': 1..$S"; return 1; }
    case $kind in
    clear)
        ntc__spine_fwd_clear "$l" "$s"
        ntc__rexec "leaf$l" tc qdisc del dev "s$s" root 2>/dev/null
        ntc__rexec "spine$s" tc qdisc del dev "l$l" root 2>/dev/null
        return 0 ;;
    rate)
        [[ $val =~ ^[0-9]+$ ]] && [ "$val" -ge 8000 ] || { ntc_log "rate '$val': bits per second, >= 8000"; return 1; }
        # shellcheck disable=SC2046
        ntc__rexec "leaf$l" tc qdisc replace dev "s$s" root $(ntc__tbf "$val") &&
            ntc__rexec "spine$s" tc qdisc replace dev "l$l" root $(ntc__tbf "$val") ;;
    delay)
        # The forwarder sits between the spine's end l<l> (out of its bridge p<l>) and a new
        # veth pair d<l>/e<l> whose e end is in p<l>, as ntc_fault's delay on a host link.
        [[ $val =~ ^[0-9]+$ ]] || { ntc_log "delay '$val': microseconds"; return 1; }
        ntc__spine_fwd_clear "$l" "$s"
        ntc__rexec "spine$s" sh -c "ip link add name d$l type veth peer name e$l && ip link set l$l nomaster &&
            ip link set e$l master p$l up && ip link set d$l up" || return 1
        nsenter -t "$(ntc__rpid "spine$s")" -n -- "$NTC_BUILD/ntc-delay" "l$l" "d$l" "$val" "$val" \
            > "$NTC_DIR/fwd/leaf$l-spine$s.log" 2>&1 < /dev/null &
        fpid=$!
        disown "$fpid"
        echo "$fpid $(ntc__starttime $fpid)" > "$NTC_DIR/fwd/leaf$l-spine$s.pid"
        for _ in $(seq 1 40); do grep -q '^ready' "$NTC_DIR/fwd/leaf$l-spine$s.log" 2>/dev/null && break; sleep 0.05; done
        grep -q '^ready' "$NTC_DIR/fwd/leaf$l-spine$s.log" ||
            { ntc_log "delay forwarder: $(cat "$NTC_DIR/fwd/leaf$l-spine$s.log")"; return 1; } ;;
    down) ntc__rexec "leaf$l" ip link set "s$s" down ;;
    up)
        # Taking the link down removed the leaf's routes through it: put them back.
        ntc__rexec "leaf$l" ip link set "s$s" up && ntc_spine_pin "$(cat "$NTC_DIR/spine_pin")" ;;
    *) ntc_log "spine fault '$kind': rate, delay, down, up or clear"; return 1 ;;
    esac
}

# The far end of HOST's link on RAIL: "PID DEV" (PID - for the root namespace).
ntc__far()
{
    local i
    i=$(ntc__index "$1") || return 1
    if [ "$2" = 1 ]; then echo "- ${NTC_ID}h${i}r1"
    elif [ "$(cat "$NTC_DIR/leaves" 2>/dev/null || echo 1)" -gt 1 ]; then
        echo "$(ntc__rpid "leaf$(ntc_leaf_of "$1")") ${NTC_ID}h$i"
    else echo "- ${NTC_ID}h$i"; fi
}

# tbf at BITS bit/s (or none: "off") on HOST's link on RAIL, what it sends (egress) or both;
# with both, what it receives at FAR bit/s (default BITS).
ntc__link_rate()
{
    local h=$1 r=$2 bits=$3 dir=$4 farbits=${5:-$3} fpid fdev
    read -r fpid fdev <<< "$(ntc__far "$h" "$r")" || return 1
    local near=(nsenter -t "$(ntc_pid "$h")" -n) far=()
    [ "$fpid" = - ] || far=(nsenter -t "$fpid" -n)
    if [ "$bits" = off ]; then
        "${near[@]}" tc qdisc del dev "eth$r" root 2>/dev/null
        "${far[@]}" tc qdisc del dev "$fdev" root 2>/dev/null
        return 0
    fi
    # shellcheck disable=SC2046
    "${near[@]}" tc qdisc replace dev "eth$r" root $(ntc__tbf "$bits") || return 1
    [ "$dir" = both ] || return 0
    # shellcheck disable=SC2046
    "${far[@]}" tc qdisc replace dev "$fdev" root $(ntc__tbf "$farbits")
}

ntc_shape()
{
    local bits=$1 h r R
    [ "$bits" = off ] || { [[ $bits =~ ^[0-9]+$ ]] && [ "$bits" -ge 8000 ]; } ||
        { ntc_log "shape '$bits': bits per second (>= 8000) or off"; return 1; }
    R=$(cat "$NTC_DIR/rails" 2>/dev/null || echo 1)
    # The network side (what a host receives) runs NTC_SHAPE_NET_PCT % of the host's sending
    # rate: a flow alone then queues at its sender only. Two tbf at one rate in series queue
    # at the second, whose drops cost a pair alone 7-13% (the probe's pairwise rule warns at 93%
    # of the median) and once in a while a 200 ms retransmission timeout.
    NTC_NET_BITS=$bits
    [ "$bits" = off ] || NTC_NET_BITS=$((bits * ${NTC_SHAPE_NET_PCT:-110} / 100))
    local tsq=${NTC_SHAPE_TSQ_BYTES:-65536} f pid
    for h in "${NTC_HOST_LIST[@]}"; do
        for r in $(seq 0 $((R - 1))); do
            ntc__link_rate "$h" "$r" "$bits" both "$NTC_NET_BITS" || { ntc_log "shaping $h rail $r failed"; return 1; }
        done
        # TCP small queues: a socket may keep net.ipv4.tcp_limit_output_bytes in the qdisc (4 MiB
        # here), so the tbf queue holds up to its limit of one flow's data, and the ACKs of the
        # flow the host receives wait behind it (70 ms at 14 MB/s): of two flows in opposite
        # directions one got 0.50-0.75 of the rate. At 64 KiB, 0.70-1.03.
        f=$NTC_DIR/hosts/$h/tsq
        pid=$(ntc_pid "$h")
        [ -f "$f" ] || nsenter -t "$pid" -n sysctl -n net.ipv4.tcp_limit_output_bytes > "$f"
        if [ "$bits" = off ]; then nsenter -t "$pid" -n sysctl -qw net.ipv4.tcp_limit_output_bytes="$(cat "$f")"
        else nsenter -t "$pid" -n sysctl -qw net.ipv4.tcp_limit_output_bytes="$tsq"; fi
    done
    echo "$bits $NTC_NET_BITS" > "$NTC_DIR/shape"
}

ntc_rail_fault()
{
    local h=$1 r=$2 kind=$3 val=${4:-} dir=${5:-egress} R shape
    R=$(cat "$NTC_DIR/rails" 2>/dev/null || echo 1)
    [[ $r =~ ^[0-9]$ ]] && [ "$r" -lt "$R" ] || { ntc_log "rail '$r': 0..$((R - 1)) (NTC_RAILS)"; return 1; }
    case $dir in egress|both) ;; *) ntc_log "direction '$dir': egress or both"; return 1 ;; esac
    local net
    read -r shape net < "$NTC_DIR/shape" 2>/dev/null || shape=off
    case $kind in
    clear) ntc__link_rate "$h" "$r" off both && { [ "$shape" = off ] || ntc__link_rate "$h" "$r" "$shape" both "$net"; } ;;
    rate)
        [[ $val =~ ^[0-9]+$ ]] && [ "$val" -ge 8000 ] || { ntc_log "rate '$val': bits per second, >= 8000"; return 1; }
        ntc__link_rate "$h" "$r" "$val" "$dir" ;;
    *) ntc_log "rail fault '$kind': rate or clear"; return 1 ;;
    esac
}

ntc_flows()
{
    local bytes=$1 rail=0 at k=0 p s d pids=() pairs=()
    shift
    [[ ${1:-} == rail=* ]] && { rail=${1#rail=}; shift; }
    [[ $bytes =~ ^[0-9]+$ ]] || { ntc_log "flow size '$bytes': bytes"; return 1; }
    for h in "${NTC_HOST_LIST[@]}"; do
        [ -f "$NTC_DIR/flowsrv/$h" ] && continue
        mkdir -p "$NTC_DIR/flowsrv"
        ntc_spawn "$h" "$NTC_BUILD/ntc-flow" serve 7300 > "$NTC_DIR/flowsrv/$h" 2>&1 < /dev/null
        disown "$NTC_LAST_PID"  # killed by ntc_down: no "Killed" line from this shell then
    done
    rm -rf "$NTC_DIR/flows"; mkdir -p "$NTC_DIR/flows"
    # Every flow starts at one clock time, 1 s from now (starting the senders takes a while).
    at=$(awk -v t="$(date +%s.%N)" 'BEGIN { printf "%.3f", t + 1 }')
    for p in "$@"; do
        s=${p%%:*}; d=${p#*:}
        ntc_exec "$s" "$NTC_BUILD/ntc-flow" send "$(ntc_rail_ip "$d" "$rail")" 7300 "$bytes" "$at" \
            "$(ntc_rail_ip "$s" "$rail")" > "$NTC_DIR/flows/$k.json" 2> "$NTC_DIR/flows/$k.err" &
        pids+=($!); pairs+=("$s $d"); k=$((k + 1))
    done
    local rc=0
    for k in "${!pids[@]}"; do
        wait "${pids[$k]}" || { ntc_log "flow ${pairs[$k]}: $(cat "$NTC_DIR/flows/$k.err")"; rc=1; continue; }
        read -r s d <<< "${pairs[$k]}"
        sed "s/^{/{\"src\": \"$s\", \"dst_host\": \"$d\", \"rail\": $rail, /" "$NTC_DIR/flows/$k.json"
    done
    return $rc
}

ntc_shape_to_ceiling()
{
    local frac=${1:-3} i n=$NTC_N pairs=() R
    R=$(cat "$NTC_DIR/rails" 2>/dev/null || echo 1)
    for i in $(seq 0 $((n - 1))); do pairs+=("${NTC_HOST_LIST[$i]}:${NTC_HOST_LIST[$(( (i + n / 2) % n ))]}"); done
    ntc_shape off || return 1
    NTC_CEILING_GBPS=$(ntc_flows $((64 << 20)) "${pairs[@]}" |
        python3 -c 'import json,sys; print("%.4f" % sum(json.loads(l)["bw_GBps"] for l in sys.stdin))') || return 1
    NTC_SHAPE_BITS=$(awk -v c="$NTC_CEILING_GBPS" -v f="$frac" -v n="$n" -v r="$R" \
        'BEGIN { printf "%.0f", c * 8e9 / (f * n * r) }')
    ntc_shape "$NTC_SHAPE_BITS" || return 1
    ntc_log "ceiling $NTC_CEILING_GBPS GB/s ($n flows at once, unshaped); every host link shaped to $NTC_SHAPE_BITS bit/s (1/$frac of it over $n hosts x $R rails)"
}
