"""STAND-IN for upstream SkyRL's training entry module (skyrl.train.entrypoints.main_base), used
only by rlctl's tests. It trains nothing and needs no GPU, Ray or model.

Run as:  python -m skyrl.train.entrypoints.main_base KEY=VALUE ...
         (cwd = the checkout's root, PYTHONPATH containing it)

It parses its command line with the REAL `SkyRLTrainConfig.from_cli_overrides` (the `skyrl` 0.4.0
wheel's config, copied into the checkout by tests/standin/upstream_checkout.py): a `+key`, an
unknown key at any level or a value the config refuses fails here as it fails upstream
("standin: CHECK FAILED: ...", exit 97). Then it runs MarinSkyRL's stand-in loop (standin_loop.py,
the same checks of paths and environment, the same steps, metrics and checkpoints), handing it
the accepted command line under the names that loop reads.
"""

import os
import sys

import standin_loop
from skyrl.train.config import SkyRLTrainConfig

# The keys the stand-in loop reads that upstream spells otherwise.
LOOP_NAMES = {
    "trainer.max_training_steps": "trainer.max_steps",
    "generator.inference_engine.gpu_memory_utilization": "generator.gpu_memory_utilization",
    "generator.inference_engine.enforce_eager": "generator.enforce_eager",
}

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def main(kind="grpo"):
    argv = sys.argv[1:]
    try:
        SkyRLTrainConfig.from_cli_overrides(argv)
    except Exception as err:  # the real parser's refusal, whatever its type
        print(f"standin: CHECK FAILED: from_cli_overrides refused the command line: {err}", file=sys.stderr)
        print(f"standin: exiting with status {standin_loop.CHECK_FAILED_RC}", file=sys.stderr, flush=True)
        return standin_loop.CHECK_FAILED_RC
    loop_argv = []
    for arg in argv:
        key, _, value = arg.partition("=")
        loop_argv.append(f"{LOOP_NAMES.get(key, key)}={value}")
    return standin_loop.main(kind, argv=loop_argv, workdir=ROOT)


if __name__ == "__main__":
    sys.exit(main())
