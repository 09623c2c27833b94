"""rlctl's progress module: one `WANDB_MIRROR` line per step of an upstream skyrl run.

Written by rlctl next to run.sh in the run folder, for upstream skyrl checkouts only.

Why: rlctl follows a run through the lines MarinSkyRL prints each step,
    WANDB_MIRROR kind=train step=N metrics={json.dumps(payload, sort_keys=True)}
(and `kind=eval`). Upstream skyrl (0.4.0) prints no such line: the step's payload goes only to
the one backend of `trainer.logger`, and the only per-step line with a step number on stdout or
stderr is the console logger's (`trainer.logger=console`), which rounds every float to four
decimals and spreads the dict over many lines. Upstream's supported way to see every step in
full precision, whatever the logger, is a trainer callback (`skyrl.train.utils.callbacks`,
`TrainingCallback.on_log`, given the payload the trainer is about to commit and its
`global_step`). This module registers one on every `RayPPOTrainer` built, and its `on_log`
prints MarinSkyRL's line, so rlctl reads upstream runs as it reads MarinSkyRL's.

Run as:  python /the/run/folder/rlctl_progress.py ENTRY_MODULE OVERRIDES...   (run.sh does)
    or:  python -m rlctl_progress ENTRY_MODULE OVERRIDES...  (the run folder on PYTHONPATH)
from the checkout's root, as `python -m ENTRY_MODULE OVERRIDES...` would be. It:
  * wraps `skyrl.train.trainer.RayPPOTrainer.__init__` (once per process) so that each trainer
    gets a `Progress` callback with `add_callback`, in this process (an entry that builds its
    trainer in-process) and in Ray's: upstream builds the trainer inside the `@ray.remote`
    function `skyrl_entrypoint` of the entry module, in another process, so each module-level
    Ray remote function of the entry module (and of `trainer.override_entrypoint`'s) is replaced
    by one with the same options that installs the hook there, then calls the original;
  * sets `sys.argv` as `python -m ENTRY_MODULE` would and calls the entry module's `main()`,
    exiting with what it returns (None: 0).
A failure inside the callback never stops training: it is caught, and said once on stderr.
"""

import functools
import importlib
import json
import os
import sys

MARKER = "WANDB_MIRROR"
EVAL_PREFIX = "eval/"
OVERRIDE_ENTRYPOINT = "trainer.override_entrypoint="
# Set on the wrapped `RayPPOTrainer.__init__`, so that a second hook is a no-op.
HOOKED = "_rlctl_progress_hooked"

# Run by path, Python puts this file's folder first on sys.path; `python -m ENTRY_MODULE` would
# put the working folder (the checkout's root) there, and so does this, before any import of the
# checkout's code.
if __name__ == "__main__" and sys.path:
    if os.path.realpath(sys.path[0] or ".") == os.path.dirname(os.path.realpath(__file__)):
        sys.path[0] = os.getcwd()

_warned = []


def warn(message):
    """One warning line on stderr, the first time only: progress lines are a convenience."""
    if not _warned:
        _warned.append(message)
        print(f"rlctl_progress: warning: {message}", file=sys.stderr, flush=True)


def numeric(value):
    """`value` as a JSON number, or None: bools and non-numbers are skipped; torch and numpy
    scalars (anything with `.item()`) are read through it."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return value
    if callable(getattr(value, "item", None)):
        try:
            item = value.item()
        except Exception:  # a tensor of several values, or anything else that is not a scalar
            return None
        if isinstance(item, bool) or not isinstance(item, (int, float)):
            return None
        return item if isinstance(item, int) else float(value)
    return None


def mirror(kind, step, metrics):
    """MarinSkyRL's line: `json.dumps` writes every float in full (NaN, Infinity as such)."""
    text = json.dumps(metrics, sort_keys=True)
    print(f"{MARKER} kind={kind} step={int(step)} metrics={text}", flush=True)


try:
    from skyrl.train.utils.callbacks import TrainingCallback
except Exception as err:  # not an upstream checkout: the entry runs without progress lines
    TrainingCallback = object
    _callbacks_missing = err
else:
    _callbacks_missing = None


class Progress(TrainingCallback):
    """Prints each payload the trainer commits as MarinSkyRL's `WANDB_MIRROR` line(s).

    Upstream merges a step's eval metrics into its train payload: a payload of eval keys only
    (the eval before training) is a `kind=eval` line; a train payload with eval keys is its
    `kind=train` line and a `kind=eval` line of those keys, at the same step, as MarinSkyRL's."""

    def on_log(self, trainer, callback_input, control):
        try:
            step = callback_input.global_step or getattr(trainer, "global_step", 0) or 0
            metrics = {}
            for key, value in (callback_input.logs or {}).items():
                number = numeric(value)
                if number is not None:
                    metrics[str(key)] = number
            evals = {k: v for k, v in metrics.items() if k.startswith(EVAL_PREFIX)}
            if metrics and len(evals) == len(metrics):
                mirror("eval", step, evals)
                return
            mirror("train", step, metrics)
            if evals:
                mirror("eval", step, evals)
        except Exception as err:
            warn(f"no progress line for a step ({type(err).__name__}: {err}); training goes on")


def install_hook():
    """Wraps `RayPPOTrainer.__init__` so that every trainer built in this process (subclasses
    too) gets a `Progress` callback. Idempotent; True when the hook is in place."""
    if _callbacks_missing is not None:
        warn(f"skyrl.train.utils.callbacks does not import ({_callbacks_missing}): no progress lines")
        return False
    try:
        from skyrl.train.trainer import RayPPOTrainer
    except Exception as err:
        warn(f"skyrl.train.trainer does not import here ({err}): no progress lines from this process")
        return False
    init = RayPPOTrainer.__init__
    if getattr(init, HOOKED, False):
        return True

    @functools.wraps(init)
    def __init__(self, *args, **kwargs):
        init(self, *args, **kwargs)
        try:
            self.add_callback(Progress())
        except Exception as err:
            warn(f"cannot register the progress callback ({type(err).__name__}: {err})")

    setattr(__init__, HOOKED, True)
    RayPPOTrainer.__init__ = __init__
    return True


def hooked_remote(remote):
    """A Ray remote function with `remote`'s options whose body, in the Ray worker, installs the
    hook and then runs `remote`'s own function."""
    import ray

    function = remote._function
    module = function.__module__

    @functools.wraps(function)
    def run(*args, **kwargs):
        # The entry module's import side effects (registered estimators, losses), as when Ray
        # ships the original function by reference.
        importlib.import_module(module)
        install_hook()
        return function(*args, **kwargs)

    options = dict(remote._default_options)
    return ray.remote(**options)(run) if options else ray.remote(run)


def wrap_remote_functions(module):
    """Replaces each module-level Ray remote function of `module` with a hooked one; the names
    replaced. Nothing without `ray`."""
    try:
        from ray.remote_function import RemoteFunction
    except Exception:
        return []
    replaced = []
    for name, value in list(vars(module).items()):
        if isinstance(value, RemoteFunction):
            setattr(module, name, hooked_remote(value))
            replaced.append(name)
    return replaced


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        print("usage: rlctl_progress.py ENTRY_MODULE OVERRIDES...", file=sys.stderr)
        return 2
    entry_name, overrides = argv[0], list(argv[1:])
    entry = importlib.import_module(entry_name)
    wrap_remote_functions(entry)
    # Upstream's main_base hands the run to this module's main() when it is set.
    for arg in overrides:
        if arg.startswith(OVERRIDE_ENTRYPOINT):
            wrap_remote_functions(importlib.import_module(arg[len(OVERRIDE_ENTRYPOINT) :]))
    install_hook()
    sys.argv = [getattr(entry, "__file__", None) or entry_name] + overrides
    rc = entry.main()
    return 0 if rc is None else rc


if __name__ == "__main__":
    sys.exit(main())
