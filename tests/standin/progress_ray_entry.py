"""A test entry module of rlctl's tests, shaped like upstream skyrl's main_base as far as rlctl's
progress module (src/render/rlctl_progress.py) cares: `main()` starts Ray and runs the module's
`@ray.remote` function `skyrl_entrypoint`, which builds the trainer (the upstream stand-in's
RayPPOTrainer, tests/standin/SkyRL/skyrl/train/trainer.py, firing the wheel's REAL callbacks)
in a Ray worker process, never in the driver, and logs a few payloads through it.

Run as:  python rlctl_progress.py progress_ray_entry STEPS CKPT_PATH
         (cwd and PYTHONPATH the stand-in upstream checkout, with this file copied into it;
         RLCTL_TEST_RAY_TMP a short temp dir for Ray)

Ray runs on loopback only: its node address is 127.0.0.2 (Ray rewrites 127.0.0.1 to the
machine's address); the test's environment closes its outbound probes.

The payloads: step 0 eval metrics only (the eval before training); steps 1..STEPS a train
payload with a float in full (step / 3), an int, a numpy float, a bool and a string (neither is
a metric), NaN at step 2 and eval metrics merged at step 2; then two payloads holding a value
whose conversion raises: the callback must warn once and never stop the loop. Prints
"driver pid=P trainer pid=Q" at the end.
"""

import os
import sys
import time
from types import SimpleNamespace

import numpy
import ray


class Unreadable:
    """A scalar-looking value (it has `.item()`) whose conversion fails."""

    def item(self):
        return 0.5

    def __float__(self):
        raise RuntimeError("unreadable on purpose")


@ray.remote(num_cpus=1)
def skyrl_entrypoint(steps, ckpt_path):
    from skyrl.train.trainer import RayPPOTrainer
    from skyrl.train.utils.tracking import Tracking

    os.makedirs(ckpt_path, exist_ok=True)
    cfg = SimpleNamespace(trainer=SimpleNamespace(max_training_steps=steps, ckpt_path=ckpt_path))
    trainer = RayPPOTrainer(cfg, Tracking("rlctl_test", "ray", backend="console"))
    trainer.log({"eval/all/avg_score": 0.125}, 0)
    for step in range(1, steps + 1):
        payload = {
            "policy/loss": step / 3,
            "trainer/global_step": step,
            "numpy/value": numpy.float64(step / 7),
            "flag": True,
            "note": "not a metric",
        }
        if step == 2:
            payload |= {"policy/nan": float("nan"), "eval/all/avg_score": 0.25}
        trainer.log(payload, step)
    for step in (steps + 1, steps + 2):
        trainer.log({"policy/loss": 1.0, "broken": Unreadable()}, step)
    return os.getpid()


def main():
    ray.init(
        _node_ip_address="127.0.0.2",
        num_cpus=1,
        include_dashboard=False,
        _temp_dir=os.environ["RLCTL_TEST_RAY_TMP"],
        logging_level="WARNING",
    )
    try:
        pid = ray.get(skyrl_entrypoint.remote(int(sys.argv[1]), sys.argv[2]), timeout=600)
        # Ray's log monitor forwards the worker's lines to this driver a little later: give it
        # time before the cluster stops (the worker's own log files have them all).
        time.sleep(2)
    finally:
        ray.shutdown()
    print(f"driver pid={os.getpid()} trainer pid={pid}", flush=True)
