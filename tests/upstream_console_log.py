"""Writes a job log as an upstream SkyRL (`skyrl` 0.4.0) job writes it with
`trainer.logger=console`, using the wheel's REAL `Tracking` and `ConsoleLogger`
(skyrl/train/utils/tracking.py) and the real loguru, for rlctl's metrics tests.

Usage: python3 tests/upstream_console_log.py LOG STEPS
Prints, as JSON, the payloads it logged (step -> {key: value}), in full precision.

`skyrl.train.utils`'s package __init__ imports torch, which the test machine does not have, so
tracking.py is loaded from the wheel by its path under its own module name; nothing else of the
package is needed. What this file adds, and imitates, is only Ray: each line of the
skyrl_entrypoint actor reaches the job log under Ray's coloured `(skyrl_entrypoint pid=N)`
prefix, interleaved with other actors' lines (Ray's log monitor does that in a real job).
"""

import importlib.util
import json
import math
import os
import sys
import types


def real_tracking():
    spec = importlib.util.find_spec("skyrl")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("the skyrl wheel is not installed: run tests/setup.sh")
    wheel = next(iter(spec.submodule_search_locations))
    package = types.ModuleType("skyrl.train.utils")
    package.__path__ = [os.path.join(wheel, "train", "utils")]
    sys.modules.setdefault("skyrl.train.utils", package)
    path = os.path.join(wheel, "train", "utils", "tracking.py")
    module_spec = importlib.util.spec_from_file_location("skyrl.train.utils.tracking", path)
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[module_spec.name] = module
    module_spec.loader.exec_module(module)
    return module


def payload(step):
    """What upstream's trainer commits at a step: floats, ints, a nested dict and a list."""
    return {
        "timing/step": 9.5 + step / 7.0,
        "timing/generate": 4.25 + step / 11.0,
        "reward/avg_raw_reward": 0.1 + step / 300.0,
        "reward/avg_pass_at_4": 0.2 + step / 250.0,
        "policy/policy_entropy": 0.9 - step / 97.0,
        "policy/policy_loss": -0.0123456 * step,
        "policy/raw_grad_norm": 1e-6 * step,
        "trainer/global_step": step,
        "trainer/epoch": 0,
        "generate/avg_num_tokens": 212.3456789,
        "vllm/train/histogram": [1.0, 2.0],
        "gpu/memory": {"node0": 61.25},
        "nan_metric": float("nan"),
    }


def main(log_path, steps):
    tracking = real_tracking()
    from loguru import logger

    pid = os.getpid()
    log = open(log_path, "w", buffering=1)
    prefix = f"\x1b[36m(skyrl_entrypoint pid={pid})\x1b[0m "

    def ray_sink(message):
        for line in str(message).splitlines():
            log.write(prefix + line + "\n")

    logger.remove()
    logger.add(ray_sink, colorize=True)
    tracker = tracking.Tracking(project_name="rlctl", experiment_name="console", backend="console")
    logged = {}
    for step in range(1, steps + 1):
        data = payload(step)
        tracker.log(data, step=step, commit=True)
        log.write(f"\x1b[33m(RayWorkerWrapper pid={pid + 1})\x1b[0m INFO vLLM step {step} noise\n")
        logged[step] = {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in data.items()
                        if isinstance(v, (int, float))}
    tracker.finish()
    log.close()
    print(json.dumps(logged))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
