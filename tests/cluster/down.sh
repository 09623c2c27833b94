#!/usr/bin/env bash
# down.sh: stop the test SLURM cluster that up.sh started in DIR.
#
#   bash tests/cluster/down.sh DIR [--purge]
#
# Cancels the remaining jobs, then stops the daemons recorded in DIR/run/*.pid, and only those,
# after checking /proc/PID/comm (SIGTERM, up to 10 s, then SIGKILL); processes still left in a
# node's namespace (job steps) are ended too. --purge then deletes DIR (only a DIR made by up.sh).
# Idempotent: fine to run when nothing is up, or when DIR does not exist.
set -euo pipefail

RLC_NAME=down.sh
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$HERE/lib.sh"

usage() { echo "usage: down.sh DIR [--purge]" >&2; exit 2; }
PURGE=0; ARG_DIR=""
for a in "$@"; do
  case "$a" in
    --purge) PURGE=1 ;;
    -h|--help) usage ;;
    -*) rlc_err "unknown option $a"; usage ;;
    *) [ -z "$ARG_DIR" ] || usage; ARG_DIR="$a" ;;
  esac
done
[ -n "$ARG_DIR" ] || usage

DIR="$(rlc_dir "$ARG_DIR")" || exit 2
if [ ! -d "$DIR" ]; then rlc_log "nothing at $DIR"; exit 0; fi
rlc_lock "$DIR"
rlc_teardown "$DIR"
if [ $PURGE = 1 ]; then
  [ -e "$DIR/$RLC_MARKER" ] || { rlc_err "not purging $DIR: no $RLC_MARKER in it"; exit 2; }
  rm -rf "$DIR" "$DIR.lock"
  rlc_log "purged $DIR"
fi
rlc_log "down"
