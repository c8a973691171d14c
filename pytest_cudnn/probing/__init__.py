"""Probe this host, paying for the probe's child while its modules import.

The plugin's header and the doctor call :func:`probe_host`: it starts the probe's child interpreter (light:
:mod:`.native.isolation` only) before importing the probe and everything it imports, so the child's start-up
overlaps those imports, and closes the child on every path out, an import that failed included.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from ..native.isolation import Child, start_child

if TYPE_CHECKING:
    from ..environment import Environment
    from ..probe.facts import FileFacts

__all__ = ["probe_host"]


def probe_host(
    environ: Mapping[str, str],
    python: str | None,
    job_timeout: float,
    total_timeout: float | None = None,
    facts: FileFacts | None = None,
    meanwhile: Callable[[], object] | None = None,
) -> Environment:
    """:func:`~pytest_cudnn.probing.host.probe_environment` of ``environ`` with ``python`` as the child's interpreter;
    ``total_timeout`` defaults to the probe's own; ``facts``: what files said in earlier runs (None: read all);
    ``meanwhile``: work to do while the probe's child answers."""
    child = start_child(environ, python)
    try:
        from .host import ProbeOptions, probe_environment

        bounds = {"job_timeout": job_timeout}
        if total_timeout is not None:
            bounds["total_timeout"] = total_timeout
        return probe_environment(
            ProbeOptions(python=python, **bounds), environ=environ, child=child, facts=facts, meanwhile=meanwhile
        )
    finally:
        if isinstance(child, Child):
            child.close()  # a second close is nothing: probe_environment closes it too
