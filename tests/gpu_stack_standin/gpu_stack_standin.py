"""STAND-INS for SkyRL's GPU stack, shared by rlctl's tests. None of this is the real thing.

skyrl-train is installed with --no-deps on the test machine (tests/setup.sh): torch, vllm, CUDA
and the rest of its GPU stack are gigabytes and need GPUs, and nothing the tests check runs them.
SkyRL's modules import that stack at import time, so `install()` puts small stand-ins into
`sys.modules` first. What each one is, and why it is enough:

  torch       `Tensor`, `dtype` and `device` classes and a `no_grad()` decorator: ppo_utils.py
              and training_batch.py use them only in annotations and decorators of functions
              that validate_cfg never calls. No dtype check of validate_cfg needs torch.
  numpy       `ndarray`, only in ppo_utils.py's annotations.
  jaxtyping   `Float[...]` and `Integer[...]`, only in annotations; both stand for typing.Any.
  loguru      `logger`, whose methods do nothing: validate_cfg only logs warnings with it.
  ray         `remote` (returns what it decorates), `is_initialized()` (always False: the
              policy-loss and advantage-estimator registries then stay in this process, as
              they do in SkyRL's driver before `ray.init`), and the four names utils.py imports
              from `ray.util.placement_group`, never called. The ray that tests/setup.sh
              installs is newer than the 2.51.1 skyrl-train pins, and its placement-group
              module no longer has `PlacementGroupSchedulingStrategy`.
  flash_attn  `__version__ = "2.7.4.post1"`: validate_megatron_cfg imports it when
              `trainer.flash_attn` is on and compares its version with a ceiling. The version is
              the container's, which no plan knob decides; 2.7.4.post1 is under both
              skyrl-train 0.3.1's and MarinSkyRL's ceilings.

`install(permissive=True)` is for importing a whole entrypoint (`rlctl check --deep`'s tests
import skyrl_train.entrypoints.main_base, whose trainer, workers, datasets and inference
engines build classes on torch.nn, transformers, vllm... at import time). Then every name of
PERMISSIVE, and every attribute the modules above do not define, is an inert placeholder:
subclassable, callable (a call with one callable returns it, so it decorates), subscriptable,
iterable as empty. Nothing of it ever computes: the deep check only imports, composes the config
and runs validate_cfg, which reads the config alone. The strict form (the default) is what
tests/skyrl_oracle.py uses: any use of the GPU stack beyond the names above fails loudly there.

In the deep check's tests this file is loaded by the `sitecustomize.py` next to it (the folder is
put first on the test venv's PYTHONPATH), so the real rlctl runs the real script unchanged.
"""
import importlib.abc
import importlib.machinery
import sys
import types
import typing

# Imported by skyrl-train 0.3.1's entrypoint and the modules it imports; none installed.
PERMISSIVE = (
    "accelerate", "aiohttp", "datasets", "fastapi", "fsspec", "peft", "tensordict", "torchdata",
    "tqdm", "transformers", "uvicorn", "vllm", "skyrl_gym", "wandb",
)


class _Annotation:
    """`Float[torch.Tensor, "batch seq"]` and the like: typing.Any, whatever the subscript."""

    def __class_getitem__(cls, _item):
        return typing.Any


def _decorator_factory(*_args, **_kwargs):
    return lambda function: function


def _remote(*args, **_kwargs):
    # `@ray.remote` and `@ray.remote(num_cpus=1)` both leave the function or class as it is.
    if len(args) == 1 and callable(args[0]):
        return args[0]
    return lambda target: target


def _never_called(*_args, **_kwargs):
    raise AssertionError("the ray stand-in was called: validate_cfg is not config-only any more")


class _PlaceholderMeta(type):
    """Attributes and subscripts of a placeholder class are placeholders too."""

    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _placeholder(f"{cls.__qualname__}.{name}")

    def __getitem__(cls, _item):
        return cls

    def __or__(cls, _other):
        return cls

    __ror__ = __or__

    def __iter__(cls):
        return iter(())


class _Placeholder(metaclass=_PlaceholderMeta):
    def __init__(self, *args, **kwargs):
        pass

    def __new__(cls, *args, **kwargs):
        # Used as a decorator, with or without arguments: leave the target as it is.
        if len(args) == 1 and not kwargs and callable(args[0]):
            return args[0]
        return super().__new__(cls)

    def __call__(self, *args, **kwargs):
        if len(args) == 1 and not kwargs and callable(args[0]):
            return args[0]
        return self

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _placeholder(name)

    def __getitem__(self, _item):
        return self

    def __iter__(self):
        return iter(())


def _placeholder(name):
    return _PlaceholderMeta(name.rsplit(".", 1)[-1], (_Placeholder,), {"__qualname__": name})


def _module(name, permissive, **attributes):
    stub = types.ModuleType(name)
    stub.__dict__.update(attributes)
    stub.__path__ = []  # a package: `import torch.nn.functional` finds its submodules here
    if permissive:
        stub.__getattr__ = lambda attr: _missing(name, attr)
    sys.modules[name] = stub
    return stub


def _missing(module, attr):
    if attr.startswith("__"):
        raise AttributeError(attr)
    return _placeholder(f"{module}.{attr}")


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Submodules of the stand-ins (`torch.nn.functional`) and the PERMISSIVE packages."""

    def __init__(self, tops):
        self.tops = tops

    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in self.tops:
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        return _module(spec.name, True)

    def exec_module(self, module):
        pass


def install(permissive=False):
    m = lambda name, **attributes: _module(name, permissive, **attributes)  # noqa: E731
    m("torch", Tensor=type("Tensor", (), {}), dtype=type("dtype", (), {}),
      device=type("device", (), {}), no_grad=_decorator_factory)
    m("numpy", ndarray=type("ndarray", (), {}))
    m("jaxtyping", Float=_Annotation, Integer=_Annotation)

    class _Logger:
        def __getattr__(self, _level):
            return lambda *_args, **_kwargs: None

    m("loguru", logger=_Logger())
    ray = m("ray", remote=_remote, is_initialized=lambda: False)
    ray.util = m("ray.util")
    ray.util.placement_group = m(
        "ray.util.placement_group",
        placement_group=_never_called,
        placement_group_table=_never_called,
        PlacementGroup=type("PlacementGroup", (), {}),
        PlacementGroupSchedulingStrategy=type("PlacementGroupSchedulingStrategy", (), {}),
    )
    m("flash_attn", __version__="2.7.4.post1")
    if permissive:
        tops = {"torch", "numpy", "jaxtyping", "loguru", "ray", "flash_attn", *PERMISSIVE}
        sys.meta_path.insert(0, _Finder(tops))
