"""The catalog's further kinds (compat/catalog.py: NCCL): the copy each framework loads, and the rules on it.

A framework's copy of a kind is the one its own search gives it (its loads), matched to the copy the probe asked
(its version by its own call, the CUDA it was built for read from its file). The rules:

* ``library-probe-failed``: a copy could not be loaded or asked;
* ``library-pin-not-met``: the copy a framework loads is not what its METADATA pins (NVIDIA's wheels of one kind
  for two CUDA majors write one file: pytorch/pytorch#186591, #119932). Older than every version the pin allows is
  an error (its symbols are missing: a framework that links it cannot even be imported); newer, a warning;
* ``library-cuda-mismatch``: it was built for another CUDA major than the framework (the same shared file);
* ``library-driver-too-old``: the driver is older than the CUDA it was built for, so it cannot start at all.

Findings about a copy name the frameworks they stop (``Finding.frameworks``); a copy that only collectives use stops
none, and ``requires_<kind>`` fails on the errors about its copy. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from .. import phrases
from ..compat import cuda as cuda_facts
from ..compat.catalog import JUDGED, LibraryKind, kind_of
from ..environment import Environment, FrameworkBuild, LibraryCopy, LoadedLibrary, Pin, State
from ..versions import canonical_name
from .forward import user_mode_covers
from .model import Finding, Severity, cite, make_finding, parse_version
from .runtime import failed_how, failure_fix

__all__ = ["copies_loaded", "kind_load", "library_rules"]

COMPONENT = "library"  # the component of every finding here: diagnosis/frameworks.py lets only those it names stop


def kind_load(build: FrameworkBuild, kind: LibraryKind, system: str = "Linux") -> LoadedLibrary | None:
    """The load by which ``build`` gets a copy of ``kind`` (the first its search names), or None."""
    pattern = kind.windows if system == "Windows" else kind.linux
    return next((load for load in build.loads if pattern and re.fullmatch(pattern, load.name)), None)


def _copy(env: Environment, kind: LibraryKind, load: LoadedLibrary) -> LibraryCopy | None:
    if load.path is None:
        return None
    folder, _, name = load.path.rpartition("/")
    return next(
        (c for c in env.libraries if c.kind == kind.key
         and (load.path in (c.path, c.real_path) or (c.path.rpartition("/")[0] == folder and name in c.names))),
        None,
    )  # fmt: skip


def copies_loaded(env: Environment, build: FrameworkBuild) -> tuple[LibraryCopy, ...]:
    """The copy of each catalog kind ``build`` loads, as probed: one per kind at most, catalog order."""
    if build.state is not State.FOUND or build.is_cuda_build is False:
        return ()
    found = []
    for kind in JUDGED:
        load = kind_load(build, kind, env.host.system)
        copy = _copy(env, kind, load) if load is not None else None
        if copy is not None:
            found.append(copy)
    return tuple(found)


def library_rules(env: Environment) -> Iterator[Finding]:
    for copy in env.libraries:
        if kind_of(copy.kind) is None:
            continue  # a kind outside the catalog: a snapshot's are refused when it is read
        if copy.state is State.ERROR:
            yield _probe_failed(copy)
        else:
            yield from _driver_for(env, copy)
    for build in env.frameworks:
        for copy in copies_loaded(env, build):
            load = kind_load(build, _kind(copy), env.host.system)
            yield from _pin_not_met(env, build, copy, load)
            yield from _cuda_mismatch(build, copy)


def _kind(copy: LibraryCopy) -> LibraryKind:
    """The catalog's row for a copy the rules judge (library_rules and copies_loaded pass only those)."""
    kind = kind_of(copy.kind)
    assert kind is not None
    return kind


def label(copy: LibraryCopy) -> str:
    """'NCCL 2.32.3 (built for CUDA 12.9)', or 'NCCL' where the version was not read."""
    found = kind_of(copy.kind)
    name = found.display if found is not None else copy.kind
    built = f" (built for CUDA {copy.built_for.value})" if copy.built_for is not None else ""
    return f"{name} {copy.version}{built}" if copy.version else name


def _probe_failed(copy: LibraryCopy) -> Finding:
    kind = _kind(copy)
    return make_finding(
        "library-probe-failed",
        Severity.WARNING,
        COMPONENT,
        f"{kind.display} at {copy.path} {failed_how(copy.failure)}",
        [copy.reason or "no reason given"],
        failure_fix(copy.failure, copy.reason, kind.display),
        (copy.path,),
    )


def _driver_for(env: Environment, copy: LibraryCopy) -> Iterator[Finding]:
    """Its own CUDA runtime (linked into it) needs a driver of its CUDA's major, as any CUDA application does."""
    built = copy.built_for
    driver = env.driver.version
    if built is None or driver is None or user_mode_covers(env, built.value):
        return
    floor = cuda_facts.minimum_driver(built.value, env.host.system)
    have = cuda_facts.driver_tuple(driver)
    need = cuda_facts.driver_tuple(floor[0]) if floor else None
    if floor is None or have is None or need is None or have >= need:
        return
    users = [b.name for b in env.frameworks if copy in copies_loaded(env, b)]
    yield make_finding(
        "library-driver-too-old",
        Severity.ERROR,
        COMPONENT,
        f"the NVIDIA driver {driver} is too old for {label(copy)}: it cannot start",
        [
            f"{copy.path}: {built.how}",
            f"driver {driver} is below {floor[0]}, {floor[1].rule}",
            cite(floor[1].source),
            *(f"loaded by {phrases.framework(name)}" for name in users),
        ],
        f"install a driver >= {floor[0]}, or a {_kind(copy).display} built for the CUDA the driver supports "
        f"({env.driver.cuda_version or 'see nvidia-smi'})",
        (copy.path,),
    )


def _pin(build: FrameworkBuild, kind: LibraryKind) -> tuple[Pin, SpecifierSet] | None:
    for pin in build.pins:
        if re.fullmatch(kind.distributions, canonical_name(pin.package)):
            try:
                return pin, SpecifierSet(pin.specifier)
            except InvalidSpecifier:
                return None
    return None


def _older_than_allowed(version: str, spec: SpecifierSet) -> bool:
    """Whether ``version`` is below a lower bound of ``spec`` (==, ===, ~=, >=, >): too old to hold what it needs."""
    have = parse_version(version)
    bounds = [parse_version(s.version.removesuffix(".*")) for s in spec if s.operator in ("==", "===", "~=", ">=", ">")]
    return have is not None and any(bound is not None and have < bound for bound in bounds)


def _pin_not_met(
    env: Environment, build: FrameworkBuild, copy: LibraryCopy, load: LoadedLibrary | None
) -> Iterator[Finding]:
    kind = _kind(copy)
    pinned = _pin(build, kind)
    if pinned is None or copy.version is None:
        return
    pin, spec = pinned
    if spec.contains(copy.version, prereleases=True):
        return
    older = _older_than_allowed(copy.version, spec)
    required = load is not None and load.required
    who = f"{phrases.framework(build.name)} {build.version or ''}".strip()
    effect = (
        "its symbols are missing: `import` fails with 'undefined symbol'" if older and required
        else "its symbols are missing: collectives fail with 'undefined symbol'" if older
        else "not the build it was tested with"
    )  # fmt: skip
    yield make_finding(
        "library-pin-not-met",
        Severity.ERROR if older else Severity.WARNING,
        COMPONENT,
        f"{who} loads {label(copy)}, not the {kind.display} it pins ({pin.package}{pin.specifier}): {effect}",
        [
            f"{copy.path}: {kind.version_call} answered {copy.version_raw} ({copy.version})",
            f"{build.distribution or build.name}'s METADATA: Requires-Dist: {pin.requirement}",
            *_writers(env, copy),
            *([cite(kind.shared_file)] if kind.shared_file else []),
        ],
        _reinstall(env, kind, pin, spec),
        (copy.path,),
        requirement=f"{pin.package}{pin.specifier}",
        frameworks=(build.name,) if older and required else (),
    )


def _cuda_mismatch(build: FrameworkBuild, copy: LibraryCopy) -> Iterator[Finding]:
    built, own = copy.built_for, build.cuda
    have = parse_version(built.value) if built is not None else None
    want = parse_version(own.value) if own is not None else None
    if built is None or own is None or have is None or want is None or have.major == want.major:
        return
    kind = _kind(copy)
    who = f"{phrases.framework(build.name)} {build.version or ''}".strip()
    yield make_finding(
        "library-cuda-mismatch",
        Severity.WARNING,
        COMPONENT,
        f"{who} (built for CUDA {own.value}) loads {label(copy)}: the {kind.display} wheels of both CUDA majors "
        "write one file",
        [
            f"{copy.path}: {built.how}",
            f"{own.source}: {own.how}",
            *([cite(kind.shared_file)] if kind.shared_file else []),
        ],
        f"keep one CUDA major's {kind.display} wheel per environment: pip install --force-reinstall --no-deps "
        f"the one {phrases.framework(build.name)} pins, or install the frameworks in separate venvs",
        (copy.path,),
    )


def _writers(env: Environment, copy: LibraryCopy) -> list[str]:
    """Which installed distributions list the file, and whose RECORD it matches."""
    file = next((f for f in env.wheel_files if f.path in (copy.path, copy.real_path)), None)
    if file is None:
        return []
    said = []
    for entry in file.listed_by:
        matched = file.written_by(entry)
        how = "wrote it last (its RECORD matches)" if matched else "lists it too" if matched is False else "lists it"
        said.append(f"{entry.distribution} {entry.version} {how}")
    return said


def _reinstall(env: Environment, kind: LibraryKind, pin: Pin, spec: SpecifierSet) -> str:
    others = sorted({d.name for d in env.distributions if canonical_name(d.name) != canonical_name(pin.package)
                     and re.fullmatch(kind.distributions, canonical_name(d.name))})  # fmt: skip
    step = f"pip install --force-reinstall --no-deps '{pin.package}{spec}'"
    if others:
        return f"{step} after the others ({', '.join(others)} writes the same file), or separate venvs"
    return step
