"""STAND-IN for upstream SkyRL's `skyrl` package (NovaSky-AI/SkyRL), used only by rlctl's tests.
tests/standin/upstream_checkout.py copies this tree and the real wheel's `skyrl/train/config/`
into a folder laid out as an upstream checkout."""
