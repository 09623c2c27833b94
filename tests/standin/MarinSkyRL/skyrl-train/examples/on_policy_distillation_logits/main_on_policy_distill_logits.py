"""Stand-in for MarinSkyRL's on-policy distillation entrypoint, used by rlctl's tests.

It runs the same checks as the stand-in GRPO entrypoint (skyrl_train.entrypoints.main_base),
also requires teacher.model_path, and prints OPD's metrics (distill/token_kl_mean falling).
"""
import sys

from skyrl_train.entrypoints.main_base import main

if __name__ == "__main__":
    sys.exit(main(kind="opd"))
