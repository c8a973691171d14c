"""Rules about the dynamic loader's picks: shadowed copies, disagreements, relative search entries."""

from __future__ import annotations

from collections.abc import Iterator

from .. import phrases
from ..environment import (
    Environment,
)
from .model import (
    Finding,
    Severity,
    make_finding,
)
from .stack import (
    winning_candidate,
)

# Loader -------------------------------------------------------------------------------------------


def loader_rules(env: Environment) -> Iterator[Finding]:
    versions: dict[str, str] = {}
    for copy in list(env.cuda_runtimes) + list(env.cudnns):
        if copy.version:
            versions[copy.path] = copy.version
            if copy.real_path:
                versions[copy.real_path] = copy.version
    for resolution in env.resolutions:
        winner = winning_candidate(resolution)
        if resolution.loaded and resolution.predicted and resolution.loaded != resolution.predicted:
            yield make_finding(
                "loader-disagrees",
                Severity.WARNING,
                "loader",
                f"for {resolution.name} the loader loaded {resolution.loaded}, not {resolution.predicted}",
                ("the search rules (LD_LIBRARY_PATH, ldconfig cache, default folders) predicted the other copy",),
                "check /etc/ld.so.conf and run ldconfig; a stale cache or an RPATH can cause this",
            )
        if winner is None or resolution.context != "process":
            continue
        ranked = [c for c in resolution.candidates if c.loader_rank is not None and c.real_path != winner.real_path]
        winner_version = versions.get(winner.path) or versions.get(winner.real_path)
        others = [
            (c, versions.get(c.path) or versions.get(c.real_path))
            for c in ranked
            if (versions.get(c.path) or versions.get(c.real_path)) not in (None, winner_version)
        ]
        if others:
            yield make_finding(
                "library-shadowed",
                Severity.WARNING,
                "loader",
                f"{len(others) + 1} versions of {resolution.name} are on the loader path; "
                f"{winner_version} at {winner.path} wins",
                [f"wins: {winner.path} (via {phrases.via(winner.via)}), searched first"]
                + [f"shadowed: {c.path} {v} (via {phrases.via(c.via)})" for c, v in others],
                "remove the copies you do not want from the loader path, so one version remains",
            )
    for note in env.notes:
        if note.startswith("LD_LIBRARY_PATH entry"):
            yield make_finding(
                "ld-library-path-relative",
                Severity.WARNING,
                "environment",
                "LD_LIBRARY_PATH has relative or empty entries: the loader searches them from the current folder",
                (note, f"LD_LIBRARY_PATH={env.variables.get('LD_LIBRARY_PATH', '')}"),
                "remove empty entries (a leading, trailing or doubled ':') and make every entry absolute",
            )
            break
