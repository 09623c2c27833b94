#!/usr/bin/env bash
# Installs what the test suite needs on a fresh Debian 12 machine, and nothing when it is there:
# the linter of rendered scripts, hydra and SkyRL's config files, ray, and wandb. The real SLURM
# cluster's packages are installed by tests/cluster/up.sh, which the cluster tests run.
set -euo pipefail

sudo=()
if [ "$(id -u)" -ne 0 ]; then sudo=(sudo); fi

apt_packages=()
command -v shellcheck >/dev/null || apt_packages+=(shellcheck)
command -v python3 >/dev/null || apt_packages+=(python3 python3-pip)
# `rlctl mcp --ssh` is tested through a private sshd on 127.0.0.1.
[ -x /usr/sbin/sshd ] || apt_packages+=(openssh-server)
command -v ssh-keygen >/dev/null || apt_packages+=(openssh-client)
if [ "${#apt_packages[@]}" -gt 0 ]; then
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${apt_packages[@]}"
fi

# Python packages from PyPI: hydra's own parser and SkyRL's config files and validate_cfg (the
# schema oracle, and tests/skyrl_oracle.py, which stubs the GPU stack validate_cfg's modules import
# and needs nothing more), and plain ray (the multi-node tests bring up a real two-node Ray cluster).
pip_install() {
  # Debian's own python refuses pip installs into it (PEP 668); a user-level python does not.
  python3 -m pip install --quiet "$@" || python3 -m pip install --quiet --break-system-packages "$@"
}
python3 -c 'import hydra, omegaconf' 2>/dev/null || pip_install hydra-core omegaconf
python3 -c 'import ray' 2>/dev/null || pip_install ray
# The stand-in trainer logs to W&B as SkyRL does, with the real package in offline mode.
if [ "$(python3 -c 'import importlib.metadata as m; print(m.version("wandb"))' 2>/dev/null)" != 0.31.0 ]; then
  pip_install wandb==0.31.0
fi
# skyrl-train 0.3.1 ships ppo_base_config.yaml and validate_cfg; its dependencies (torch, vllm)
# are not needed.
if [ "$(python3 -c 'import importlib.metadata as m; print(m.version("skyrl-train"))' 2>/dev/null)" != 0.3.1 ]; then
  pip_install --no-deps --ignore-requires-python skyrl-train==0.3.1
fi
# Upstream SkyRL: the `skyrl` 0.4.0 wheel's config (SkyRLTrainConfig, from_cli_overrides,
# validate_cfg) and what importing it needs: skyrl-gym's two env configs (which import pandas)
# and loguru. The GPU stack (torch, vllm) is not needed; Python 3.12 is asked for, 3.11 reads it.
if [ "$(python3 -c 'import importlib.metadata as m; print(m.version("skyrl"))' 2>/dev/null)" != 0.4.0 ]; then
  pip_install --no-deps --ignore-requires-python skyrl==0.4.0 skyrl-gym==0.4.0
fi
python3 -c 'import loguru, pandas' 2>/dev/null || pip_install loguru pandas
# HF's tokenizers library: the teacher gate's tests train real tokenizer.json files with it. Without
# its huggingface_hub dependency (only its hub downloads need it): that would put a real `hf` on
# PATH, which the `stage` tests must not find.
python3 -c 'import tokenizers' 2>/dev/null || pip_install --no-deps tokenizers
# The official MCP Python SDK: its client drives `rlctl mcp` as an agent would.
python3 -c 'import mcp.client.stdio' 2>/dev/null || pip_install mcp
