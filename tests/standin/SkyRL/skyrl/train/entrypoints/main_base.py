"""STAND-IN for upstream SkyRL's training entry module (skyrl.train.entrypoints.main_base), used
only by rlctl's tests. It trains nothing and needs no GPU, Ray or model.

Run as:  python -m skyrl.train.entrypoints.main_base KEY=VALUE ...
         (cwd = the checkout's root, PYTHONPATH containing it)

It parses its command line with the REAL `SkyRLTrainConfig.from_cli_overrides` (the `skyrl` 0.4.0
wheel's config, copied into the checkout by tests/standin/upstream_checkout.py): a `+key`, an
unknown key at any level or a value the config refuses fails here as it fails upstream
("standin: CHECK FAILED: ...", exit 97). Then it runs MarinSkyRL's stand-in loop (standin_loop.py,
the same checks of paths and environment, the same steps, metrics and checkpoints), handing it
the accepted command line under the names that loop reads, and a trainer built as upstream's
entry builds it: the REAL `Tracking` (skyrl/train/utils/tracking.py, the wheel's) made as
upstream's `BasePPOExp.get_tracker` makes it (its backend `trainer.logger`; wandb offline through
the job's environment, WANDB_MODE=offline), given to the stand-in `RayPPOTrainer`
(skyrl/train/trainer.py), which fires the REAL callbacks' `on_log` and then `Tracking.log` for
each payload. So, as upstream, this prints no WANDB_MIRROR line of its own: with
`trainer.logger=console` the log holds the real ConsoleLogger's blocks (`Step N: ` and the pprint
dict, floats at four decimals), and any per-step line comes from a registered callback (rlctl's
progress module, rlctl_progress.py, registers one when run.sh starts the entry through it).

Upstream builds its trainer inside the Ray remote function `skyrl_entrypoint`, and Ray shows each
line that actor writes under its coloured prefix `ESC[36m(skyrl_entrypoint pid=N)ESC[0m `. This
stand-in builds it in-process, without Ray, and routes loguru's output (its default format and
formatting, to stderr as loguru's default handler writes) through a sink that prefixes every line
in the same way, so that a job log reads as a real one.
"""

import os
import sys

import standin_loop
from loguru import logger
from loguru._defaults import LOGURU_FORMAT, LOGURU_LEVEL
from skyrl.train.config import SkyRLTrainConfig
from skyrl.train.trainer import RayPPOTrainer
from skyrl.train.utils.tracking import Tracking

# The keys the stand-in loop reads that upstream spells otherwise.
LOOP_NAMES = {
    "trainer.max_training_steps": "trainer.max_steps",
    "generator.inference_engine.gpu_memory_utilization": "generator.gpu_memory_utilization",
    "generator.inference_engine.enforce_eager": "generator.enforce_eager",
}

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def ray_prefixed(message):
    """A loguru sink: each line of the formatted record under Ray's prefix of the actor."""
    for line in str(message).splitlines(keepends=True):
        sys.stderr.write(standin_loop.PREFIX + line)
    sys.stderr.flush()


def get_tracker(cfg):
    """As upstream's BasePPOExp.get_tracker."""
    return Tracking(
        project_name=cfg.trainer.project_name,
        experiment_name=cfg.trainer.run_name,
        backend=cfg.trainer.logger,
        config=cfg,
        tags=cfg.trainer.tags,
    )


def main(kind="grpo"):
    argv = sys.argv[1:]
    try:
        cfg = SkyRLTrainConfig.from_cli_overrides(argv)
    except Exception as err:  # the real parser's refusal, whatever its type
        print(f"standin: CHECK FAILED: from_cli_overrides refused the command line: {err}", file=sys.stderr)
        print(f"standin: exiting with status {standin_loop.CHECK_FAILED_RC}", file=sys.stderr, flush=True)
        return standin_loop.CHECK_FAILED_RC
    loop_argv = []
    for arg in argv:
        key, _, value = arg.partition("=")
        loop_argv.append(f"{LOOP_NAMES.get(key, key)}={value}")
    logger.remove()
    logger.add(ray_prefixed, format=LOGURU_FORMAT, level=LOGURU_LEVEL, colorize=False)
    return standin_loop.main(
        kind,
        argv=loop_argv,
        workdir=ROOT,
        build_trainer=lambda: RayPPOTrainer(cfg, get_tracker(cfg)),
    )


if __name__ == "__main__":
    sys.exit(main())
