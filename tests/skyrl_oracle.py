"""SkyRL's own `validate_cfg`, as the oracle of rlctl's `[skyrl-rules]` preflight check.

    python3 tests/skyrl_oracle.py verdicts < cases.json
        Reads a JSON list of cases, {"name": ..., "entrypoint": ..., "overrides": [...]}: the
        hydra overrides a plan hands the trainer, in order, and the module the job runs. For each
        case it composes skyrl-train 0.3.1's `ppo_base_config.yaml` with the overrides (hydra's
        compose API, struct mode, as the entrypoint's @hydra.main does), then calls the real
        `skyrl_train.utils.utils.validate_cfg` on it, and prints one JSON line:
        {"name": ..., "ok": true|false, "error": "<exception type>: <first line>" or null}.
        A case whose overrides hydra itself refuses prints "compose": "<hydra's error>" instead;
        the corpus is written so that never happens.

        Composing takes hydra about 0.3 s a case, mostly re-reading the YAML files, which are the
        same for every case. So the oracle composes the config once without overrides, and for
        each case applies the overrides to a copy of it with hydra's own override parser and
        `ConfigLoaderImpl._apply_overrides_to_config`: the step compose itself ends with, in
        struct mode. A case with an override compose handles differently (a config group, a
        hydra or sweep override) is composed from scratch.

WHAT IS STUBBED, AND WHY. skyrl-train is installed with --no-deps (tests/setup.sh): its GPU stack
is not what this oracle checks, and `validate_cfg` reads only the config. Its modules import
that stack at import time, so this script installs the small stand-ins of
tests/gpu_stack_standin/gpu_stack_standin.py (torch, numpy, jaxtyping, loguru, ray and
flash_attn, in their strict form: each says there why it is enough) into `sys.modules` first.
The same file stands in for the venv's GPU stack in the tests of `rlctl check --deep`.

Everything else is the real thing: hydra, omegaconf, the config YAMLs, `validate_cfg` and every
function it calls, and the registries of ppo_utils.py with every loss and estimator skyrl-train
0.3.1 registers.

TWO MORE THINGS THE ORACLE DOES FOR THE CASES:
  - Keys skyrl-train 0.3.1's config lacks (MarinSkyRL's own, e.g. `teacher.*`,
    `trainer.max_steps`) get hydra's `+` prefix, so that the case composes; 0.3.1's
    validate_cfg never reads them. rlctl's schema check, not this oracle, judges the keys.
  - The on-policy distillation entrypoints (MarinSkyRL's examples, not in the skyrl-train
    wheel) register the `no_op` advantage estimator and the `importance_sampling` policy loss
    when they are imported, before validate_cfg runs; for a case with such an entrypoint the
    oracle registers the same names through skyrl-train's own decorators, and unregisters
    them after.

Exit status 2 (with a message) when hydra or skyrl-train is missing: run tests/setup.sh.
"""
import importlib.metadata
import importlib.util
import json
import os
import sys
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "gpu_stack_standin"))
import gpu_stack_standin  # noqa: E402

CONFIG = "ppo_base_config"
SKYRL_TRAIN = "0.3.1"

# What each entrypoint module registers on import: (advantage estimators, policy losses).
ENTRYPOINT_REGISTRATIONS = {
    "examples.on_policy_distillation.main_on_policy_distill": (["no_op"], ["importance_sampling"]),
    "examples.on_policy_distillation_logits.main_on_policy_distill_logits": (
        ["no_op"],
        ["importance_sampling"],
    ),
}


def fail(message):
    print(message, file=sys.stderr)
    sys.exit(2)


def locate():
    spec = importlib.util.find_spec("skyrl_train")
    if spec is None or not spec.submodule_search_locations:
        fail("skyrl-train is not installed; run tests/setup.sh")
    version = importlib.metadata.version("skyrl-train")
    if version != SKYRL_TRAIN:
        fail(f"skyrl-train {version} is installed, the oracle wants {SKYRL_TRAIN}; run tests/setup.sh")
    for root in spec.submodule_search_locations:
        config = os.path.join(root, "config")
        if os.path.isfile(os.path.join(config, CONFIG + ".yaml")):
            return config
    fail("the installed skyrl-train has no config/ppo_base_config.yaml; run tests/setup.sh")


def first_line(error):
    lines = str(error).strip().splitlines()
    return f"{type(error).__name__}: {lines[0] if lines else ''}"


def appended(base, override):
    """The override, with `+` when 0.3.1's config lacks its key (see the module's docstring)."""
    from omegaconf import OmegaConf

    key = override.split("=", 1)[0]
    if key.startswith(("+", "~")):
        return override
    if OmegaConf.select(base, key, default="<absent>", throw_on_missing=False) == "<absent>":
        return "+" + override
    return override


class Composer:
    """hydra's compose of the config with a case's overrides (see the docstring's note)."""

    def __init__(self, compose):
        import copy

        from hydra._internal.config_loader_impl import ConfigLoaderImpl
        from hydra.core.global_hydra import GlobalHydra
        from hydra.core.override_parser.overrides_parser import OverridesParser

        self.compose = compose
        self.base = compose(config_name=CONFIG)
        self.copy = copy.deepcopy
        self.apply = ConfigLoaderImpl._apply_overrides_to_config
        self.parser = OverridesParser.create()
        self.repository = GlobalHydra.instance().config_loader().repository

    def __call__(self, overrides):
        parsed = self.parser.parse_overrides(overrides=overrides)
        special = any(
            o.is_hydra_override() or o.is_sweep_override() or self.repository.group_exists(o.key_or_group)
            for o in parsed
        )
        if special:
            return self.compose(config_name=CONFIG, overrides=overrides)
        cfg = self.copy(self.base)
        self.apply(parsed, cfg)
        return cfg


def verdict(case, composer, validate_cfg, ppo_utils):
    overrides = [appended(composer.base, o) for o in case["overrides"]]
    try:
        cfg = composer(overrides)
    except Exception as e:  # hydra's refusal: a corpus bug, reported as such
        return {"name": case["name"], "compose": first_line(e)}
    estimators, losses = ENTRYPOINT_REGISTRATIONS.get(case.get("entrypoint", ""), ([], []))
    noop = lambda *args, **kwargs: None  # noqa: E731 (never called by validate_cfg)
    for name in estimators:
        ppo_utils.register_advantage_estimator(name)(noop)
    for name in losses:
        ppo_utils.register_policy_loss(name)(noop)
    try:
        validate_cfg(cfg)
        ok, error = True, None
    except Exception as e:  # every refusal: an assert, a ValueError, a ZeroDivisionError...
        ok, error = False, first_line(e)
    finally:
        for name in estimators:
            ppo_utils.AdvantageEstimatorRegistry.unregister(name)
        for name in losses:
            ppo_utils.PolicyLossRegistry.unregister(name)
    return {"name": case["name"], "ok": ok, "error": error}


def main():
    warnings.simplefilter("ignore")
    if sys.argv[1:] != ["verdicts"]:
        fail(__doc__)
    try:
        from hydra import compose, initialize_config_dir
    except ImportError as e:
        fail(f"hydra-core is not installed ({e}); run tests/setup.sh")
    config_dir = locate()
    gpu_stack_standin.install()
    from skyrl_train.utils import ppo_utils
    from skyrl_train.utils.utils import validate_cfg

    # SkyRL's wandb rule reads the environment; the Rust side runs rlctl without it too.
    os.environ.pop("WANDB_API_KEY", None)
    cases = json.load(sys.stdin)
    with initialize_config_dir(config_dir=config_dir, version_base=None):
        composer = Composer(compose)
        for case in cases:
            print(json.dumps(verdict(case, composer, validate_cfg, ppo_utils)), flush=True)


main()
