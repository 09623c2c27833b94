"""Hydra itself, as the oracle of rlctl's schema check and of `rlctl schema import`.

    python3 crates/rlctl-grammar/tests/schema_oracle.py locate
        The config folder of the installed skyrl-train 0.3.1 (found without importing it,
        since skyrl-train is installed with --no-deps).
    python3 crates/rlctl-grammar/tests/schema_oracle.py flatten CONFIG_DIR [OVERRIDE...]
        Composes CONFIG_DIR/ppo_base_config.yaml with hydra (with the overrides given, such as
        config group choices `recipe=opd`, `+recipe=opd`) and prints its keys, one
        `key=default` line each (or one `!refused: ...` line where hydra refuses an override),
        as `rlctl schema import` writes them: OmegaConf.to_container
        with resolve=False, flattened; an empty dict is a leaf; values as json.dumps prints
        them; strings holding an interpolation bare.
    python3 crates/rlctl-grammar/tests/schema_oracle.py verdicts CONFIG_DIR < overrides
        Reads NUL-separated overrides; composes the config once per override, in struct mode as
        SkyRL's entrypoint does, and prints one JSON line per override:
        {"override": ..., "ok": true|false, "error": hydra's first line or null}.

Exit status 2 (with a message) when hydra or skyrl-train is missing: run tests/setup.sh.
"""
import importlib.metadata
import importlib.util
import json
import os
import sys
import warnings

CONFIG = "ppo_base_config"
SKYRL_TRAIN = "0.3.1"  # the version tests/schema.rs's corpus is written against


def fail(message):
    print(message, file=sys.stderr)
    sys.exit(2)


try:
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf
except ImportError as e:
    fail(f"hydra-core is not installed ({e}); run tests/setup.sh")


def locate():
    spec = importlib.util.find_spec("skyrl_train")
    if spec is None or not spec.submodule_search_locations:
        fail("skyrl-train is not installed; run tests/setup.sh")
    version = importlib.metadata.version("skyrl-train")
    if version != SKYRL_TRAIN:
        fail(f"skyrl-train {version} is installed, the tests want {SKYRL_TRAIN}; run tests/setup.sh")
    for root in spec.submodule_search_locations:
        config = os.path.join(root, "config")
        if os.path.isfile(os.path.join(config, CONFIG + ".yaml")):
            return config
    fail("the installed skyrl-train has no config/ppo_base_config.yaml; run tests/setup.sh")


def flatten(node, prefix=""):
    for key, value in node.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            yield from flatten(value, path + ".")
        elif isinstance(value, str) and "${" in value:
            yield path, value
        else:
            yield path, json.dumps(value)


def main():
    warnings.simplefilter("ignore")
    if sys.argv[1:] == ["locate"]:
        print(locate())
        return
    if len(sys.argv) < 3 or sys.argv[1] not in ("flatten", "verdicts"):
        fail(__doc__)
    command, config_dir = sys.argv[1], os.path.abspath(sys.argv[2])
    if command == "verdicts" and len(sys.argv) != 3:
        fail(__doc__)
    with initialize_config_dir(config_dir=config_dir, version_base=None):
        if command == "flatten":
            try:
                cfg = compose(config_name=CONFIG, overrides=sys.argv[3:])
            except Exception as e:  # hydra refuses an override: its verdict, one line
                lines = str(e).strip().splitlines()
                print(f"!refused: {type(e).__name__}: {lines[0] if lines else ''}")
                return
            for key, value in flatten(OmegaConf.to_container(cfg, resolve=False)):
                print(f"{key}={value}")
            return
        overrides = sys.stdin.buffer.read().decode("utf-8").split("\0")[:-1]
        for override in overrides:
            try:
                compose(config_name=CONFIG, overrides=[override])
                ok, error = True, None
            except Exception as e:  # any refusal: hydra's, OmegaConf's, or a TypeError inside
                ok = False
                lines = str(e).strip().splitlines()
                error = f"{type(e).__name__}: {lines[0] if lines else ''}"
            print(json.dumps({"override": override, "ok": ok, "error": error}))


main()
