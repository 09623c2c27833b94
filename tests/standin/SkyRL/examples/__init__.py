"""STAND-IN: see skyrl/__init__.py."""
