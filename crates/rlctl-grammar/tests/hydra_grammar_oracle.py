"""Hydra's verdict on whole command lines of overrides, as SkyRL's entrypoint would give it.

    python3 crates/rlctl-grammar/tests/hydra_grammar_oracle.py compose CONFIG_DIR [--verify] < cases
        Each stdin line is a JSON array of override strings: one command line. Prints one JSON
        line per case: {"ok": true|false, "stage": ..., "error": hydra's first line or null},
        and for an accepted case "digest", a hash of the resolved config.
        The stages, in hydra's order:
          "parse"   hydra's OverridesParser (the grammar, function calls included);
          "sweep"   a sweep outside --multirun ("Ambiguous value", "requires --multirun"), as
                    hydra.main refuses it for a command line;
          "compose" composing SkyRL's ppo_base_config in struct mode and applying the overrides
                    (hydra's key rules, and OmegaConf's check of every `${` string it assigns);
          "resolve" OmegaConf.to_container(cfg, resolve=True), as SkyRL's tracker does on start:
                    interpolations to keys that do not exist, unknown resolvers, cycles.
        The base config is composed once; each case gets a copy of it with hydra's own
        `_apply_overrides_to_config`, which is what compose does for overrides that name no
        config group. Cases that name a group, or hydra's own keys, get a full compose.
        --verify composes every case in full as well and fails where the stages differ (slow).
    python3 crates/rlctl-grammar/tests/hydra_grammar_oracle.py values < cases
        The same stages for one override per line against a two-key config
        (trainer.project_name="skyrl", trainer.seed=42): fast enough for a proptest.

Exit status 2 (with a message) when hydra is missing: run tests/setup.sh.
"""
import hashlib
import json
import os
import pickle
import sys
import warnings

CONFIG = "ppo_base_config"


def fail(message):
    print(message, file=sys.stderr)
    sys.exit(2)


try:
    from hydra import compose, initialize_config_dir
    from hydra._internal.config_loader_impl import ConfigLoaderImpl
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.types import RunMode
    from omegaconf import OmegaConf
except ImportError as e:
    fail(f"hydra-core is not installed ({e}); run tests/setup.sh")

PARSER = OverridesParser.create()


def first_line(e):
    lines = str(e).strip().splitlines()
    text = f"{type(e).__name__}: {lines[0] if lines else ''}"
    cause = e.__cause__
    if cause is not None:
        lines = str(cause).strip().splitlines()
        text += f" ({type(cause).__name__}: {lines[0] if lines else ''})"
    return text


def verdict(stage, error=None):
    return {"ok": stage is None, "stage": stage, "error": error}


def parse_and_sweep(args):
    """The parsed overrides, or the verdict of the stage that refused them."""
    try:
        parsed = PARSER.parse_overrides(args)
    except Exception as e:
        return None, verdict("parse", first_line(e))
    try:
        ConfigLoaderImpl.validate_sweep_overrides_legal(parsed, RunMode.RUN, from_shell=True)
    except Exception as e:
        return None, verdict("sweep", first_line(e))
    return parsed, None


def canonical(value):
    """The value with every dict key a string, so that keys of mixed types sort."""
    if isinstance(value, dict):
        return {repr(k): canonical(v) for k, v in value.items()}
    if isinstance(value, list):
        return [canonical(v) for v in value]
    return value


def resolved(cfg):
    try:
        container = OmegaConf.to_container(cfg, resolve=True)
    except Exception as e:
        return verdict("resolve", first_line(e))
    text = json.dumps(canonical(container), sort_keys=True, default=repr)
    return dict(verdict(None), digest=hashlib.sha256(text.encode()).hexdigest())


def full_compose(args):
    parsed, refused = parse_and_sweep(args)
    if refused:
        return refused
    try:
        cfg = compose(config_name=CONFIG, overrides=args)
    except Exception as e:
        return verdict("compose", first_line(e))
    return resolved(cfg)


def applied(base, parsed):
    # A pickled copy keeps every flag (struct mode included) and costs a tenth of deepcopy.
    cfg = pickle.loads(base)
    try:
        ConfigLoaderImpl._apply_overrides_to_config(parsed, cfg)
    except Exception as e:
        return verdict("compose", first_line(e))
    return resolved(cfg)


def compose_cases(config_dir, verify):
    groups = {
        name
        for name in os.listdir(config_dir)
        if os.path.isdir(os.path.join(config_dir, name)) and not name.startswith("_")
    }

    def needs_full(parsed):
        return any(
            o.package is not None
            or "/" in o.key_or_group
            or o.key_or_group.split(".")[0] in groups | {"hydra"}
            for o in parsed
        )

    with initialize_config_dir(config_dir=config_dir, version_base=None):
        base = pickle.dumps(compose(config_name=CONFIG))
        for line in sys.stdin.buffer.read().decode("utf-8").split("\n")[:-1]:
            args = json.loads(line)
            parsed, result = parse_and_sweep(args)
            if result is None:
                result = full_compose(args) if needs_full(parsed) else applied(base, parsed)
            if verify:
                full = full_compose(args)
                # The stage, not the message: shuffle() words its message at random.
                if (full["ok"], full["stage"]) != (result["ok"], result["stage"]):
                    fail(f"the quick path differs from compose on {args}: {result} != {full}")
            print(json.dumps(result), flush=False)


def value_cases():
    base = OmegaConf.create({"trainer": {"project_name": "skyrl", "seed": 42}})
    OmegaConf.set_struct(base, True)
    base = pickle.dumps(base)
    for line in sys.stdin.buffer.read().decode("utf-8").split("\n")[:-1]:
        args = json.loads(line)
        parsed, result = parse_and_sweep(args)
        print(json.dumps(result or applied(base, parsed)))


def main():
    warnings.simplefilter("ignore")
    os.environ.setdefault("HOME", "/root")
    if sys.argv[1:] == ["values"]:
        value_cases()
    elif len(sys.argv) in (3, 4) and sys.argv[1] == "compose" and sys.argv[3:] in ([], ["--verify"]):
        compose_cases(os.path.abspath(sys.argv[2]), sys.argv[3:] == ["--verify"])
    else:
        fail(__doc__)


main()
