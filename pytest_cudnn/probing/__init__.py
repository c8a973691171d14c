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
    environ: Mapping[str, str] | None = None,
    python: str | None = None,
    job_timeout: float = 10.0,
    total_timeout: float | None = None,
    facts: FileFacts | None = None,
    meanwhile: Callable[[], object] | None = None,
) -> Environment:
    """This host's GPU stack, read into an :class:`~pytest_cudnn.environment.Environment` (judge it with
    :func:`pytest_cudnn.judge_environment`): every vendor library asked in a child process bounded by
    ``job_timeout`` seconds a call and ``total_timeout`` in all (default: the probe's own), none loaded here, no
    framework imported. ``environ``: the variables it reads (default ``os.environ``); ``python``: the child's
    interpreter (default this one); ``facts``: what files said in earlier runs (None: read all); ``meanwhile``: work
    to do while the child answers. Never raises for anything a library or the host does."""
    if environ is None:
        import os

        environ = os.environ
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
