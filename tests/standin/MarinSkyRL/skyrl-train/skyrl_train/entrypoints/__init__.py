"""Stand-in for ``skyrl_train.entrypoints``, used only by rlctl's tests."""
