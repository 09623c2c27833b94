#!/usr/bin/env bash
# Installs what the test suite needs on a fresh Debian 12 machine, and nothing when it is there:
# the linter of rendered scripts (every one is checked) and hydra-core (hydra's own parser
# reads every rendered override back).
set -euo pipefail

sudo=()
if [ "$(id -u)" -ne 0 ]; then sudo=(sudo); fi

apt_packages=()
command -v shellcheck >/dev/null || apt_packages+=(shellcheck)
command -v python3 >/dev/null || apt_packages+=(python3 python3-pip)
if [ "${#apt_packages[@]}" -gt 0 ]; then
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${apt_packages[@]}"
fi

if ! python3 -c 'import hydra' 2>/dev/null; then
  # Debian's own python refuses pip installs into it (PEP 668); a user-level python does not.
  python3 -m pip install --quiet hydra-core ||
    python3 -m pip install --quiet --break-system-packages hydra-core
fi
