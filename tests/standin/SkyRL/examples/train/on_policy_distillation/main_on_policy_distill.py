"""STAND-IN for upstream SkyRL's on-policy distillation entry module, used by rlctl's tests: the
same checks and loop as the stand-in skyrl.train.entrypoints.main_base, with OPD's metrics. Like
upstream's, it has its own `main()` (rlctl's progress module calls the entry module's)."""
import sys

from skyrl.train.entrypoints.main_base import main as base_main


def main():
    return base_main(kind="opd")


if __name__ == "__main__":
    sys.exit(main())
