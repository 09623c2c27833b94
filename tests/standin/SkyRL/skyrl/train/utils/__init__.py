"""STAND-IN for upstream's `skyrl.train.utils` package, whose real `__init__` imports torch and
Ray through `utils.py`. tests/standin/upstream_checkout.py copies the wheel's REAL
`callbacks.py` and `tracking.py` in beside this file."""
