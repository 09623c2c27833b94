"""rlctl's deep check: SkyRL's own config composition and validate_cfg, run by the job's venv.

    $VENV_PY -c <this script> ENTRYPOINT OVERRIDE...

run by rlctl in the job's container, in the checkout's skyrl-train folder, with the overrides
the trainer gets, in order. It imports ENTRYPOINT as the job does (so the losses and advantage
estimators the module registers are registered), composes the config the way its
`@hydra.main` does (its own config folder and name, hydra's compose API: nothing is written, no
outputs folder), then calls the `validate_cfg` the module imported. The last line it prints is
one JSON object: {"ok": true|false, "stage": "import"|"compose"|"validate", "error":
"<exception type>: <message>" or null}. Anything the imports print goes before it.

On an upstream skyrl checkout (the working folder is its root and holds
skyrl/train/config/config.py, the marker rlctl reads too) there is no hydra: after the import it
builds the config as upstream's main_base does, `SkyRLTrainConfig.from_cli_overrides(overrides)`
(or the entry module's own subclass of it, when it defines exactly one), stage "parse", then
calls the `validate_cfg` the module imported, else `skyrl.train.utils.utils.validate_cfg` of the
checkout's package, where upstream's main_base imports it from.
"""
import importlib
import json
import os
import sys


def report(ok, stage, error=None):
    message = None
    if error is not None:
        text = " ".join(line.strip() for line in str(error).strip().splitlines() if line.strip())
        message = f"{type(error).__name__}: {text}" if text else type(error).__name__
    sys.stdout.flush()
    print("\n" + json.dumps({"ok": ok, "stage": stage, "error": message}), flush=True)
    sys.exit(0)


def hydra_main_arguments(module):
    """`config_path` and `config_name` of the module's `@hydra.main`, read from the closure
    of the function it decorated; None for each one the module does not show."""
    main = getattr(module, "main", None)
    code = getattr(main, "__code__", None)
    cells = getattr(main, "__closure__", None) or ()
    found = {}
    if code is not None:
        for name, cell in zip(code.co_freevars, cells):
            if name in ("config_path", "config_name"):
                try:
                    found[name] = cell.cell_contents
                except ValueError:
                    pass
    return found.get("config_path"), found.get("config_name")


def config_location(module):
    path, name = hydra_main_arguments(module)
    if not isinstance(path, str):
        path = getattr(module, "config_dir", None)
    if not isinstance(path, str):
        import skyrl_train

        path = os.path.join(os.path.dirname(skyrl_train.__file__), "config")
    elif not os.path.isabs(path):
        # hydra reads a relative config_path from the decorated file's folder.
        path = os.path.join(os.path.dirname(os.path.abspath(module.__file__)), path)
    if not isinstance(name, str):
        name = "ppo_base_config"
    return os.path.abspath(path), name


UPSTREAM_MARKER = os.path.join("skyrl", "train", "config", "config.py")


def upstream(module, overrides):
    """Upstream skyrl's parse and validate_cfg; reports and exits."""
    try:
        from skyrl.train.config import SkyRLTrainConfig

        own = [
            value
            for value in vars(module).values()
            if isinstance(value, type) and issubclass(value, SkyRLTrainConfig) and value is not SkyRLTrainConfig
        ]
        config_class = own[0] if len(own) == 1 else SkyRLTrainConfig
        cfg = config_class.from_cli_overrides(list(overrides))
    except BaseException as e:  # noqa: BLE001
        report(False, "parse", e)
    validate(module, cfg, "skyrl.train.utils.utils")


def main():
    # The checkout is read, never written: no __pycache__ beside its sources.
    sys.dont_write_bytecode = True
    entrypoint, overrides = sys.argv[1], sys.argv[2:]
    sys.argv = [entrypoint, *overrides]
    try:
        module = importlib.import_module(entrypoint)
    except BaseException as e:  # noqa: BLE001 (SystemExit included: the import must not exit)
        report(False, "import", e)
    if os.path.isfile(UPSTREAM_MARKER):
        upstream(module, overrides)
    try:
        from hydra import compose, initialize_config_dir

        config_dir, config_name = config_location(module)
        with initialize_config_dir(config_dir=config_dir, version_base=None):
            cfg = compose(config_name=config_name, overrides=overrides)
    except BaseException as e:  # noqa: BLE001
        report(False, "compose", e)
    validate(module, cfg, "skyrl_train.utils.utils")


def validate(module, cfg, utils):
    """The entry module's own validate_cfg if it has one, else the flavour's (`utils`); reports
    and exits either way."""
    try:
        validate_cfg = getattr(module, "validate_cfg", None)
        if not callable(validate_cfg):
            validate_cfg = importlib.import_module(utils).validate_cfg
        validate_cfg(cfg)
    except BaseException as e:  # noqa: BLE001
        report(False, "validate", e)
    report(True, "validate")


main()
