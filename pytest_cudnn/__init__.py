"""pytest-cudnn: the NVIDIA GPU stack as an asserted, diagnosed part of a test suite."""

from __future__ import annotations

__version__ = "0.1.0"
