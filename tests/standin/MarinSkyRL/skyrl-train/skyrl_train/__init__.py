"""Stand-in for SkyRL's ``skyrl_train`` package, used only by rlctl's tests (see entrypoints/main_base.py)."""
