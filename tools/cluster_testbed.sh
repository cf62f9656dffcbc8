#!/usr/bin/env bash
# A single-node Slurm cluster and a PostgreSQL server on this machine, for
# the tests marked `cluster` (sweeps as Slurm jobs, slurm_train.sh with
# several tasks, a sweep's database storage). As root on Debian:
#   bash tools/cluster_testbed.sh start    # install what is missing, start
#   bash tools/cluster_testbed.sh status   # what runs
#   bash tools/cluster_testbed.sh stop     # end what `start` started
# `start` prints the variables the tests read, e.g.
#   eval "$(bash tools/cluster_testbed.sh start | grep '^export ')"
# It installs slurm-wlm, munge and postgresql where missing, writes a Slurm
# configuration for this host (its CPUs and memory, partition `mmlml`,
# Gres=gpu:2 on placeholder device files so that GPU-shaped scripts
# schedule; no GPU is used), and keeps its state, logs and pid files in
# $MMLML_TESTBED_DIR (default /var/tmp/mmlml-testbed). A second `start`
# reuses what runs; `stop` ends only the processes it started.
set -euo pipefail
ACTION=${1:-status}
STATE=$(realpath -m "${MMLML_TESTBED_DIR:-/var/tmp/mmlml-testbed}")
PARTITION=mmlml
PG_PORT=${MMLML_TESTBED_PG_PORT:-54329}
DATABASE=mmlml_test
MARK='# written by tools/cluster_testbed.sh'

# From /: PostgreSQL's commands run as the postgres user, who may not enter
# the caller's directory (each would print "could not change directory").
cd /

say() { echo "[cluster_testbed] $*" >&2; }
fail() { say "$*"; exit 2; }
alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

require_platform() {
    [ "$(id -u)" = 0 ] || fail "needs root (it installs Debian packages" \
        "and starts slurmctld, slurmd, munged and PostgreSQL); run it as root"
    [ -f /etc/debian_version ] && command -v apt-get >/dev/null \
        || fail "needs Debian (apt-get); on another system start Slurm and" \
            "PostgreSQL yourself and export MMLML_SLURM_PARTITION and" \
            "MMLML_TEST_DATABASE_URL"
}

install_missing() {
    local missing=()
    for package in slurm-wlm munge postgresql; do
        dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        say "installing ${missing[*]}"
        apt-get update -qq >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
            "${missing[@]}" >&2
    fi
}

pg_bin() {
    ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1
}

write_slurm_config() {
    local conf=/etc/slurm/slurm.conf host node
    host=$(hostname -s)
    if [ -f "$conf" ] && ! grep -qF "$MARK" "$conf"; then
        fail "$conf exists and is not this test bed's: leaving it alone"
    fi
    mkdir -p /etc/slurm "$STATE/slurmctld" "$STATE/slurmd"
    for i in 0 1; do  # placeholder GPUs: the null device's numbers
        [ -e "$STATE/gpu$i" ] || mknod "$STATE/gpu$i" c 1 3
    done
    # The node as slurmd sees it, with 8 CPUs so that several one-CPU jobs
    # run at once on a small machine (config_overrides lets it claim more).
    node=$(slurmd -C | head -n 1 | sed -E 's/CPUs=[0-9]+/CPUs=8/;
        s/ (Boards|SocketsPerBoard|CoresPerSocket|ThreadsPerCore)=[0-9]+//g')
    cat > "$conf" <<EOF
$MARK
ClusterName=mmlml
SlurmctldHost=$host
SlurmUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
GresTypes=gpu
MpiDefault=none
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
StateSaveLocation=$STATE/slurmctld
SlurmdSpoolDir=$STATE/slurmd
SlurmctldPidFile=$STATE/slurmctld.pid
SlurmdPidFile=$STATE/slurmd.pid
SlurmctldLogFile=$STATE/slurmctld.log
SlurmdLogFile=$STATE/slurmd.log
$node Gres=gpu:2 State=UNKNOWN
PartitionName=$PARTITION Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF
    cat > /etc/slurm/gres.conf <<EOF
$MARK
NodeName=$host Name=gpu File=$STATE/gpu[0-1]
EOF
}

start_munge() {
    if alive /run/munge/munged.pid; then return; fi  # ours or the system's
    mkdir -p /run/munge /var/log/munge /var/lib/munge
    chown munge:munge /run/munge /var/log/munge /var/lib/munge
    [ -f /etc/munge/munge.key ] || {
        dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 2>/dev/null
        chown munge:munge /etc/munge/munge.key
        chmod 400 /etc/munge/munge.key
    }
    runuser -u munge -- /usr/sbin/munged
    for _ in $(seq 20); do  # the daemon's own pid file
        if alive /run/munge/munged.pid; then
            cp /run/munge/munged.pid "$STATE/munged.pid"
            return
        fi
        sleep 0.2
    done
    fail "munged did not start: see /var/log/munge/munged.log"
}

start_slurm() {
    alive "$STATE/slurmctld.pid" || slurmctld
    alive "$STATE/slurmd.pid" || slurmd
    for _ in $(seq 60); do
        if sinfo -h -p "$PARTITION" -o %t 2>/dev/null | grep -qE 'idle|mix|alloc'; then
            return
        fi
        scontrol update nodename="$(hostname -s)" state=resume >/dev/null 2>&1 || true
        sleep 0.5
    done
    fail "Slurm did not come up: see $STATE/slurmctld.log and $STATE/slurmd.log"
}

start_postgres() {
    local bin data="$STATE/pg"
    bin=$(pg_bin)
    if [ ! -f "$data/PG_VERSION" ]; then
        mkdir -p "$data"
        chown postgres:postgres "$data"
        runuser -u postgres -- "$bin/initdb" -D "$data" -A trust -U postgres \
            >/dev/null
    fi
    if ! runuser -u postgres -- "$bin/pg_ctl" -D "$data" status >/dev/null 2>&1; then
        chown postgres:postgres "$STATE"
        runuser -u postgres -- "$bin/pg_ctl" -D "$data" -w -l "$STATE/postgres.log" \
            -o "-p $PG_PORT -k $STATE -c listen_addresses=127.0.0.1" start >/dev/null
    fi
    runuser -u postgres -- "$bin/psql" -h 127.0.0.1 -p "$PG_PORT" -U postgres -tAc \
        "SELECT 1 FROM pg_database WHERE datname='$DATABASE'" | grep -q 1 \
        || runuser -u postgres -- "$bin/createdb" -h 127.0.0.1 -p "$PG_PORT" \
            -U postgres "$DATABASE"
}

print_env() {
    echo "export MMLML_SLURM_PARTITION=$PARTITION"
    echo "export MMLML_TEST_DATABASE_URL=postgresql://postgres@127.0.0.1:$PG_PORT/$DATABASE"
}

stop_pid() {
    local pid
    if alive "$1"; then
        pid=$(cat "$1")
        kill "$pid"
        for _ in $(seq 50); do  # gone before anything starts again
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        say "stopped $2"
    fi
    rm -f "$1"
}

case "$ACTION" in
    start)
        require_platform
        mkdir -p "$STATE"
        install_missing
        write_slurm_config
        start_munge
        start_slurm
        start_postgres
        say "Slurm partition $PARTITION and PostgreSQL on 127.0.0.1:$PG_PORT run"
        print_env
        ;;
    stop)
        require_platform
        stop_pid "$STATE/slurmd.pid" slurmd
        stop_pid "$STATE/slurmctld.pid" slurmctld
        stop_pid "$STATE/munged.pid" munged
        if [ -f "$STATE/pg/postmaster.pid" ]; then
            runuser -u postgres -- "$(pg_bin)/pg_ctl" -D "$STATE/pg" -w stop \
                >/dev/null && say "stopped PostgreSQL"
        fi
        ;;
    status)
        for name in slurmctld slurmd munged; do
            if alive "$STATE/$name.pid"; then state=running; else state=stopped; fi
            echo "$name: $state"
        done
        if [ -f "$STATE/pg/postmaster.pid" ] && \
                kill -0 "$(head -n 1 "$STATE/pg/postmaster.pid")" 2>/dev/null; then
            echo "postgresql: running"
            print_env
        else
            echo "postgresql: stopped"
        fi
        ;;
    env)
        print_env
        ;;
    *)
        fail "usage: bash tools/cluster_testbed.sh start|stop|status|env"
        ;;
esac
