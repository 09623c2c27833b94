"""STAND-IN for upstream SkyRL's core on-policy distillation entry (skyrl.train.entrypoints.main_opd),
used only by rlctl's tests, which copy it into the stand-in checkout of
tests/standin/upstream_checkout.py to make a checkout "with the core OPD entry". It is NOT upstream's
source: upstream's main branch is moving OPD into core (NovaSky-AI/SkyRL pull request #2256, open
when this was written, with `trainer.teacher.*` and `trainer.algorithm.opd.*` keys), and no
released checkout has it yet. Its config is built the way upstream extends its config (the REAL
`make_config` of the wheel's config.py), with a teacher section in the shape of that work: most
keys under MarinSkyRL's names, one renamed (`num_engines`), and no pipeline parallel size, so that
rlctl's tests see a translated key, a renamed one and one without counterpart. It trains nothing:
it parses its command line with its config and hands it to the stand-in loop.
"""
import sys
from dataclasses import dataclass, field
from typing import Any, Dict, Optional

from skyrl.train.config.config import AlgorithmConfig, BaseConfig, TrainerConfig, make_config


@dataclass
class TeacherConfig(BaseConfig):
    backend: str = "skyrl"
    model_path: Optional[str] = None
    top_k_logprobs: int = 64
    num_engines: int = 1
    inference_engine_tensor_parallel_size: int = 1
    gpu_memory_utilization: float = 0.85
    enforce_eager: bool = False
    engine_init_kwargs: Dict[str, Any] = field(default_factory=dict)


@dataclass
class OPDConfig(BaseConfig):
    kl_coef: float = 1.0


@dataclass
class OPDAlgorithmConfig(AlgorithmConfig):
    opd: OPDConfig = field(default_factory=OPDConfig)


@dataclass
class OPDTrainerConfig(TrainerConfig):
    algorithm: OPDAlgorithmConfig = field(default_factory=OPDAlgorithmConfig)
    teacher: TeacherConfig = field(default_factory=TeacherConfig)


OPDTrainConfig = make_config(trainer_cls=OPDTrainerConfig)


def main():
    try:
        OPDTrainConfig.from_cli_overrides(sys.argv[1:])
    except Exception as err:  # the real parser's refusal, whatever its type
        print(f"standin: CHECK FAILED: from_cli_overrides refused the command line: {err}", file=sys.stderr)
        return 97
    print("standin: main_opd parsed its command line", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
