#!/usr/bin/env bash
# selftest.sh: check the test harness itself on a real cluster: up.sh, then real jobs through
# sbatch: 2-node srun with per-node loopback addresses, the singularity stand-in running the
# stand-in SkyRL trainer (success, RLCTL_STANDIN_EXIT=3, a failed check), and sacct -c, or with
# --accounting sacct plus QOS/account rejection. Leaves the cluster up (run down.sh after).
#
#   bash tests/cluster/selftest.sh DIR [--accounting]
#
# Ends with a line "selftest: N passed, N failed"; exit status 0 only if nothing failed.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
SKYRL="$(cd "$HERE/../standin/MarinSkyRL/skyrl-train" && pwd -P)"
[ $# -ge 1 ] || { echo "usage: selftest.sh DIR [--accounting]" >&2; exit 2; }
DIR="$1"; ACCT=0
[ "${2:-}" != --accounting ] || ACCT=1

bash "$HERE/up.sh" "$@"
# shellcheck disable=SC1091
. "$DIR/env.sh"

W="$DIR/selftest"
rm -rf "$W"; mkdir -p "$W/venv/bin" "$W/image" "$W/bin" "$W/home"
ln -s "$(python3 -c 'import sys; print(sys.executable)')" "$W/venv/bin/python"
ln -s "$HERE/singularity-shim" "$W/bin/singularity"
cd "$W"

passed=0; failed=0
ok() { echo "ok   - $*"; passed=$((passed + 1)); }
bad() { echo "FAIL - $*"; failed=$((failed + 1)); }
field() { scontrol show job "$1" -o 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p"; }
wait_done() {   # wait_done JOBID: print the final state (polls, at most 60 s)
  local s=""
  for _ in $(seq 1 600); do
    s="$(field "$1" JobState)"
    case "$s" in COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|BOOT_FAIL|DEADLINE) break ;; esac
    sleep 0.1
  done
  echo "$s"
}

# 1. two nodes, each with its own loopback address
J=$(sbatch --parsable --nodes=2 --ntasks-per-node=1 --gres=gpu:4 --wrap 'srun hostname --ip-address')
s=$(wait_done "$J")
if [ "$s" = COMPLETED ] && [ "$(sort "slurm-$J.out" | tr '\n' ' ')" = "127.0.1.1 127.0.1.2 " ]; then
  ok "2-node srun hostname --ip-address: 127.0.1.1, 127.0.1.2 (job $J)"
else
  bad "2-node job $J: $s: $(cat "slurm-$J.out")"
fi

# 2. the singularity stand-in running the stand-in trainer, as rlctl's scripts will
trainer_job() {  # trainer_job NAME EXTRA_OVERRIDE...: submit, print the job id
  local name="$1"; shift
  cat >"$W/$name.sbatch" <<EOF
#!/bin/bash
#SBATCH --job-name=$name
#SBATCH --nodes=1
#SBATCH --gres=gpu:4
#SBATCH --time=00:10:00
#SBATCH --output=$W/$name-%j.out
set -euo pipefail
export PATH="$W/bin:\$PATH" SINGULARITY_SHIM_LOG="$W/shim.log"
singularity exec --nv --no-home --bind "$W,$SKYRL:$SKYRL:ro" --pwd "$SKYRL" \\
  --env PYTHONPATH="$SKYRL" --env HOME="$W/home" --env HF_HUB_OFFLINE=1 \\
  --env TRANSFORMERS_OFFLINE=1 --env WANDB_MODE=offline --env PYTHONDONTWRITEBYTECODE=1 \\
  "$W/image" "$W/venv/bin/python" -m skyrl_train.entrypoints.main_base \\
  trainer.resume_mode=latest trainer.ckpt_path="$W/ckpt-$name" trainer.export_path="$W/export" \\
  trainer.policy.model.path=Qwen/Qwen2.5-0.5B-Instruct "data.train_data=['$W/train.parquet']" \\
  trainer.train_batch_size=16 generator.gpu_memory_utilization=0.8 $*
EOF
  sbatch --parsable "$W/$name.sbatch"
}
J=$(trainer_job ok)
s=$(wait_done "$J")
n=$(grep -c $'^\e\\[36m(skyrl_entrypoint pid=[0-9]*)\e\\[0m WANDB_MIRROR kind=train step=[123] metrics={' "$W/ok-$J.out" || true)
if [ "$s" = COMPLETED ] && [ "$n" = 3 ] && [ "$(cat "$W/ckpt-ok/latest_ckpt_global_step.txt")" = 3 ] \
   && grep -q '^\["exec", "--nv", "--no-home", "--bind", ' "$W/shim.log"; then
  ok "shim + stand-in trainer: COMPLETED, 3 WANDB_MIRROR lines, checkpoint 3 (job $J)"
else
  bad "trainer job $J: $s, $n WANDB_MIRROR lines: $(cat "$W/ok-$J.out")"
fi

export RLCTL_STANDIN_EXIT=3      # sbatch exports the environment to the job
J=$(trainer_job exit3)
unset RLCTL_STANDIN_EXIT
s=$(wait_done "$J")
if [ "$s" = FAILED ] && [ "$(field "$J" ExitCode)" = 3:0 ] && grep -q "standin: exiting with status 3" "$W/exit3-$J.out"; then
  ok "RLCTL_STANDIN_EXIT=3: FAILED, ExitCode 3:0 (job $J)"
else
  bad "exit-3 job $J: $s $(field "$J" ExitCode)"
fi

J=$(trainer_job badarg trainer.epochs=many)
s=$(wait_done "$J")
if [ "$s" = FAILED ] && [ "$(field "$J" ExitCode)" = 97:0 ] && grep -q "standin: CHECK FAILED: trainer.epochs" "$W/badarg-$J.out"; then
  ok "stand-in check failure: FAILED, ExitCode 97:0 (job $J)"
else
  bad "bad-argument job $J: $s $(field "$J" ExitCode)"
fi

if out=$("$W/bin/singularity" exec --bind /nonexistent "$W/image" true 2>&1); then rc=0; else rc=$?; fi
if [ $rc = 255 ] && [[ "$out" == *"does not exist"* ]]; then ok "shim refuses a missing bind source (255)"
else bad "shim: rc=$rc $out"; fi

# 3. accounting
if [ $ACCT = 0 ]; then
  if sacct -c -n -P -j "$J" -o jobid,state,exitcode | grep -qx "$J|FAILED|97:0"; then ok "sacct -c (jobcomp/filetxt)"
  else bad "sacct -c: $(sacct -c -n -P -o jobid,state,exitcode)"; fi
else
  # slurmctld sends job records to slurmdbd asynchronously: right after a job ends, sacct may
  # still miss it or show QOS "Unknown" for a moment, so poll
  for _ in $(seq 1 100); do
    sacct -X -n -P -j "$J" -o jobid,account,qos,state,exitcode | grep -qx "$J|rlctl_test|normal|FAILED|97:0" && break
    sleep 0.1
  done
  if sacct -X -n -P -j "$J" -o jobid,account,qos,state,exitcode | grep -qx "$J|rlctl_test|normal|FAILED|97:0"; then
    ok "sacct: account rlctl_test, QOS normal"
  else bad "sacct: $(sacct -X -n -P -j "$J" -o jobid,account,qos,state,exitcode)"; fi
  if out=$(sbatch --parsable --qos=boost_qos_dbg --time=01:00:00 --account=rlctl_test --wrap true 2>&1); then
    bad "boost_qos_dbg with --time=01:00:00 accepted: $out"
  else ok "boost_qos_dbg with --time=01:00:00 rejected: $out"; fi
  if out=$(sbatch --parsable --qos=normal --time=1-00:00:00 --wrap true 2>&1); then
    bad "normal with --time=1-00:00:00 accepted: $out"
  else ok "normal with --time=1-00:00:00 rejected"; fi
  if out=$(sbatch --parsable --account=no_such_account --wrap true 2>&1); then
    bad "--account=no_such_account accepted: $out"
  else ok "--account=no_such_account rejected: $out"; fi
  J=$(sbatch --parsable --qos=boost_qos_dbg --time=00:30:00 --account=rlctl_test --nodes=2 --wrap true)
  s=$(wait_done "$J")
  if [ "$s" = COMPLETED ]; then ok "boost_qos_dbg with --time=00:30:00 --nodes=2 runs (job $J)"
  else bad "dbg job $J: $s"; fi
fi

echo "selftest: $passed passed, $failed failed"
[ $failed = 0 ]
