"""Wheels that overwrite each other: the files a framework loads from an nvidia-* wheel folder, judged against the
RECORDs of the distributions that list them (:mod:`pytest_cudnn.probe.wheels` read them).

nvidia-cudnn-cu12 and nvidia-cudnn-cu13 (and NCCL, nvshmem, cuSPARSE, cuRAND ...) write the same paths; pip lets the
last installed win and ``pip check`` compares versions only. A framework that pins one of them then loads the
other's build (measured, issue 21: torch built with cuDNN 9.24 for CUDA 13 loading cuDNN 9.28 built for CUDA 12.9).
One finding per overwritten distribution names the whole set of its files that differ from its RECORD, the copy
each framework really gets (its version and CUDA build, as probed: the cuDNN and runtime rules judge that copy),
and the fix: the reinstall order, or separate venvs when two installed frameworks pin the two builds.
"""

from __future__ import annotations

from collections.abc import Iterator

from .. import phrases
from .._base.versions import canonical_name
from ..environment import CudaRuntime, Cudnn, Environment, FrameworkBuild, RecordEntry, WheelCheck, WheelFile
from .model import Finding, Severity, make_finding
from .stack import load_copy

__all__ = ["matches", "pinned_by", "wheel_rules"]


def matches(file: WheelFile, entry: RecordEntry) -> bool | None:
    """Whether the file on disk is the one ``entry``'s RECORD wrote (:meth:`WheelFile.written_by`)."""
    return file.written_by(entry)


def pinned_by(env: Environment, distribution: str) -> list[FrameworkBuild]:
    """The installed frameworks that pin ``distribution``."""
    wanted = canonical_name(distribution)
    return [b for b in env.frameworks if any(canonical_name(pin.package) == wanted for pin in b.pins)]


def wheel_rules(env: Environment) -> Iterator[Finding]:
    if not env.wheel_files:
        return
    files = {file.path: file for file in env.wheel_files}
    checks = {canonical_name(check.distribution): check for check in env.wheel_checks}
    # distribution -> [(framework, the file it loads, the RECORD lines it matches instead)]
    overwritten: dict[str, list[tuple[FrameworkBuild, WheelFile, list[RecordEntry]]]] = {}
    # Every distribution whose RECORD lists a file a framework loads, and not the file on disk: pinned by that
    # framework directly or through a meta-distribution (torch 2.11+ pins cuda-toolkit[...]), its install is broken.
    # A framework that pins the distribution whose file it is gets what it asked for: not its concern.
    for build in env.frameworks:
        pinned = {canonical_name(pin.package) for pin in build.pins}
        for load in build.loads:
            file = files.get(load.path or "")
            if file is None:
                continue
            for entry in file.listed_by:
                if matches(file, entry) is not False:
                    continue
                instead = [other for other in file.listed_by if other is not entry and matches(file, other)]
                if not any(canonical_name(other.distribution) in pinned for other in instead):
                    overwritten.setdefault(entry.distribution, []).append((build, file, instead))
    for distribution, cases in overwritten.items():
        yield _overwritten(env, distribution, checks.get(canonical_name(distribution)), cases)


def _overwritten(
    env: Environment,
    distribution: str,
    check: WheelCheck | None,
    cases: list[tuple[FrameworkBuild, WheelFile, list[RecordEntry]]],
) -> Finding:
    version = check.version if check else ""
    owners = sorted({entry.distribution for _, _, instead in cases for entry in instead})
    summary = f"{distribution} {version}'s files on disk are not its own".replace(" 's", "'s")
    if check is not None:
        summary += f": {len(check.differing)} of {check.files} differ from its RECORD"
    if owners:
        summary += f", overwritten by {', '.join(owners)}"
    evidence = []
    if check is not None and check.differing:
        more = f" and {len(check.differing) - 12} more" if len(check.differing) > 12 else ""
        shown = ", ".join(check.differing[:12]) + more
        evidence.append(f"{check.record}: these differ on disk from it: {shown}")
    for build, file, instead in cases:
        evidence.append(_loaded_text(env, build, file, distribution, instead))
    evidence.append("pip check compares versions only: it does not see a file another wheel wrote over")
    subjects = [p for build, file, _ in cases for p in (build.location, file.path) if p]
    return make_finding(
        "wheel-files-overwritten",
        Severity.WARNING,
        "framework",
        summary,
        evidence,
        _fix(env, distribution, version, owners, {build.name for build, _, _ in cases}),
        tuple(dict.fromkeys(subjects)),
    )


def _loaded_text(
    env: Environment, build: FrameworkBuild, file: WheelFile, distribution: str, instead: list[RecordEntry]
) -> str:
    """'PyTorch 2.15.0 (pins nvidia-cudnn-cu13) loads <path>, nvidia-cudnn-cu12 9.28.0.50's (size and sha256):
    cuDNN 9.28.0 built for CUDA 12.9'."""
    label = f"{phrases.framework(build.name)} {build.version or '(version unknown)'}"
    how = "size and sha256" if file.sha256 else "size"
    whose = (
        " and ".join(f"{entry.distribution} {entry.version}'s" for entry in instead) + f" ({how} match its RECORD)"
        if instead
        else "a file no installed RECORD lists at this size" + (" and hash" if file.sha256 else "")
    )
    pins = any(canonical_name(pin.package) == canonical_name(distribution) for pin in build.pins)
    text = f"{label}{f' (pins {distribution})' if pins else ''} loads {file.path}: {whose}"
    load = next((load for load in build.loads if load.path == file.path), None)
    copy = load_copy(env, load) if load is not None else None
    if isinstance(copy, Cudnn) and copy.version:
        built = f" built for CUDA {copy.cudart_version}" if copy.cudart_version else ""
        text += f"; it is cuDNN {copy.version}{built}"
    elif isinstance(copy, CudaRuntime) and copy.version:
        text += f"; it is CUDA runtime {copy.version}"
    return text


def _fix(env: Environment, distribution: str, version: str, owners: list[str], loaders: set[str]) -> str:
    """Separate venvs when another installed framework pins the build that overwrote these files; else remove it
    and reinstall. ``loaders``: the frameworks that load the overwritten files."""
    restore = f"pip install --force-reinstall --no-deps {distribution}=={version}" if version else ""
    restore = restore or f"reinstall {distribution}"
    needing = {owner: {b.name for b in pinned_by(env, owner)} - loaders for owner in owners}
    both = [owner for owner, names in needing.items() if names]
    mine = ", ".join(sorted(phrases.framework(name) for name in loaders))
    if both:
        who = ", ".join(sorted({phrases.framework(name) for owner in both for name in needing[owner]}))
        return (
            f"{mine} and {who} need different builds of the same files ({distribution} and {', '.join(both)}): "
            f"install them in separate venvs; in this one, {restore} after the others gives {mine} its own files "
            f"back and takes {who}'s away"
        )
    remove = f"pip uninstall {' '.join(owners)}, then " if owners else ""
    return f"{remove}{restore} (pip lets the wheel installed last win)"
