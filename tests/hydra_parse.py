"""Parses hydra override arguments with hydra's own parser, as SkyRL's entrypoint would.

Reads NUL-separated overrides on stdin; prints one JSON line per override: [key, value].
Used by tests/quoting.rs to prove rlctl's rendered text means what the preset says.
"""
import json
import sys

from hydra.core.override_parser.overrides_parser import OverridesParser

parser = OverridesParser.create()
for arg in sys.stdin.buffer.read().decode("utf-8").split("\0")[:-1]:
    override = parser.parse_override(arg)
    print(json.dumps([override.key_or_group, override.value()]))
