"""Writes a policy's `lora_adapter/` as SkyRL 0.4.0's FSDP strategy does at the end of its
`save_checkpoint`: the oracle of the LoRA part of rlctl's whole-checkpoint rule.

    python3 tests/lora_adapter_oracle.py <model-folder>

WHAT IS REAL. `FSDPStrategy._save_lora_adapters`, taken as it is from the source of the installed
wheel's `backends/skyrl_train/distributed/fsdp_strategy.py` (parsed with `ast`, not imported: the
module imports torch at import time): the folder and file names, the order and what rank 0 writes.

WHAT IS STUBBED. torch's parts: `safetensors.torch.save_file` writes a few bytes in place of the
tensors; `layered_summon_lora_params` returns no tensors; `dist.barrier` does nothing; `io` is
the local-file calls it makes for a local path; the PEFT model's `peft_config` is a dataclass
with the fields the function reads.
"""

import ast
import dataclasses
import enum
import importlib.util
import json
import os
import sys
import types


def real_function():
    root = importlib.util.find_spec("skyrl").submodule_search_locations[0]
    path = os.path.join(root, "backends", "skyrl_train", "distributed", "fsdp_strategy.py")
    tree = ast.parse(open(path).read(), path)
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "FSDPStrategy")
    fn = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "_save_lora_adapters")
    namespace = {
        "os": os,
        "json": json,
        "io": types.SimpleNamespace(makedirs=os.makedirs, open_file=open),
        "dist": types.SimpleNamespace(barrier=lambda: None),
    }
    exec(compile(ast.Module(body=[fn], type_ignores=[]), path, "exec"), namespace)
    return namespace["_save_lora_adapters"]


def stub_modules():
    def save_file(tensors, filename):
        with open(filename, "wb") as f:
            f.write(b"safetensors stand-in")

    sys.modules["safetensors"] = types.ModuleType("safetensors")
    sys.modules["safetensors.torch"] = types.SimpleNamespace(save_file=save_file)
    utils = "skyrl.backends.skyrl_train.distributed.fsdp_utils"
    sys.modules[utils] = types.SimpleNamespace(layered_summon_lora_params=lambda model: {})


class Kind(enum.Enum):
    CAUSAL_LM = "CAUSAL_LM"
    LORA = "LORA"


@dataclasses.dataclass
class PeftConfig:
    task_type: Kind = Kind.CAUSAL_LM
    peft_type: Kind = Kind.LORA
    target_modules: frozenset = frozenset({"q_proj", "v_proj"})
    r: int = 8
    lora_alpha: int = 16


def main(ckpt_dir):
    stub_modules()
    strategy = types.SimpleNamespace(is_rank_0=lambda: True, print=lambda *a: None)
    model = types.SimpleNamespace(peft_config={"default": PeftConfig()})
    real_function()(strategy, model, ckpt_dir)


if __name__ == "__main__":
    main(sys.argv[1])
