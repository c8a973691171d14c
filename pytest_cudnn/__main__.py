"""``python -m pytest_cudnn``: the same as the ``pytest-cudnn`` command."""

from .cli import run

run()
