"""Loads the GPU stack's stand-ins (gpu_stack_standin.py, which says what they are and why) into
every Python started with this folder on its path: the test venv of `rlctl check --deep`."""
import gpu_stack_standin

gpu_stack_standin.install(permissive=True)
