"""Lays out a stand-in upstream SkyRL checkout at DEST for rlctl's tests:

  DEST/skyrl/...                 the stand-in package (tests/standin/SkyRL), with
  DEST/skyrl/train/config/       the REAL config of the installed `skyrl` wheel (0.4.0), copied;
  DEST/skyrl/train/utils/callbacks.py, tracking.py
                                 the wheel's REAL trainer callbacks and tracking (loguru's
                                 ConsoleLogger, W&B, ...), copied: they import nothing of skyrl
                                 but its config; the stand-in trainer (skyrl/train/trainer.py)
                                 and entry module use them as upstream's do;
  DEST/standin_loop.py           MarinSkyRL's stand-in training loop, which the upstream stand-in
                                 entry module runs after the real parser accepted its arguments.

Usage: python3 tests/standin/upstream_checkout.py DEST
"""

import importlib.util
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# The wheel's modules of skyrl/train/utils/ copied as they are (the package's own __init__, which
# imports torch, is the stand-in's).
REAL_UTILS = ("callbacks.py", "tracking.py")


def main(dest):
    shutil.copytree(os.path.join(HERE, "SkyRL"), dest, dirs_exist_ok=True)
    spec = importlib.util.find_spec("skyrl")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("the skyrl wheel is not installed: run tests/setup.sh")
    wheel = next(iter(spec.submodule_search_locations))
    config = os.path.join(dest, "skyrl", "train", "config")
    shutil.rmtree(config, ignore_errors=True)
    shutil.copytree(
        os.path.join(wheel, "train", "config"), config, ignore=shutil.ignore_patterns("__pycache__")
    )
    for module in REAL_UTILS:
        shutil.copy(os.path.join(wheel, "train", "utils", module), os.path.join(dest, "skyrl", "train", "utils", module))
    shutil.copy(
        os.path.join(HERE, "MarinSkyRL", "skyrl-train", "skyrl_train", "entrypoints", "main_base.py"),
        os.path.join(dest, "standin_loop.py"),
    )


if __name__ == "__main__":
    main(sys.argv[1])
