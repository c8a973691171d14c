"""``python -m pytest_cudnn``: the same as the ``pytest-cudnn`` command."""

import sys

from .cli import main

sys.exit(main())
