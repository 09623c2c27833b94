# shellcheck shell=bash
# lib.sh: helpers shared by up.sh and down.sh (sourced, never run on its own).
#
# Everything here acts only on what up.sh recorded under DIR: daemons are found through
# DIR/run/*.pid and checked against /proc/PID/comm before any signal is sent.

PATH="$PATH:/usr/sbin:/sbin"

RLC_MARKER=.rlctl-test-cluster        # file in DIR that says "this DIR belongs to up.sh"

rlc_log() { echo "[$RLC_NAME] $*"; }
rlc_err() { echo "[$RLC_NAME] ERROR: $*" >&2; }

# rlc_dir PATH: print the canonical DIR, or fail (rc 2) for a directory that must never be used.
rlc_dir() {
  local d
  [ -n "${1:-}" ] || { rlc_err "no DIR given"; return 2; }
  d="$(realpath -m -- "$1")"
  [[ "$d" =~ ^[A-Za-z0-9._/+-]+$ ]] \
    || { rlc_err "refusing DIR=$d (only letters, digits and ._/+- are safe in slurm.conf)"; return 2; }
  case "$d" in
    /*/*) ;;                                   # at least two levels deep
    *) rlc_err "refusing DIR=$d (top-level directory; use e.g. /tmp/rlctl-slurm)"; return 2 ;;
  esac
  case "$d" in
    /bin/*|/boot/*|/dev/*|/etc/*|/lib*/*|/proc/*|/sbin/*|/sys/*|/usr/*|/var/lib|/var/log|/var/run|/var/tmp|/var/spool|/run/user)
      rlc_err "refusing DIR=$d (system directory)"; return 2 ;;
  esac
  if [ -n "${HOME:-}" ] && [ "$d" = "$(realpath -m -- "$HOME")" ]; then
    rlc_err "refusing DIR=$d (home directory)"; return 2
  fi
  # an existing, non-empty directory that up.sh did not create is somebody else's
  if [ -d "$d" ] && [ ! -e "$d/$RLC_MARKER" ] && [ -n "$(ls -A "$d" 2>/dev/null)" ]; then
    rlc_err "refusing DIR=$d (not empty and not made by up.sh; no $RLC_MARKER in it)"; return 2
  fi
  [ ! -e "$d" ] || [ -d "$d" ] || { rlc_err "refusing DIR=$d (not a directory)"; return 2; }
  echo "$d"
}

# rlc_lock DIR: take an exclusive lock on DIR.lock (fd 9) for the rest of the calling script.
# Daemons must be started with 9>&- or they would hold the lock forever.
rlc_lock() {
  mkdir -p "$(dirname "$1")"
  exec 9>"$1.lock"
  flock -w "${RLCTL_SLURM_LOCK_WAIT:-600}" 9 || { rlc_err "could not lock $1.lock"; return 1; }
}

# rlc_alive PIDFILE COMM: print the PID if that process runs and is called COMM (zombies are dead).
rlc_alive() {
  local p
  [ -s "$1" ] || return 1
  p="$(head -c 20 "$1" 2>/dev/null | tr -dc 0-9)" || return 1
  [ -n "$p" ] && rlc_pid_is "$p" "$2" || return 1
  echo "$p"
}

# rlc_pstate PID: the one-letter state from /proc/PID/stat (R, S, Z, ...); empty if gone.
rlc_pstate() {
  local s
  s="$(cat "/proc/$1/stat" 2>/dev/null)" || return 0
  s="${s##*) }"              # comm, in parentheses, may hold spaces
  echo "${s%% *}"
}

# rlc_comm_of PIDFILE: the process name a pid file of ours stands for.
rlc_comm_of() {
  local b; b="$(basename "$1" .pid)"
  echo "${b%%-*}"            # slurmd-n1 -> slurmd, slurmctld -> slurmctld, ...
}

# rlc_stop PIDFILE...: SIGTERM every listed daemon that is alive, wait up to 10 s, then SIGKILL.
# (The daemons delete their own pid files on exit, so the PIDs are read once, up front.)
rlc_stop() {
  local f p i j left names=() pids=() comms=()
  for f in "$@"; do
    if p="$(rlc_alive "$f" "$(rlc_comm_of "$f")")"; then
      names+=("$(basename "$f" .pid)"); pids+=("$p"); comms+=("$(rlc_comm_of "$f")")
      kill -TERM "$p" 2>/dev/null || true
    fi
    rm -f "$f"
  done
  [ ${#pids[@]} -gt 0 ] || return 0
  for _ in $(seq 1 100); do
    left=0
    for j in "${!pids[@]}"; do rlc_pid_is "${pids[$j]}" "${comms[$j]}" && left=1; done
    [ $left = 0 ] && break
    sleep 0.1
  done
  for i in "${!pids[@]}"; do
    if rlc_pid_is "${pids[$i]}" "${comms[$i]}"; then
      rlc_log "${names[$i]} (${pids[$i]}) ignored SIGTERM for 10 s: SIGKILL"
      kill -KILL "${pids[$i]}" 2>/dev/null || true
    else
      rlc_log "stopped ${names[$i]} (${pids[$i]})"
    fi
  done
  RLC_STOPPED+=("${pids[@]}")
  return 0
}
RLC_STOPPED=()

# rlc_wait_reaped: dead daemons are reparented to PID 1, which here reaps them only about a
# second later; wait (up to 3 s) so that no <defunct> entry of ours is left when we return.
rlc_wait_reaped() {
  local p left
  for _ in $(seq 1 30); do
    left=0
    for p in "${RLC_STOPPED[@]}"; do [ -d "/proc/$p" ] && left=1; done
    [ $left = 0 ] && break
    sleep 0.1
  done
  RLC_STOPPED=()
}

# rlc_pid_is PID COMM: PID runs (not a zombie) and is called COMM.
rlc_pid_is() {
  [ "$(cat "/proc/$1/comm" 2>/dev/null)" = "$2" ] && [ "$(rlc_pstate "$1")" != Z ]
}

# rlc_sweep_ns UTSFILE: end processes left in a node's UTS namespace (job steps of a dead slurmd).
# Only namespaces up.sh recorded, and never our own.
rlc_sweep_ns() {
  local ns i pids self
  ns="$(cat "$1" 2>/dev/null)" || return 0
  self="$(readlink /proc/self/ns/uts)"
  if [ -n "$ns" ] && [ "$ns" != "$self" ]; then
    for i in $(seq 1 30); do
      pids="$(rlc_ns_pids "$ns")"
      [ -n "$pids" ] || break
      if [ "$i" = 1 ]; then
        rlc_log "ending leftover process(es) of node $(basename "$1" .uts): $pids"
        # shellcheck disable=SC2086
        kill -TERM $pids 2>/dev/null || true
      fi
      sleep 0.1
    done
    pids="$(rlc_ns_pids "$ns")"
    # shellcheck disable=SC2086
    [ -z "$pids" ] || kill -KILL $pids 2>/dev/null || true
  fi
  rm -f "$1"
}

# rlc_ns_pids NS: PIDs (not zombies) whose UTS namespace is NS, e.g. "uts:[4026532301]".
rlc_ns_pids() {
  local p out=""
  for p in $(stat -c '%N' /proc/[0-9]*/ns/uts 2>/dev/null | grep -F "'$1'" | cut -d/ -f3); do
    [ "$(rlc_pstate "$p")" = Z ] || out="$out $p"
  done
  echo "${out# }"
}

# rlc_teardown DIR: cancel jobs, stop every daemon of DIR, remove run files. Idempotent.
rlc_teardown() {
  local dir="$1" run="$1/run" f all ids i sockdir
  local SLURM_CONF="$dir/slurm.conf"; export SLURM_CONF
  [ -d "$run" ] || return 0
  # 1. cancel jobs while the controller runs, so that no slurmstepd outlives its slurmd
  if [ -f "$SLURM_CONF" ] && rlc_alive "$run/slurmctld.pid" slurmctld >/dev/null; then
    ids="$(timeout 10 squeue -h -o %i 2>/dev/null || true)"
    if [ -n "$ids" ]; then
      # shellcheck disable=SC2086   # one word per job id
      timeout 10 scancel --full $ids 2>/dev/null || true
      all=1
      for f in "$run"/slurmd-*.pid; do rlc_alive "$f" slurmd >/dev/null || all=0; done
      # with a dead slurmd its jobs stay COMPLETING for good: do not wait for them then
      if [ $all = 1 ]; then
        for i in $(seq 1 100); do
          [ -z "$(timeout 5 squeue -h -t R,CG,S -o %i 2>/dev/null)" ] && break
          sleep 0.1
        done
      fi
    fi
  fi
  # 2. daemons, compute side first
  shopt -s nullglob
  rlc_stop "$run"/slurmd-*.pid
  for f in "$run"/*.uts; do rlc_sweep_ns "$f"; done
  shopt -u nullglob
  rlc_stop "$run/slurmctld.pid"
  rlc_stop "$run/slurmdbd.pid"
  rlc_stop "$run/mariadbd.pid"
  sockdir="$(cat "$run/munge_sockdir" 2>/dev/null || true)"
  rlc_stop "$run/munged.pid"
  # 3. leftovers
  rlc_wait_reaped
  case "$sockdir" in /run/rlctl_slurm_munge_*) rm -rf "$sockdir" ;; esac
  rm -f "$run/fingerprint" "$run/munge_sockdir"
}
