"""Upstream SkyRL's own answer about its config keys, from the installed `skyrl` (0.4.0).

Imports the real `skyrl/train/config/config.py` (and skyrl-gym's config dataclasses, which the
wheel ships in its `skyrl-gym/` folder), with one stand-in: the module holding
`_uses_lora_weight_sync` (SkyRLTrainConfig.__post_init__ imports it; its own imports need the
GPU stack). The stand-in answers False, as the real function does for the default config (LoRA
rank 0), and the module whose helpers DeltaWeightSyncConfig.__post_init__ calls (it needs Python
3.12).

    python3 crates/rlctl-grammar/tests/skyrl_upstream_schema_oracle.py locate
        prints the folder holding skyrl/ (the site-packages rlctl reads as a checkout)
    python3 crates/rlctl-grammar/tests/skyrl_upstream_schema_oracle.py flatten
        prints `dataclasses.asdict(SkyRLTrainConfig())` flattened to `key=default` lines, values
        as json.dumps prints them, a non-empty dict flattened further, an empty one `{}`
    python3 crates/rlctl-grammar/tests/skyrl_upstream_schema_oracle.py accepts < overrides
        for each line of space-separated `key=value` overrides, `ok` when
        `SkyRLTrainConfig.from_cli_overrides(line.split(" "))` accepts them, else `err <message>`
"""

import dataclasses
import json
import os
import sys
import types

import skyrl

SITE = os.path.dirname(os.path.dirname(skyrl.__file__))
sys.path.insert(0, os.path.join(SITE, "skyrl-gym"))

stand_in = types.ModuleType("skyrl.backends.skyrl_train.inference_servers.utils")
stand_in._uses_lora_weight_sync = lambda cfg: False
sys.modules[stand_in.__name__] = stand_in
# DeltaWeightSyncConfig.__post_init__ fills two folders from these (the real module needs
# Python 3.12); the stand-ins give a path under the sync folder, as the real ones do.
delta = types.ModuleType("skyrl.backends.skyrl_train.weight_sync.delta.checkpoint")
delta._default_local_checkpoint_dir = lambda sync_dir: "/tmp/skyrl_delta_checkpoints/stand-in"
delta._default_publish_staging_dir = lambda sync_dir: "/tmp/skyrl_delta_publish_staging/stand-in"
sys.modules[delta.__name__] = delta

from skyrl.train.config.config import SkyRLTrainConfig  # noqa: E402


def flatten(value, prefix, out):
    for key, v in value.items():
        path = f"{prefix}{key}"
        if isinstance(v, dict) and v:
            flatten(v, path + ".", out)
        else:
            out.append(f"{path}={json.dumps(v)}")


def main():
    mode = sys.argv[1]
    if mode == "locate":
        print(SITE)
    elif mode == "flatten":
        out = []
        flatten(dataclasses.asdict(SkyRLTrainConfig()), "", out)
        print("\n".join(out))
    elif mode == "accepts":
        for line in sys.stdin.read().splitlines():
            try:
                SkyRLTrainConfig.from_cli_overrides(line.split(" "))
                print("ok")
            except Exception as e:  # the verdict is the message, whatever the class
                print("err " + " ".join(f"{type(e).__name__}: {e}".split()))
    else:
        sys.exit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
