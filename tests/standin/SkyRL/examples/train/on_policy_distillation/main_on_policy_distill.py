"""STAND-IN for upstream SkyRL's on-policy distillation entry module, used by rlctl's tests: the
same checks and loop as the stand-in skyrl.train.entrypoints.main_base, with OPD's metrics."""
import sys

from skyrl.train.entrypoints.main_base import main

if __name__ == "__main__":
    sys.exit(main(kind="opd"))
