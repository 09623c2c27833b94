"""STAND-IN for SkyRL's real training entrypoint (skyrl_train.entrypoints.main_base), used only
by rlctl's tests. It trains nothing and needs no GPU, Ray or model: it checks that it was started
the way rlctl's run script must start SkyRL, then prints the log lines SkyRL prints.

Run as:  python -m skyrl_train.entrypoints.main_base KEY=VALUE ...
         (cwd = the skyrl-train folder, PYTHONPATH containing it)

What it checks (any failure: "standin: CHECK FAILED: <what>" on stderr, exit 97):
  * cwd is the skyrl-train folder (the one holding the skyrl_train package);
  * every argument is a hydra override KEY=VALUE, KEY dotted
    ([A-Za-z_][A-Za-z0-9_]*(.[A-Za-z0-9_]+)+), optionally prefixed + or ++; no KEY twice;
    one level of matching quotes around VALUE is stripped, as hydra does;
  * required: trainer.resume_mode (null, latest or from_path), trainer.ckpt_path and
    trainer.export_path (absolute paths), trainer.policy.model.path (not empty),
    data.train_data (hydra list syntax [...]);
  * if given: trainer.train_batch_size, trainer.policy_mini_batch_size,
    generator.n_samples_per_prompt, trainer.epochs, trainer.max_steps are integers (max_steps >= 0);
    generator.gpu_memory_utilization is a float in (0, 1];
  * environment: HF_HUB_OFFLINE=1, TRANSFORMERS_OFFLINE=1, WANDB_MODE=offline, HOME set to a
    writable directory; RLCTL_STANDIN_EXIT (if set) an integer 0..255;
  * trainer.logger (one backend or a hydra list) names only SkyRL's backends; with wandb among
    them, the real `wandb` package imports.

What it does when the checks pass:
  * prints a few noise lines (stdout and stderr), then for each training step one line exactly as
    SkyRL prints it:
      ESC[36m(skyrl_entrypoint pid=<pid>)ESC[0m WANDB_MIRROR kind=train step=<N> metrics=<JSON>
    stdout flushed per line;
  * steps run 1..trainer.max_steps (default 3); with trainer.resume_mode=latest and an existing
    <ckpt_path>/latest_ckpt_global_step.txt holding K, it resumes like SkyRL: steps K+1..max_steps
    (an empty or non-numeric pointer, or one naming a missing folder, raises as SkyRL's does);
  * every trainer.ckpt_interval steps (default 1) and after the last step saves a checkpoint as
    SkyRL does, imitating upstream's save_checkpoints order: <ckpt_path>/global_step_<N>/ in the
    FSDP layout (policy/ with per-rank files and fsdp_config.json, data.pt, trainer_state.pt;
    see save_checkpoint), then <ckpt_path>/latest_ckpt_global_step.txt (N); each save is logged in
    <ckpt_path>/standin_saves.log ("step=N job=J restart=R") so tests can see a rewrite;
  * evaluation, as MarinSkyRL's trainer does it, when data.val_data is a non-empty list and
    trainer.eval_interval > 0 (SkyRL's default 5): with trainer.eval_before_train (default true)
    one `kind=eval` line before the first step, at the step training starts from (0 when fresh),
    holding only the eval metrics; then every eval_interval steps the eval metrics merged into
    that step's `kind=train` line (with timing/eval, outside timing/step, as in SkyRL);
  * after the pointer, as upstream's cleanup_old_checkpoints: with trainer.max_ckpts_to_keep=K > 0
    (SkyRL's default -1 keeps all) the global_step_* folders beyond the K highest are deleted;
  * RLCTL_STANDIN_PARK=<phase>@<step> with RLCTL_STANDIN_PARK_DIR=<dir> (for the fault matrix):
    once per run (while <dir>/parked does not exist) the trainer stops at a phase and waits until
    <dir>/unpark exists, having written "phase=P step=N pid=PID job=J" into <dir>/parked; the
    phases: startup (before the first step), step (inside step N, before its line), save (inside
    the save of step N: rank 0's model shard written, nothing after it), pointer (the save of step
    N whole, the pointer opened with "w" and so emptied, not yet written), cleanup (the pointer
    written, the old steps not yet deleted). The test injects its fault while the trainer waits;
  * RLCTL_STANDIN_STEP_SECONDS (default 0): seconds to sleep per step (for cancel/monitor tests);
    the printed timings are the formulas' below, whatever the sleep;
  * RLCTL_STANDIN_DIVERGE_AT=<step> (unset: never): from that step on, the policy loss it prints
    is NaN, as a diverged run's is (for the alert tests);
  * with RAY_ADDRESS and RLCTL_STANDIN_ACTOR_ENV=<file>: one Ray actor per node writes a JSON line
    {"host", "HOME", "PATH"} of its own environment into <file>;
  * tracking as SkyRL's skyrl_train/utils/tracking.py does it, when trainer.logger includes wandb
    (default here console, not SkyRL's wandb, so that a stand-in started by hand writes no W&B
    run into the checkout): the REAL wandb.init(project=trainer.project_name,
    name=trainer.run_name, config=<the overrides, nested>) before the first step (wandb itself
    reads WANDB_MODE, WANDB_RUN_ID, WANDB_RESUME and WANDB_DIR from the environment),
    wandb.log(data=metrics, step=step, commit=False) for each step, wandb.finish(exit_code=0) at
    the end; one "INFO W&B run <id> (<mode>) in <dir>" line after init;
  * prints "standin: exiting with status <rc>" and exits with RLCTL_STANDIN_EXIT (default 0).

The printed metrics are deterministic functions of the step and the knobs (SkyRL's defaults where a
knob is not given: train_batch_size 1024, n_samples_per_prompt 5, max_generate_length 1024,
lr 1e-6, enforce_eager true, eval_n_samples_per_prompt 1), so that grid cells differ as the real
ones did (metrics_for computes them):
  samples          = trainer.train_batch_size x generator.n_samples_per_prompt
  generate/avg_num_tokens = 200 + 0.1 x generator.sampling_params.max_generate_length
                     (gsm8k's short chains of thought: a longer limit truncates a few less)
  tokens           = samples x avg_num_tokens
  timing/generate  = 2 + tokens / 8000, x 0.71 with generator.enforce_eager=false (CUDA graphs,
                     the throughput grid's -29%), + 0.1 x (step mod 3), + 20 at step 1 (warm-up)
  timing/policy_train = 1 + tokens / 20000;  timing/sync_weights = 1.5
  timing/step      = generate + policy_train + sync_weights + 0.25
  reward/avg_raw_reward = 0.14 + (ceiling - 0.14) x (1 - exp(-rate x step)), where
                     rate = 0.02 x sqrt(lr / 1e-6) x (n_samples_per_prompt / 8) ** 0.25 and
                     ceiling = 0.9, or 0.6 at lr >= 3e-5 (unstable)
  policy/policy_entropy = 0.9 x 0.97 ** step, or 0.9 x 0.45 ** step where it collapses: at
                     lr >= 1e-5 without trainer.algorithm.use_entropy_loss=true (the accuracy grid)
  policy/raw_grad_norm = 0.5 + 0.1 / step
  eval/all/avg_score = the reward at that step; eval/all/pass_at_<N> = 1 - (1 - avg_score) ** N
                     with N = generator.eval_n_samples_per_prompt; timing/eval = 3
"""

import json
import math
import os
import shutil
import re
import socket
import sys
import tempfile
import time

CHECK_FAILED_RC = 97
KEY_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)+")
PREFIX = f"\x1b[36m(skyrl_entrypoint pid={os.getpid()})\x1b[0m "
INT_KEYS = (
    "trainer.train_batch_size",
    "trainer.policy_mini_batch_size",
    "generator.n_samples_per_prompt",
    "trainer.epochs",
    "trainer.max_steps",
)


def unquote(value):
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def parse_overrides(args, problems):
    overrides = {}
    for arg in args:
        body = arg[2:] if arg.startswith("++") else arg[1:] if arg.startswith("+") else arg
        key, sep, value = body.partition("=")
        if not sep:
            problems.append(f"argument {arg!r} is not a hydra override KEY=VALUE")
            continue
        if not KEY_RE.fullmatch(key):
            problems.append(f"argument {arg!r}: key {key!r} is not a dotted config key")
            continue
        if key in overrides:
            problems.append(f"key {key} given twice")
            continue
        overrides[key] = unquote(value)
    return overrides


def check_overrides(ov, problems):
    mode = ov.get("trainer.resume_mode")
    if mode is None:
        problems.append("trainer.resume_mode missing")
    elif mode not in ("null", "latest", "from_path"):
        problems.append(f"trainer.resume_mode={mode!r} is not null, latest or from_path")
    for key in ("trainer.ckpt_path", "trainer.export_path"):
        if key not in ov:
            problems.append(f"{key} missing")
        elif not os.path.isabs(ov[key]):
            problems.append(f"{key}={ov[key]!r} is not an absolute path")
    if not ov.get("trainer.policy.model.path"):
        problems.append("trainer.policy.model.path missing or empty")
    data = ov.get("data.train_data")
    if data is None:
        problems.append("data.train_data missing")
    elif not (data.startswith("[") and data.endswith("]") and data[1:-1].strip()):
        problems.append(f"data.train_data={data!r} is not a hydra list [...]")
    for key in INT_KEYS:
        if key in ov:
            try:
                number = int(ov[key])
            except ValueError:
                problems.append(f"{key}={ov[key]!r} is not an integer")
                continue
            if key == "trainer.max_steps" and number < 0:
                problems.append(f"{key}={number} is negative")
    key = "generator.gpu_memory_utilization"
    if key in ov:
        try:
            util = float(ov[key])
            if not 0.0 < util <= 1.0:
                problems.append(f"{key}={ov[key]!r} is not in (0, 1]")
        except ValueError:
            problems.append(f"{key}={ov[key]!r} is not a number")


def check_environment(problems, workdir=None):
    for name, want in (("HF_HUB_OFFLINE", "1"), ("TRANSFORMERS_OFFLINE", "1"), ("WANDB_MODE", "offline")):
        have = os.environ.get(name)
        if have != want:
            problems.append(f"{name} must be {want!r}, is {'unset' if have is None else repr(have)}")
    home = os.environ.get("HOME")
    if not home:
        problems.append("HOME is not set")
    else:
        try:
            fd, probe = tempfile.mkstemp(dir=home, prefix=".standin-probe-")
            os.close(fd)
            os.unlink(probe)
        except OSError as err:
            problems.append(f"HOME={home!r} is not a writable directory ({err.strerror})")
    exit_rc = os.environ.get("RLCTL_STANDIN_EXIT", "0")
    if not (exit_rc.isdigit() and int(exit_rc) <= 255):
        problems.append(f"RLCTL_STANDIN_EXIT={exit_rc!r} is not an integer 0..255")
    package_parent = workdir or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if os.path.realpath(os.getcwd()) != os.path.realpath(package_parent):
        problems.append(f"cwd is {os.getcwd()!r}, not the trainer's folder {package_parent!r}")


SUPPORTED_LOGGERS = ("wandb", "mlflow", "swanlab", "tensorboard", "console")


def loggers(overrides):
    """trainer.logger as SkyRL's Tracking takes it: one backend, or a list of them."""
    text = overrides.get("trainer.logger", "console").strip()
    if text.startswith("[") and text.endswith("]"):
        return [unquote(b.strip()) for b in text[1:-1].split(",") if b.strip()]
    return [text]


def check_loggers(overrides, problems):
    for backend in loggers(overrides):
        if backend not in SUPPORTED_LOGGERS:
            problems.append(f"trainer.logger: {backend!r} is not supported (SkyRL's Tracking asserts it)")
    if "wandb" in loggers(overrides):
        try:
            import wandb  # noqa: F401
        except ImportError as err:
            problems.append(
                f"trainer.logger includes wandb, but the wandb package does not import ({err}): "
                "pip install wandb (tests/setup.sh does)"
            )


def nested(overrides):
    """The overrides as one nested dict, standing in for SkyRL's resolved config."""
    config = {}
    for key, value in overrides.items():
        *parents, leaf = key.split(".")
        node = config
        for part in parents:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                break
        else:
            node[leaf] = value
    return config


class Tracking:
    """SkyRL's Tracking, its wandb backend only (the console backend prints nothing here: the
    WANDB_MIRROR lines are SkyRL's own, whatever the logger)."""

    def __init__(self, overrides):
        self.wandb = None
        if "wandb" not in loggers(overrides):
            return
        import wandb

        run = wandb.init(
            project=overrides.get("trainer.project_name", "skyrl"),
            name=overrides.get("trainer.run_name", "test_run"),
            config=nested(overrides),
        )
        out(f"INFO W&B run {run.id} ({run.settings.mode}) in {run.settings.sync_dir}")
        self.wandb = wandb

    def log(self, data, step):
        if self.wandb is not None:
            self.wandb.log(data=data, step=step, commit=False)

    def finish(self):
        if self.wandb is not None:
            self.wandb.finish(exit_code=0)


def check_ray(overrides, problems):
    """With RAY_ADDRESS set (a multi-node job), join the job's real Ray cluster as SkyRL does,
    check it has every node and GPU the job asked for, and run one task on each node."""
    address = os.environ.get("RAY_ADDRESS")
    if not address:
        return
    try:
        import ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
    except ImportError as err:
        problems.append(f"RAY_ADDRESS is set but ray does not import ({err})")
        return
    want_nodes = int(os.environ.get("SLURM_JOB_NUM_NODES", "1"))
    gpus_per_node = int(overrides.get("trainer.placement.policy_num_gpus_per_node", "4"))
    ray.init(address=address, logging_level="WARNING")
    try:
        nodes = [n for n in ray.nodes() if n["Alive"]]
        gpus = ray.cluster_resources().get("GPU", 0)

        @ray.remote(num_cpus=1)
        def where():
            return socket.gethostname()

        hosts = [
            ray.get(
                where.options(
                    scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False)
                ).remote(),
                timeout=120,
            )
            for n in nodes
        ]
        report = os.environ.get("RLCTL_STANDIN_ACTOR_ENV")
        if report:
            # An actor per node reports its own environment: actors (SkyRL's trainer is one)
            # inherit their node's raylet's, not this driver's.
            @ray.remote(num_cpus=1)
            class Probe:
                def env(self):
                    return {key: os.environ.get(key) for key in ("HOME", "PATH")} | {
                        "host": socket.gethostname()
                    }

            probes = [
                Probe.options(
                    scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False)
                ).remote()
                for n in nodes
            ]
            seen = ray.get([p.env.remote() for p in probes], timeout=120)
            with open(report, "w") as f:
                for line in seen:
                    f.write(json.dumps(line) + "\n")
    finally:
        ray.shutdown()
    out(f"INFO Ray cluster at {address}: {len(nodes)} nodes, {gpus:g} GPUs; tasks ran on {' '.join(sorted(hosts))}")
    if len(nodes) != want_nodes or gpus != want_nodes * gpus_per_node:
        problems.append(
            f"Ray at {address} has {len(nodes)} nodes and {gpus:g} GPUs; the job has {want_nodes} nodes "
            f"x {gpus_per_node} GPUs"
        )


def knob(overrides, key, default, kind=float):
    """A knob's value, SkyRL's default where it is not given or does not parse."""
    try:
        return kind(overrides.get(key, default))
    except ValueError:
        return kind(default)


def flag(overrides, key, default):
    return overrides.get(key, default).lower() == "true"


def collapses(overrides):
    """Mimics what the gsm8k accuracy grid saw: at lr 1e-5 and above, without the entropy bonus,
    the policy's entropy collapses."""
    lr = knob(overrides, "trainer.policy.optimizer_config.lr", "1e-6")
    return lr >= 1e-5 and not flag(overrides, "trainer.algorithm.use_entropy_loss", "false")


def reward_at(step, overrides):
    lr = knob(overrides, "trainer.policy.optimizer_config.lr", "1e-6")
    n = knob(overrides, "generator.n_samples_per_prompt", "5", int)
    rate = 0.02 * math.sqrt(max(lr, 0.0) / 1e-6) * (max(n, 1) / 8) ** 0.25
    ceiling = 0.6 if lr >= 3e-5 else 0.9
    return 0.14 + (ceiling - 0.14) * (1 - math.exp(-rate * step))


def metrics_for(step, overrides=None):
    """One train step's metrics: the formulas of the module's docstring."""
    overrides = overrides or {}
    samples = knob(overrides, "trainer.train_batch_size", "1024", int) * knob(
        overrides, "generator.n_samples_per_prompt", "5", int
    )
    avg_tokens = 200 + 0.1 * knob(overrides, "generator.sampling_params.max_generate_length", "1024")
    tokens = samples * avg_tokens
    graphs = 0.71 if not flag(overrides, "generator.enforce_eager", "true") else 1.0
    generate = (2 + tokens / 8000) * graphs + 0.1 * (step % 3) + (20 if step == 1 else 0)
    policy_train = 1 + tokens / 20000
    sync_weights = 1.5
    return {
        "timing/step": round(generate + policy_train + sync_weights + 0.25, 4),
        "timing/generate": round(generate, 4),
        "timing/policy_train": round(policy_train, 4),
        "timing/sync_weights": sync_weights,
        "generate/avg_num_tokens": round(avg_tokens, 4),
        "reward/avg_raw_reward": round(reward_at(step, overrides), 4),
        "policy/policy_entropy": round(0.9 * (0.45 if collapses(overrides) else 0.97) ** step, 6),
        "policy/raw_grad_norm": round(0.5 + 0.1 / max(step, 1), 6),
    }


def eval_metrics_for(step, overrides):
    """The eval metrics after `step` steps, named as SkyRL's evaluate names them."""
    n = max(1, knob(overrides, "generator.eval_n_samples_per_prompt", "1", int))
    score = reward_at(step, overrides)
    return {
        "eval/all/avg_score": round(score, 4),
        f"eval/all/pass_at_{n}": round(1 - (1 - score) ** n, 4),
    }


def evaluates(overrides):
    """SkyRL evaluates when it has an eval dataset and eval_interval > 0."""
    val = overrides.get("data.val_data", "[]").strip()
    has_val = val.startswith("[") and val.endswith("]") and bool(val[1:-1].strip())
    return has_val and knob(overrides, "trainer.eval_interval", "5", int) > 0


def world_size():
    """The GPUs the stand-in pretends to train on: CUDA_VISIBLE_DEVICES's count, else
    SLURM_GPUS_ON_NODE, else 1."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "").strip()
    if visible and visible != "-1":
        return len([d for d in visible.split(",") if d.strip()])
    gpus = os.environ.get("SLURM_GPUS_ON_NODE", "")
    return int(gpus) if gpus.isdigit() and int(gpus) > 0 else 1


def park(phase, step):
    """Waits here, once per run, when RLCTL_STANDIN_PARK names this phase and step (see the
    module's docstring)."""
    want = os.environ.get("RLCTL_STANDIN_PARK", "")
    folder = os.environ.get("RLCTL_STANDIN_PARK_DIR", "")
    at, _, at_step = want.partition("@")
    if not folder or at != phase or (phase != "startup" and at_step != str(step)):
        return
    parked = os.path.join(folder, "parked")
    if os.path.exists(parked):
        return
    job = os.environ.get("SLURM_JOB_ID", "-")
    with open(parked + ".tmp", "w") as f:
        f.write(f"phase={phase} step={step} pid={os.getpid()} job={job}\n")
    os.rename(parked + ".tmp", parked)
    out(f"INFO standin: parked at {phase} of step {step}")
    while not os.path.exists(os.path.join(folder, "unpark")):
        time.sleep(0.2)
    out(f"INFO standin: unparked at {phase} of step {step}")


def cleanup_old_checkpoints(ckpt_path, keep):
    """As upstream's cleanup_old_checkpoints: keeps the `keep` highest global_step_* (-1: all)."""
    if keep <= 0:
        return
    steps = sorted(
        int(name[len("global_step_"):])
        for name in os.listdir(ckpt_path)
        if name.startswith("global_step_") and name[len("global_step_"):].isdigit()
    )
    for old in steps[:-keep]:
        shutil.rmtree(os.path.join(ckpt_path, f"global_step_{old}"), ignore_errors=True)


def save_checkpoint(ckpt_path, step, keep=-1):
    """As SkyRL saves, in the order of upstream's `save_checkpoints` (train/trainer.py): the FSDP
    layout of global_step_<N>/policy/ (every rank's model_, optim_ and
    extra_state_world_size_<W>_rank_<r>.pt, rank 0's huggingface/ and fsdp_config.json naming W),
    then data.pt, then trainer_state.pt, then latest_ckpt_global_step.txt, opened with "w" and
    then written (not a temp file and a rename: a kill in between leaves it empty, as SkyRL's
    does). W is world_size(). Each step is appended to standin_saves.log (step, job id, restart
    count) the moment it is whole (its trainer_state.pt written, before the pointer), so a test
    can tell whether a whole checkpoint was ever written twice, or a step lost."""
    step_dir = os.path.join(ckpt_path, f"global_step_{step}")
    policy = os.path.join(step_dir, "policy")
    os.makedirs(os.path.join(policy, "huggingface"), exist_ok=True)
    world = world_size()
    for rank in range(world):
        for kind in ("model", "optim", "extra_state"):
            with open(os.path.join(policy, f"{kind}_world_size_{world}_rank_{rank}.pt"), "wb") as f:
                f.write(b"stand-in shard")
            if rank == 0 and kind == "model":
                park("save", step)
    with open(os.path.join(policy, "fsdp_config.json"), "w") as f:
        json.dump({"fsdp_strategy": "fsdp2", "world_size": world}, f, indent=4)
    with open(os.path.join(step_dir, "data.pt"), "wb") as f:
        f.write(b"stand-in dataloader state")
    with open(os.path.join(step_dir, "trainer_state.pt"), "wb") as f:
        f.write(json.dumps({"global_step": step}).encode())
    job = os.environ.get("SLURM_JOB_ID", "-")
    restarts = os.environ.get("SLURM_RESTART_COUNT", "0")
    with open(os.path.join(ckpt_path, "standin_saves.log"), "a") as f:
        f.write(f"step={step} job={job} restart={restarts}\n")
    with open(os.path.join(ckpt_path, "latest_ckpt_global_step.txt"), "w") as f:
        f.flush()
        park("pointer", step)
        f.write(str(step))
    out(f"INFO Saved checkpoint {ckpt_path}/global_step_{step}")
    park("cleanup", step)
    cleanup_old_checkpoints(ckpt_path, keep)


def out(line):
    print(PREFIX + line, flush=True)


def main(kind="grpo", argv=None, workdir=None, build_trainer=None):
    """The stand-in's run. The upstream stand-in (tests/standin/SkyRL) calls it with the command
    line its real config parser accepted, under the names used here, its own working folder, and
    `build_trainer`: called once the checks pass, it returns the upstream stand-in's trainer
    (skyrl/train/trainer.py), which then gets each eval's and each step's payload
    (`trainer.log(payload, step)`), each save (`trainer.saved(folder, step)`), the start
    (`trainer.start(step)`) and the end (`trainer.finish()`), in upstream's order; this loop
    then prints no WANDB_MIRROR line and does no tracking of its own (upstream prints none: its
    trainer's tracker and callbacks do what they do). Without it, MarinSkyRL's behaviour."""
    problems = []
    overrides = parse_overrides(sys.argv[1:] if argv is None else argv, problems)
    check_overrides(overrides, problems)
    check_environment(problems, workdir)
    check_loggers(overrides, problems)
    if kind == "opd" and overrides.get("teacher.model_path", "null") == "null":
        problems.append("on-policy distillation needs teacher.model_path")
    if not problems:
        check_ray(overrides, problems)
    if problems:
        for problem in problems:
            print(f"standin: CHECK FAILED: {problem}", file=sys.stderr)
        print(f"standin: exiting with status {CHECK_FAILED_RC}", file=sys.stderr, flush=True)
        return CHECK_FAILED_RC

    ckpt_path = overrides["trainer.ckpt_path"]
    max_steps = int(overrides.get("trainer.max_steps", "3"))
    step_seconds = float(os.environ.get("RLCTL_STANDIN_STEP_SECONDS", "0") or 0)
    ckpt_interval = overrides.get("trainer.ckpt_interval", "1")
    ckpt_interval = max(1, int(ckpt_interval)) if ckpt_interval.lstrip("-").isdigit() else 1
    start = 1
    latest_file = os.path.join(ckpt_path, "latest_ckpt_global_step.txt")
    if overrides["trainer.resume_mode"] == "latest" and os.path.isfile(latest_file):
        # As SkyRL's load_checkpoints: an empty or non-numeric pointer raises, and so does one
        # naming a missing folder.
        with open(latest_file) as f:
            start = int(f.read().strip()) + 1
        if not os.path.exists(os.path.join(ckpt_path, f"global_step_{start - 1}")):
            raise FileNotFoundError(f"Checkpoint path not found: {ckpt_path}/global_step_{start - 1}")
        out(f"INFO Resuming from checkpoint {ckpt_path}/global_step_{start - 1}")

    out(f"INFO Loaded {len(overrides)} config overrides (stand-in trainer, no training happens)")
    out(f"INFO Policy model: {overrides['trainer.policy.model.path']}")
    print("WARNING: stand-in: skipping vLLM initialisation", file=sys.stderr, flush=True)
    out("INFO Generating rollouts: 100%|##########| 4/4 [00:00<00:00]")

    os.makedirs(ckpt_path, exist_ok=True)
    park("startup", start)
    trainer = build_trainer() if build_trainer is not None else None
    tracking = Tracking(overrides) if trainer is None else None
    if trainer is not None:
        trainer.start(start - 1)
    evaluate = evaluates(overrides)
    eval_interval = knob(overrides, "trainer.eval_interval", "5", int)
    if evaluate and flag(overrides, "trainer.eval_before_train", "true") and start <= max_steps:
        if trainer is None:
            out(f"WANDB_MIRROR kind=eval step={start - 1} metrics={json.dumps(eval_metrics_for(start - 1, overrides))}")
        else:
            trainer.log(eval_metrics_for(start - 1, overrides), start - 1)
    for step in range(start, max_steps + 1):
        if step_seconds > 0:
            time.sleep(step_seconds)
        park("step", step)
        metrics = metrics_for(step, overrides)
        if kind == "opd":
            # OPD's signal: the student's KL to the teacher should fall.
            metrics["distill/token_kl_mean"] = round(0.8 * 0.9**step, 6)
            metrics["teacher/chosen_logprob_mean"] = round(-0.6 + 0.01 * step, 6)
        if evaluate and step % eval_interval == 0:
            metrics |= eval_metrics_for(step, overrides) | {"timing/eval": 3.0}
        diverge_at = os.environ.get("RLCTL_STANDIN_DIVERGE_AT", "")
        if diverge_at.isdigit() and step >= int(diverge_at):
            metrics["policy/policy_loss"] = float("nan")
        if trainer is None:
            out(f"WANDB_MIRROR kind=train step={step} metrics={json.dumps(metrics)}")
            tracking.log(metrics, step)
        else:
            trainer.log(metrics, step)
        if step % ckpt_interval == 0 or step == max_steps:
            save_checkpoint(ckpt_path, step, knob(overrides, "trainer.max_ckpts_to_keep", "-1", int))
            if trainer is not None:
                trainer.saved(os.path.join(ckpt_path, f"global_step_{step}"), step)
    if trainer is None:
        tracking.finish()
    else:
        trainer.finish()
    rc = int(os.environ.get("RLCTL_STANDIN_EXIT", "0"))
    print(f"standin: exiting with status {rc}", flush=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
