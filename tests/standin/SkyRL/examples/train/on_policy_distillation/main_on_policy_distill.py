"""STAND-IN for upstream SkyRL's on-policy distillation entry module
(examples.train.on_policy_distillation.main_on_policy_distill), used by rlctl's tests: the same
checks and loop as the stand-in skyrl.train.entrypoints.main_base, with OPD's metrics. Like
upstream's, it has its own `main()` (rlctl's progress module calls the entry module's), and on
import it registers the advantage estimator `no_op` as upstream's does, with the REAL
`register_advantage_estimator` where the checkout has the wheel's ppo_utils (the deep check's
tests link it in: validate_cfg then finds `no_op` as it does upstream). The job stand-in's
checkout has no backends: nothing there computes advantages, so nothing is registered."""
import sys

from skyrl.train.entrypoints.main_base import main as base_main

try:
    from skyrl.backends.skyrl_train.utils.ppo_utils import register_advantage_estimator
except ImportError:
    register_advantage_estimator = None

if register_advantage_estimator is not None:

    @register_advantage_estimator("no_op")
    def compute_no_op_advantage(token_level_rewards, **kwargs):
        # As upstream's: the rewards (the negative KL to the teacher per token) pass through.
        return token_level_rewards, token_level_rewards


def main():
    return base_main(kind="opd")


if __name__ == "__main__":
    sys.exit(main())
