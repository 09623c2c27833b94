"""Upstream SkyRL's verdict on command lines, for omegaconf_dotlist.rs next to this file.

Reads one JSON list of argv items per line on stdin and prints one JSON verdict per line:
`SkyRLTrainConfig.from_cli_overrides(argv)` of the real `skyrl` 0.4.0 wheel (tests/setup.sh
installs it with --no-deps), with

  ok      whether it built the config;
  stage   where it refused: "plus" (the `+` prefix), "dotlist" (OmegaConf.from_cli: YAML or
          key syntax), "removed" (the keys 0.4.0 refuses by name), "fields" (a key no config
          class has: "Invalid fields ..."), "resolve" (an interpolation), "value" (a
          dataclass's own value rule, in `__post_init__` or an Enum), null when ok;
  error   the exception's first line;
  values  when OmegaConf read the items: the config OmegaConf makes of each item alone,
          unresolved, as JSON with ints and floats tagged ({"float": "repr"}) so 1 and 1.0
          differ, and dicts as pairs (their keys may be ints).

STAND-INS: config.py imports two dataclasses of `skyrl_gym` (a package of RL environments,
whose modules import the environments' own dependencies). They are replaced by stand-ins with
the fields and defaults the 0.4.0 config flattens to (reference key list), nothing more. The
package's `__init__` also imports sft_config.py, which imports `loguru` for a logger no code of
`from_cli_overrides` calls: a stand-in logger whose methods do nothing. And the config's
`__post_init__` imports `_uses_lora_weight_sync` from skyrl.backends, whose package imports the
training backends (cloudpathlib, pydantic, torch...): a stand-in module holds a copy of that
function's three lines, which read the config alone.
"""
import dataclasses
import enum
import json
import sys
import traceback
import types
import warnings


def _install_skyrl_gym_standins():
    @dataclasses.dataclass
    class SearchEnvConfig:  # STAND-IN for skyrl_gym.envs.search.env.SearchEnvConfig
        log_requests: bool = False
        search_url: str = "http://127.0.0.1:8000/retrieve"
        topk: int = 3
        timeout: int = 30

    @dataclasses.dataclass
    class Text2SQLEnvConfig:  # STAND-IN for skyrl_gym.envs.sql.env.Text2SQLEnvConfig
        db_path: str = "/home/ray/default/sql_data"

    for name, attrs in {
        "skyrl_gym": {},
        "skyrl_gym.envs": {},
        "skyrl_gym.envs.search": {},
        "skyrl_gym.envs.search.env": {"SearchEnvConfig": SearchEnvConfig},
        "skyrl_gym.envs.sql": {},
        "skyrl_gym.envs.sql.env": {"Text2SQLEnvConfig": Text2SQLEnvConfig},
    }.items():
        module = types.ModuleType(name)
        module.__dict__.update(attrs)
        sys.modules[name] = module


try:
    import loguru  # noqa: F401
except ImportError:
    _loguru = types.ModuleType("loguru")  # STAND-IN: a logger that logs nothing
    _loguru.logger = types.SimpleNamespace(**{m: (lambda *a, **k: None) for m in (
        "debug", "info", "warning", "error", "exception", "success", "trace")})
    sys.modules["loguru"] = _loguru

_install_skyrl_gym_standins()  # always, so the keys do not depend on what else is installed


def _install_backend_standin():
    """Always the stand-in: the real package imports the training backends."""
    def _uses_lora_weight_sync(cfg):  # a copy of skyrl 0.4.0's three lines
        if cfg.trainer.policy.model.lora.rank <= 0:
            return False
        if cfg.trainer.strategy == "megatron":
            return not cfg.trainer.policy.megatron_config.lora_config.merge_lora
        return True

    names = ("skyrl.backends", "skyrl.backends.skyrl_train",
             "skyrl.backends.skyrl_train.inference_servers",
             "skyrl.backends.skyrl_train.inference_servers.utils")
    for name in names:
        sys.modules[name] = types.ModuleType(name)  # STAND-IN
    sys.modules[names[-1]]._uses_lora_weight_sync = _uses_lora_weight_sync


_install_backend_standin()

from omegaconf import OmegaConf  # noqa: E402
from skyrl.train.config.config import SkyRLTrainConfig  # noqa: E402


def tagged(value):
    """A stored value as JSON, floats tagged so that their type survives."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return {"int": str(value)}
    if isinstance(value, float):
        return {"float": repr(value)}
    if isinstance(value, dict):
        return {"dict": [[tagged(k), tagged(v)] for k, v in value.items()]}
    if isinstance(value, list):
        return [tagged(v) for v in value]
    return {"other": type(value).__name__}


def stored(item):
    """The config OmegaConf makes of one item alone, unresolved."""
    return tagged(OmegaConf.to_container(OmegaConf.from_cli([item]), resolve=False))


def stage_of(error, tb):
    text = str(error)
    frames = [f.name for f in traceback.extract_tb(tb)]
    if "'+' prefix" in text:
        return "plus"
    if text.startswith("Invalid fields"):
        return "fields"
    if any(m in text for m in ("no longer supported", "Specify only one of trainer.use_sample_packing",
                               "must match the trainer-side override")):
        return "removed"
    if "from_cli" in frames or "merge_with_dotlist" in frames:
        return "dotlist"
    if "to_container" in frames:
        return "resolve"
    return "value"


def verdict(argv):
    out = {"ok": False, "stage": None, "error": None, "values": None}
    try:
        OmegaConf.from_cli(list(argv))
        out["values"] = [stored(item) for item in argv]
    except Exception:  # noqa: BLE001  (the oracle reports whatever OmegaConf raises)
        pass
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            SkyRLTrainConfig.from_cli_overrides(list(argv))
        out["ok"] = True
    except Exception as error:  # noqa: BLE001
        out["stage"] = stage_of(error, error.__traceback__)
        out["error"] = (str(error).splitlines() or [type(error).__name__])[0][:300]
    return out


def print_keys():
    """The config's key list (`key=default`, defaults as JSON), walked by type as
    build_nested_dataclass walks it: an `Optional[<dataclass>] = None` field lists its class's
    fields, which from_cli_overrides accepts; a dict-typed field is one key."""
    from skyrl.train.config.config import _resolve_class_type

    def default_of(cls, f, instance):
        if instance is not None:
            return getattr(instance, f.name)
        if f.default is not dataclasses.MISSING:
            return f.default
        if f.default_factory is not dataclasses.MISSING:
            return f.default_factory()
        return None

    def walk(prefix, cls, instance):
        for f in dataclasses.fields(cls):
            value = default_of(cls, f, instance)
            nested = _resolve_class_type(f.type)
            if nested is not None and dataclasses.is_dataclass(nested):
                walk(f"{prefix}{f.name}.", nested, value if dataclasses.is_dataclass(value) else None)
                continue
            if isinstance(value, enum.Enum):
                value = value.value
            try:
                text = json.dumps(value)
            except TypeError:
                text = json.dumps(str(value))
            print(f"{prefix}{f.name}={text}")

    walk("", SkyRLTrainConfig, SkyRLTrainConfig())


def main():
    if sys.argv[1:] == ["keys"]:
        print_keys()
        return
    for line in sys.stdin:
        print(json.dumps(verdict(json.loads(line))), flush=True)


if __name__ == "__main__":
    main()
