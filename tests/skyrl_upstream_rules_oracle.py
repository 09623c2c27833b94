"""Upstream skyrl's own config and `validate_cfg`, as the oracle of rlctl's `[skyrl-rules]` check
on an upstream plan (tests/integration/skyrl_rules_upstream.rs).

    python3 tests/skyrl_upstream_rules_oracle.py verdicts < cases.json
        Reads a JSON list of cases, {"name": ..., "argv": [...]}: the command line an upstream
        plan hands the trainer (`KEY=VALUE` in upstream's names, in order). For each case it
        builds the config as `skyrl.train.entrypoints.main_base` does, with the installed wheel's
        real `SkyRLTrainConfig.from_cli_overrides(argv)`, then runs the wheel's real
        `skyrl.train.utils.utils.validate_cfg` on it, and prints one JSON line:
        {"name": ..., "ok": true|false, "error": "<exception type>: <first line>" or null}.
        A case the parser itself refuses prints "parse": "<its error>" instead: the corpus is
        written so that never happens (rlctl's schema check, not this oracle, judges keys).

WHAT IS STUBBED, AND WHY. The `skyrl` wheel is installed with --no-deps (tests/setup.sh): its GPU
stack is not what this oracle checks, and validate_cfg reads only the config. Everything named
here is a STAND-IN, nothing else is:
  - the config module is imported FIRST, with the real omegaconf, numpy, pandas and skyrl_gym;
  - then tests/gpu_stack_standin/gpu_stack_standin.py's permissive stand-ins (torch, ray, vllm,
    transformers, ... : inert placeholders; see its docstring) for what `skyrl/train/utils/utils.py`
    and `ppo_utils.py` import at their top: their torch and ray uses are annotations, decorators
    and functions validate_cfg never calls;
  - `ray.util.scheduling_strategies` (one class utils.py imports and never uses in validate_cfg);
  - `skyrl.backends` as a bare package over the wheel's own folder, so that its `__init__`
    (the Tinker API backend: pydantic models that need Python 3.12) does not run; its
    submodules (ppo_utils, the fp8 and megatron helpers) are the wheel's real files;
  - `skyrl.backends.skyrl_train.inference_servers.utils`, whose one function the config's
    `__post_init__` imports (`_uses_lora_weight_sync`), is the upstream stand-in checkout's
    (tests/standin/SkyRL): the real module imports vLLM's HTTP client stack.
No rule of validate_cfg needs the GPU stack; a Megatron rule that asks the GPU (fp8 recipe
resolution) is not in the corpus.

WANDB_API_KEY is removed from the environment: validate_cfg reads it, and the Rust side runs
rlctl without it too.

Exit status 2 (with a message) when the wheel is missing: run tests/setup.sh.
"""
import importlib.metadata
import importlib.util
import json
import os
import sys
import types
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
SKYRL = "0.4.0"
STANDIN_SERVER_UTILS = os.path.join(
    HERE, "standin", "SkyRL", "skyrl", "backends", "skyrl_train", "inference_servers", "utils.py"
)


def fail(message):
    print(message, file=sys.stderr)
    sys.exit(2)


def first_line(error):
    lines = str(error).strip().splitlines()
    return f"{type(error).__name__}: {lines[0] if lines else ''}"


def install_standins(wheel):
    sys.path.insert(0, os.path.join(HERE, "gpu_stack_standin"))
    import gpu_stack_standin

    gpu_stack_standin.install(permissive=True)
    strategies = types.ModuleType("ray.util.scheduling_strategies")
    strategies.PlacementGroupSchedulingStrategy = type("PlacementGroupSchedulingStrategy", (), {})
    sys.modules[strategies.__name__] = strategies
    backends = types.ModuleType("skyrl.backends")
    backends.__path__ = [os.path.join(wheel, "backends")]
    sys.modules[backends.__name__] = backends
    name = "skyrl.backends.skyrl_train.inference_servers.utils"
    spec = importlib.util.spec_from_file_location(name, STANDIN_SERVER_UTILS)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules[name] = module


def verdict(case, config_class, validate_cfg):
    try:
        cfg = config_class.from_cli_overrides(list(case["argv"]))
    except Exception as e:  # the parser's refusal: a corpus bug, reported as such
        return {"name": case["name"], "parse": first_line(e)}
    try:
        validate_cfg(cfg)
        ok, error = True, None
    except Exception as e:  # every refusal: an assert, a ValueError, a NotImplementedError...
        ok, error = False, first_line(e)
    return {"name": case["name"], "ok": ok, "error": error}


def main():
    warnings.simplefilter("ignore")
    if sys.argv[1:] != ["verdicts"]:
        fail(__doc__)
    spec = importlib.util.find_spec("skyrl")
    if spec is None or not spec.submodule_search_locations:
        fail("the skyrl wheel is not installed; run tests/setup.sh")
    version = importlib.metadata.version("skyrl")
    if version != SKYRL:
        fail(f"skyrl {version} is installed, the oracle wants {SKYRL}; run tests/setup.sh")
    wheel = next(iter(spec.submodule_search_locations))
    from skyrl.train.config.config import SkyRLTrainConfig

    install_standins(wheel)
    from skyrl.train.utils.utils import validate_cfg

    os.environ.pop("WANDB_API_KEY", None)
    for case in json.load(sys.stdin):
        print(json.dumps(verdict(case, SkyRLTrainConfig, validate_cfg)), flush=True)


main()
