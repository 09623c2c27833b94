#!/usr/bin/env bash
# up.sh: bring up a real 2-node SLURM cluster (Debian 12 slurm-wlm) on this one machine, for tests.
#
#   bash tests/cluster/up.sh DIR [--accounting]
#   . DIR/env.sh                  # exports SLURM_CONF=DIR/slurm.conf; sbatch, squeue, ... then work
#   bash tests/cluster/up.sh DIR --restart-slurmd NODE   # after NODE's slurmd died (a node failure)
#   bash tests/cluster/down.sh DIR [--purge]
#
# Starts, all as root, every PID recorded in DIR/run/*.pid:
#   munged     private key and socket under DIR (socket in /run/rlctl_slurm_munge_<hash> when a
#              directory above DIR is not o+x, which munged insists on)
#   mariadbd + slurmdbd    only with --accounting (MariaDB bound to 127.0.0.1, datadir DIR/db)
#   slurmctld  on 127.0.0.1
#   slurmd n1, n2   each in its own UTS+mount namespace, where `hostname` is nI and a private
#              /etc/hosts (bind-mounted only there) maps n1 -> 127.0.1.1, n2 -> 127.0.1.2.
#              Slurm itself reaches each slurmd at 127.0.0.1 on its own Port=.
# Each node advertises 32 CPUs, 494000 MB and 4 GPUs (fake character devices, never opened),
# partition boost_usr_prod (default, MaxTime 1-00:00:00).
# --accounting adds account rlctl_test and QOS normal (MaxWall 23:59:00) and boost_qos_dbg
# (MaxWall 00:30:00, 2 nodes per job at most), both DenyOnLimit, for user root.
#
# Idempotent: the same cluster already up and healthy -> exit 0 at once; half up or started with
# other settings -> torn down and started fresh (state wiped: job ids restart at 1).
# --restart-slurmd NODE starts NODE's slurmd again, exactly as the first start did, in a new
# namespace, once it is dead (a test killed it), and waits until SLURM has the node back in
# service; nothing else is touched. Processes left in the dead slurmd's namespace (its job steps)
# are left to the new slurmd, as on a real node, and ended by down.sh at the latest.
# Concurrent runs on the same DIR are serialised with flock on DIR.lock.
#
# Environment (all optional):
#   RLCTL_SLURM_PORT_BASE=6817  slurmctld BASE, slurmdbd BASE+2, MariaDB BASE+3, nI BASE+10+I
#   RLCTL_SLURM_TIMEOUT=60      seconds to wait for the nodes to be idle
#   RLCTL_SLURM_LOCK_WAIT=600   seconds to wait for another up.sh/down.sh on the same DIR
set -euo pipefail

RLC_NAME=up.sh
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$HERE/lib.sh"

usage() { echo "usage: up.sh DIR [--accounting] | up.sh DIR --restart-slurmd NODE" >&2; exit 2; }
ACCT=0; ARG_DIR=""; RESTART=""
while [ $# -gt 0 ]; do
  case "$1" in
    --accounting) ACCT=1 ;;
    --restart-slurmd) [ $# -ge 2 ] || usage; RESTART="$2"; shift ;;
    -h|--help) usage ;;
    -*) rlc_err "unknown option $1"; usage ;;
    *) [ -z "$ARG_DIR" ] || usage; ARG_DIR="$1" ;;
  esac
  shift
done
[ -n "$ARG_DIR" ] || usage
case "$RESTART" in ""|n1|n2) ;; *) rlc_err "no node $RESTART (n1, n2)"; exit 2 ;; esac

T0=$(date +%s%N)
say() { rlc_log "$(( ($(date +%s%N) - T0) / 1000000 )) ms: $*"; }

DIR="$(rlc_dir "$ARG_DIR")" || exit 2
rlc_lock "$DIR"
DIR="$(rlc_dir "$DIR")" || exit 2        # check again under the lock
mkdir -p "$DIR"; touch "$DIR/$RLC_MARKER"

BASE="${RLCTL_SLURM_PORT_BASE:-6817}"
TIMEOUT="${RLCTL_SLURM_TIMEOUT:-60}"
CTLD_PORT=$BASE; DBD_PORT=$((BASE + 2)); DB_PORT=$((BASE + 3))
NODES=(n1 n2)
CONF="$DIR/slurm.conf"; RUN="$DIR/run"; LOG="$DIR/log"
export SLURM_CONF="$CONF"
FINGERPRINT="acct=$ACCT base=$BASE scripts=$(cat "$HERE/up.sh" "$HERE/lib.sh" | sha256sum | cut -c1-16)"
DAEMONS=(munged slurmctld slurmd-n1 slurmd-n2)
[ $ACCT = 0 ] || DAEMONS+=(mariadbd slurmdbd)

nodes_ready() {   # every node answers and is usable (idle, or busy with jobs)
  local out
  out="$(timeout 10 sinfo -h -N -o '%N %t' 2>/dev/null | sort -u)" || return 1
  [ "$(echo "$out" | grep -cE '^n[12] (idle|mix|alloc|comp)$')" = 2 ]
}
node_in_service() {   # node_in_service NODE: NODE answers and is usable
  local state
  state="$(timeout 10 sinfo -h -N -n "$1" -o '%t' 2>/dev/null)" || return 1
  [[ "$state" =~ ^(idle|mix|alloc|comp)$ ]]
}
all_alive() {
  local d
  for d in "${DAEMONS[@]}"; do rlc_alive "$RUN/$d.pid" "${d%%-*}" >/dev/null || return 1; done
}
start() {  # start NAME CMD...: run CMD as a daemon in its own session; record its PID
  local name="$1"; shift
  setsid "$@" </dev/null >>"$LOG/$name.out" 2>&1 9>&- &
  echo $! >"$RUN/$name.pid"
  STARTED[$name]=$!
}
declare -A STARTED=()
start_slurmd() {  # start_slurmd NODE: NODE's slurmd in its own UTS+mount namespace (see the top)
  # shellcheck disable=SC2016   # $1.. are expanded by the inner bash
  start "slurmd-$1" unshare --uts --mount --propagation private \
    bash -c 'mount --bind "$1" /etc/hosts && hostname "$2" && exec slurmd -D -N "$2" -f "$3"' \
    _ "$DIR/hosts" "$1" "$CONF"
}
record_uts() {  # record_uts NODE: the namespace down.sh sweeps for NODE's leftover processes
  readlink "/proc/$(cat "$RUN/slurmd-$1.pid")/ns/uts" >"$RUN/slurmd-$1.uts"
}

# ------------------------------------------------------------------ --restart-slurmd NODE
if [ -n "$RESTART" ]; then
  if [ ! -s "$RUN/fingerprint" ] || ! rlc_alive "$RUN/slurmctld.pid" slurmctld >/dev/null; then
    rlc_err "no cluster is up in $DIR: start it with up.sh first"; exit 1
  fi
  if rlc_alive "$RUN/slurmd-$RESTART.pid" slurmd >/dev/null; then
    rlc_err "slurmd $RESTART is running: nothing to restart"; exit 1
  fi
  # The dead slurmd's namespace may still hold its job steps: kept for down.sh to sweep.
  if [ -f "$RUN/slurmd-$RESTART.uts" ]; then
    mv "$RUN/slurmd-$RESTART.uts" "$RUN/slurmd-$RESTART.dead-$(date +%s%N).uts"
  fi
  start_slurmd "$RESTART"
  for _ in $(seq 1 $((TIMEOUT * 10))); do
    [[ "$(rlc_pstate "${STARTED[slurmd-$RESTART]}")" =~ ^(Z|X|)$ ]] \
      && { rlc_err "slurmd $RESTART died again (log: $LOG/slurmd-$RESTART.log)"; exit 1; }
    # ReturnToService=2: the node is back in service once its slurmd registers.
    node_in_service "$RESTART" && break
    sleep 0.1
  done
  record_uts "$RESTART"
  if ! node_in_service "$RESTART"; then
    rlc_err "node $RESTART is not back in service after ${TIMEOUT} s"
    timeout 5 sinfo -N -l >&2 || true
    exit 1
  fi
  say "slurmd $RESTART restarted (pid ${STARTED[slurmd-$RESTART]}); node $RESTART is in service"
  exit 0
fi

# ------------------------------------------------------------------ 0. already up?
if [ "$(cat "$RUN/fingerprint" 2>/dev/null)" = "$FINGERPRINT" ] && all_alive && nodes_ready; then
  say "cluster in $DIR already up and healthy; nothing to do"
  exit 0
fi
if compgen -G "$RUN/*.pid" >/dev/null; then
  say "cluster in $DIR is partly up or has other settings: tearing it down first"
  rlc_teardown "$DIR"
fi

# ------------------------------------------------------------------ 1. packages (only if missing)
# e2fsprogs and mount (mkfs.ext4, losetup; nsenter is util-linux's): the fault matrix's full
# checkpoint filesystem is an ext4 image on a loop device, mounted in each node's namespace.
PKGS=(slurmctld slurmd slurm-client munge e2fsprogs mount util-linux)
[ $ACCT = 0 ] || PKGS+=(slurmdbd mariadb-server)
missing=()
for p in "${PKGS[@]}"; do
  [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = "install ok installed" ] || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # the postinst scripts would start system munged/mariadb where nothing forbids it: forbid it
  # for the duration of the install, unless the machine already has a policy-rc.d
  policy=""
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    policy=/usr/sbin/policy-rc.d
    printf '#!/bin/sh\n# temporary, from rlctl tests/cluster/up.sh\nexit 101\n' >"$policy"
    chmod 755 "$policy"
  fi
  rc=0
  { apt-get update -q && apt-get install -y -q --no-install-recommends "${missing[@]}"; } >"$DIR/apt.log" 2>&1 || rc=$?
  [ -z "$policy" ] || rm -f "$policy"
  [ $rc = 0 ] || { tail -n 20 "$DIR/apt.log" >&2; rlc_err "apt-get failed (log: $DIR/apt.log)"; exit 1; }
  say "installed $(slurmd -V)"
fi

# ------------------------------------------------------------------ 2. fresh start
# from here on a failure tears down whatever was started
on_exit() {
  local rc=$?
  if [ $rc != 0 ]; then
    rlc_err "start failed (rc=$rc); logs are in $LOG; tearing down"
    rlc_teardown "$DIR" >&2 || true
  fi
  exit $rc
}
trap on_exit EXIT
trap 'exit 130' INT TERM

fail() {   # fail MESSAGE LOGFILE...: show the log tails, then exit 1 (the trap tears down)
  local m="$1" f; shift
  for f in "$@"; do [ -s "$f" ] && { echo "--- tail $f" >&2; tail -n 15 "$f" >&2; }; done
  rlc_err "$m"; exit 1
}
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
wait_port() {  # wait_port PORT PIDFILE: until something listens, or the daemon died / timeout
  local i
  for i in $(seq 1 $((TIMEOUT * 10))); do
    port_busy "$1" && return 0
    rlc_alive "$2" "$(rlc_comm_of "$2")" >/dev/null || return 1
    sleep 0.1
  done
  return 1
}
ports=("$CTLD_PORT" $((BASE + 11)) $((BASE + 12)))
[ $ACCT = 0 ] || ports+=("$DBD_PORT" "$DB_PORT")
for p in "${ports[@]}"; do
  port_busy "$p" && fail "port 127.0.0.1:$p is in use (another cluster? set RLCTL_SLURM_PORT_BASE)"
done

rm -rf "$DIR/state" "$DIR/spool" "$LOG" "$RUN" "$DIR/db" "$DIR/daemon-pids"
# The daemons write (and on exit delete) their own pid files; those live apart from RUN, whose
# files only this script writes, so polling them never races a daemon rewriting one.
mkdir -p "$DIR/state" "$DIR/spool/n1" "$DIR/spool/n2" "$LOG" "$RUN" "$DIR/fakedev" "$DIR/munge" "$DIR/daemon-pids"
chmod 755 "$DIR"

# ------------------------------------------------------------------ 3. munge (private instance)
# munged refuses a socket below a directory that is not executable by all: fall back to /run.
sockdir="$DIR/munge-sock"
d="$DIR"
while [ "$d" != / ]; do
  if [ $(( 0$(stat -c %a "$d") & 1 )) = 0 ]; then
    sockdir="/run/rlctl_slurm_munge_$(echo "$DIR" | md5sum | cut -c1-8)"; break
  fi
  d="$(dirname "$d")"
done
echo "$sockdir" >"$RUN/munge_sockdir"
mkdir -p "$sockdir"; chmod 755 "$sockdir"
MUNGE_SOCK="$sockdir/munge.sock"
rm -f "$MUNGE_SOCK" "$MUNGE_SOCK.lock"
chmod 700 "$DIR/munge"
[ -s "$DIR/munge/munge.key" ] || mungekey -c -k "$DIR/munge/munge.key"
chmod 600 "$DIR/munge/munge.key"
start munged munged --foreground --socket="$MUNGE_SOCK" --key-file="$DIR/munge/munge.key" \
  --pid-file="$DIR/daemon-pids/munged.pid" --log-file="$LOG/munged.log" --seed-file="$DIR/munge/munged.seed"
for i in $(seq 1 50); do [ -S "$MUNGE_SOCK" ] && break; sleep 0.05; done
munge -S "$MUNGE_SOCK" -n 2>/dev/null | unmunge -S "$MUNGE_SOCK" >/dev/null 2>&1 \
  || fail "munged did not come up" "$LOG/munged.out" "$LOG/munged.log"
say "munged up (socket $MUNGE_SOCK)"

# ------------------------------------------------------------------ 4. config files
# cred_expire=30: a requeued job waits that long before it starts again (120 s by default), and a
# job step's credential, checked within a second here, lives that long.
{
  cat <<EOF
# generated by tests/cluster/up.sh
ClusterName=rlctl
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$MUNGE_SOCK,cred_expire=30
SlurmctldPort=$CTLD_PORT
SlurmdPort=$((BASE + 1))
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool/%n
SlurmctldPidFile=$DIR/daemon-pids/slurmctld.pid
SlurmdPidFile=$DIR/daemon-pids/slurmd-%n.pid
SlurmctldLogFile=$LOG/slurmctld.log
SlurmdLogFile=$LOG/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/linux
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=1000
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
SlurmdParameters=config_overrides
MpiDefault=none
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=60
InactiveLimit=0
MinJobAge=600
KillWait=5
Waittime=0
JobCompType=jobcomp/filetxt
JobCompLoc=$LOG/jobcomp.txt
GresTypes=gpu
EOF
  if [ $ACCT = 1 ]; then
    cat <<EOF
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=$DBD_PORT
AccountingStoragePass=$MUNGE_SOCK
AccountingStorageEnforce=associations,limits,qos
AccountingStorageTRES=gres/gpu
PriorityType=priority/multifactor
EOF
  else
    echo "AccountingStorageType=accounting_storage/none"
  fi
  for i in 1 2; do
    echo "NodeName=n$i NodeHostname=n$i NodeAddr=127.0.0.1 Port=$((BASE + 10 + i)) CPUs=32 Boards=1 SocketsPerBoard=2 CoresPerSocket=16 ThreadsPerCore=1 RealMemory=494000 Gres=gpu:4 State=UNKNOWN"
  done
  echo "PartitionName=boost_usr_prod Nodes=n[1-2] Default=YES MaxTime=1-00:00:00 State=UP"
} >"$CONF"

# GPUs without File= are dropped and the node drained; File= must be a char/block device.
for g in 0 1 2 3; do
  f="$DIR/fakedev/nvidia$g"
  [ -c "$f" ] || { rm -f "$f"; mknod "$f" c 195 "$g" 2>/dev/null || ln -s /dev/null "$f"; }
done
echo "NodeName=n[1-2] Name=gpu File=$DIR/fakedev/nvidia[0-3]" >"$DIR/gres.conf"

# node-private /etc/hosts: our names first, so they win over anything in the host's file
{ echo "127.0.1.1 n1"; echo "127.0.1.2 n2"; cat /etc/hosts; } >"$DIR/hosts"
echo "export SLURM_CONF=$CONF" >"$DIR/env.sh"

# ------------------------------------------------------------------ 5. accounting (optional)
if [ $ACCT = 1 ]; then
  mariadb-install-db --no-defaults --user=root --datadir="$DIR/db" --auth-root-authentication-method=socket \
    --skip-test-db >"$LOG/mariadb-install.log" 2>&1 || fail "mariadb-install-db failed" "$LOG/mariadb-install.log"
  start mariadbd mariadbd --no-defaults --user=root --datadir="$DIR/db" --socket="$RUN/mysqld.sock" \
    --pid-file="$DIR/daemon-pids/mariadbd.pid" --bind-address=127.0.0.1 --port="$DB_PORT" --skip-name-resolve \
    --innodb-buffer-pool-size=64M --log-error="$LOG/mariadb.err"
  sql() { mariadb --no-defaults -S "$RUN/mysqld.sock" -u root -e "$1"; }
  for i in $(seq 1 $((TIMEOUT * 10))); do
    sql 'select 1' >/dev/null 2>&1 && break
    rlc_alive "$RUN/mariadbd.pid" mariadbd >/dev/null || break
    sleep 0.1
  done
  sql "CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1' IDENTIFIED BY 'slurm';
       GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1'; FLUSH PRIVILEGES;" \
    || fail "MariaDB did not come up" "$LOG/mariadb.err"
  say "MariaDB up on 127.0.0.1:$DB_PORT"
  cat >"$DIR/slurmdbd.conf" <<EOF
AuthType=auth/munge
AuthInfo=socket=$MUNGE_SOCK
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=$DBD_PORT
SlurmUser=root
DebugLevel=info
LogFile=$LOG/slurmdbd.log
PidFile=$DIR/daemon-pids/slurmdbd.pid
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$DB_PORT
StorageUser=slurm
StoragePass=slurm
StorageLoc=slurm_acct_db
EOF
  chmod 600 "$DIR/slurmdbd.conf"
  # slurmdbd reads slurmdbd.conf from the directory of SLURM_CONF
  start slurmdbd slurmdbd -D
  wait_port "$DBD_PORT" "$RUN/slurmdbd.pid" || fail "slurmdbd did not come up" "$LOG/slurmdbd.out" "$LOG/slurmdbd.log"
  sam() { sacctmgr -i "$@" >>"$LOG/sacctmgr.out" 2>&1 || fail "sacctmgr $* failed" "$LOG/sacctmgr.out"; }
  sam add cluster rlctl
  if [ -n "$(sacctmgr -n show qos normal format=name 2>/dev/null)" ]; then
    sam modify qos normal set MaxWall=23:59:00 Flags=DenyOnLimit
  else
    sam add qos normal MaxWall=23:59:00 Flags=DenyOnLimit
  fi
  sam add qos boost_qos_dbg MaxWall=00:30:00 MaxTRESPerJob=node=2 Flags=DenyOnLimit
  sam add account rlctl_test Cluster=rlctl Description=rlctl-tests Organization=rlctl
  sam add user root Account=rlctl_test Cluster=rlctl
  sam modify user root set DefaultAccount=rlctl_test
  sam modify user root set QOS=normal,boost_qos_dbg DefaultQOS=normal
  say "slurmdbd up on 127.0.0.1:$DBD_PORT (account rlctl_test; QOS normal, boost_qos_dbg)"
fi

# ------------------------------------------------------------------ 6. slurmctld + 2 slurmd
start slurmctld slurmctld -D -f "$CONF"
wait_port "$CTLD_PORT" "$RUN/slurmctld.pid" || fail "slurmctld did not come up" "$LOG/slurmctld.out" "$LOG/slurmctld.log"
say "slurmctld up on 127.0.0.1:$CTLD_PORT"

unshare --uts --mount --propagation private true 2>/dev/null \
  || fail "unshare --uts --mount is not permitted here (needs root / CAP_SYS_ADMIN)"
for n in "${NODES[@]}"; do start_slurmd "$n"; done

resumed=0
for t in $(seq 1 $((TIMEOUT * 10))); do
  nodes_ready && break
  for d in "${!STARTED[@]}"; do
    # (not by name: a slurmd is called unshare or bash for a moment before it execs)
    if [[ "$(rlc_pstate "${STARTED[$d]}")" =~ ^(Z|X|)$ ]]; then
      fail "$d died" "$LOG/$d.out" "$LOG/$d.log"
    fi
  done
  if [ $resumed = 0 ] && [ "$t" -gt 30 ] && timeout 5 sinfo -h -N -o '%t' 2>/dev/null | grep -qE 'drain|down|inval'; then
    scontrol update NodeName='n[1-2]' State=RESUME 2>/dev/null || true
    resumed=1
  fi
  sleep 0.1
done
if ! nodes_ready; then
  { timeout 5 sinfo -N -l; timeout 5 sinfo -R; } >&2 2>/dev/null || true
  fail "nodes not idle after ${TIMEOUT} s" "$LOG/slurmctld.log" "$LOG/slurmd-n1.log" "$LOG/slurmd-n2.log"
fi
all_alive || fail "a daemon is not running" "$LOG/slurmctld.log"
for n in "${NODES[@]}"; do record_uts "$n"; done
echo "$FINGERPRINT" >"$RUN/fingerprint"
say "cluster up in $DIR (n1, n2: 32 CPUs, 494000 MB, 4 GPUs each). Use: . $DIR/env.sh"
