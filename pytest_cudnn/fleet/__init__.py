"""``pytest-cudnn fleet``: the ``--gpu-report`` files of several GPU runners merged into one view.

:mod:`.reading` reads and checks one report into a :class:`~.model.Runner` (or a :class:`~.model.Problem` naming
why it cannot be used), :mod:`.compare` finds what differs between runners, :mod:`.render` writes the view as
text, Markdown or JSON. Pure package apart from reading the reports: nothing a report names is ever loaded.
"""

from __future__ import annotations

from .compare import compare, read_fleet
from .model import SCHEMA, SCHEMA_VERSION, Fleet, Problem, Runner
from .reading import MAX_REPORT_BYTES, FleetUsageError, name_runners, read_runner
from .render import fleet_json, fleet_markdown, fleet_text

__all__ = [
    "MAX_REPORT_BYTES",
    "SCHEMA",
    "SCHEMA_VERSION",
    "Fleet",
    "FleetUsageError",
    "Problem",
    "Runner",
    "compare",
    "fleet_json",
    "fleet_markdown",
    "fleet_text",
    "name_runners",
    "read_fleet",
    "read_runner",
]
