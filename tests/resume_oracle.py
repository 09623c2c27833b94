"""SkyRL's own check of a checkpoint folder before `resume_mode=latest` loads it: the oracle of
rlctl's `[resume-pointer]` preflight check.

    python3 tests/resume_oracle.py < cases.json
        Reads a JSON list of cases, {"name": ..., "ckpt_path": ..., "ckpt_interval": N}, and for
        each prints one JSON line {"name": ..., "ok": true|false, "error": "<type>: <message>"}:
        whether the trainer of each flavour (skyrl-train 0.3.1 and skyrl 0.4.0) gets past the
        folder's checks to the load itself. The two flavours must agree; the script fails if not.

WHAT IS REAL. `validate_consistency_for_latest_checkpoint`, `list_checkpoint_dirs`,
`extract_step_from_path` and `GLOBAL_STEP_PREFIX` are taken, as they are, from the source of
each flavour's installed `trainer_utils.py` (parsed with `ast`, not imported: the module imports
torch, ray and the whole trainer at import time, none of which these functions use).

WHAT IS STUBBED. `io` (fsspec, absent here) by the local-file calls it makes for a local path,
and `logger`. The steps of `RayPPOTrainer.load_checkpoints` around the validation (read the
pointer file with `int(f.read().strip())`, validate, then `io.exists(checkpoint_path)` or
FileNotFoundError) are the few lines below, copied from both flavours' trainer.py.
"""

import ast
import importlib.util
import json
import os
import sys
import types

FUNCTIONS = ("validate_consistency_for_latest_checkpoint", "list_checkpoint_dirs", "extract_step_from_path")

LocalIo = types.SimpleNamespace(exists=os.path.exists, isdir=os.path.isdir, list_dir=os.listdir)
Logger = types.SimpleNamespace(info=lambda *a, **k: None, warning=lambda *a, **k: None)


def flavour(module):
    """The real functions of `module`'s source, run against local files."""
    path = importlib.util.find_spec(module.split(".")[0]).submodule_search_locations[0]
    path = os.path.join(os.path.dirname(path), *module.split(".")) + ".py"
    tree = ast.parse(open(path).read(), path)
    keep = [
        node
        for node in tree.body
        if (isinstance(node, ast.FunctionDef) and node.name in FUNCTIONS)
        or (isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "GLOBAL_STEP_PREFIX" for t in node.targets))
    ]
    assert len(keep) == len(FUNCTIONS) + 1, f"{path}: not every function was found"
    namespace = {"os": os, "io": LocalIo, "logger": Logger}
    exec(compile(ast.Module(body=keep, type_ignores=[]), path, "exec"), namespace)
    return namespace


def load_checks(fns, ckpt_path, ckpt_interval):
    """`load_checkpoints` with `resume_mode=latest`, up to the load."""
    latest_checkpoint_file = os.path.join(ckpt_path, "latest_ckpt_global_step.txt")
    if not LocalIo.exists(latest_checkpoint_file):
        return
    with open(latest_checkpoint_file, "r") as f:
        ckpt_iteration = int(f.read().strip())
    checkpoint_path = os.path.join(ckpt_path, f"{fns['GLOBAL_STEP_PREFIX']}{ckpt_iteration}")
    fns["validate_consistency_for_latest_checkpoint"](
        ckpt_path, ckpt_iteration, checkpoint_path, latest_checkpoint_file, ckpt_interval
    )
    if not LocalIo.exists(str(checkpoint_path)):
        raise FileNotFoundError(f"Checkpoint path not found: {checkpoint_path}")


def verdict(fns, case):
    try:
        load_checks(fns, case["ckpt_path"], case["ckpt_interval"])
        return None
    except Exception as e:  # noqa: BLE001 - every refusal counts
        return f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"


def main():
    flavours = [flavour("skyrl_train.utils.trainer_utils"), flavour("skyrl.train.utils.trainer_utils")]
    for case in json.load(sys.stdin):
        errors = [verdict(fns, case) for fns in flavours]
        if (errors[0] is None) != (errors[1] is None):
            sys.exit(f"{case['name']}: the flavours disagree: {errors}")
        print(json.dumps({"name": case["name"], "ok": errors[0] is None, "error": errors[0]}), flush=True)


if __name__ == "__main__":
    main()
