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
from .._base.versions import canonical_name
from ..compat import cuda as cuda_facts
from ..compat.catalog import JUDGED, LibraryKind, kind_of
from ..environment import Environment, FrameworkBuild, LibraryCopy, LoadedLibrary, Pin, State
from .forward import user_mode_covers
from .model import Finding, Severity, cite, make_finding, parse_version
from .runtime import failed_how, failure_fix
from .stack import probed_for

__all__ = ["copies_loaded", "kind_load", "library_rules"]

COMPONENT = "library"  # the component of every finding here: diagnosis/frameworks.py lets only those it names stop


def kind_load(build: FrameworkBuild, kind: LibraryKind, system: str = "Linux") -> LoadedLibrary | None:
    """The load by which ``build`` gets the copy of ``kind`` it uses: the first it cannot do without, else the first
    its search names (torch preloads the CUDA 12 cuBLAS beside the CUDA 13 one it links); None where it loads none."""
    pattern = kind.windows if system == "Windows" else kind.linux
    loads = [load for load in build.loads if pattern and re.fullmatch(pattern, load.name)]
    return next((load for load in loads if load.required), loads[0] if loads else None)


def copies_loaded(env: Environment, build: FrameworkBuild) -> tuple[LibraryCopy, ...]:
    """The copy of each catalog kind ``build`` loads, as probed: one per kind at most, catalog order."""
    if build.state is not State.FOUND or build.is_cuda_build is False:
        return ()
    found = []
    for kind in JUDGED:
        load = kind_load(build, kind, env.host.system)
        copy = probed_for((c for c in env.libraries if c.kind == kind.key), load) if load is not None else None
        if copy is not None:
            found.append(copy)
    return tuple(found)


def library_rules(env: Environment) -> Iterator[Finding]:
    loaded = {build.name: copies_loaded(env, build) for build in env.frameworks}  # worked out once
    for copy in env.libraries:
        if kind_of(copy.kind) is None:
            continue  # a kind outside the catalog: a snapshot's are refused when it is read
        if copy.state is State.ERROR:
            yield _probe_failed(copy)
        else:
            yield from _driver_for(env, copy, [name for name, copies in loaded.items() if copy in copies])
    for build in env.frameworks:
        copies = loaded[build.name]
        for copy in copies:
            load = kind_load(build, _kind(copy), env.host.system)
            yield from _pin_not_met(env, build, copy, load)
            yield from _cuda_mismatch(build, copy)
        yield from _releases_differ(env, build, copies)


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


def _driver_for(env: Environment, copy: LibraryCopy, users: list[str]) -> Iterator[Finding]:
    """Its own CUDA runtime (linked into it) needs a driver of its CUDA's major, as any CUDA application does
    (``users``: the frameworks that load it)."""
    built = copy.built_for
    driver = env.driver.version
    if built is None or driver is None or user_mode_covers(env, built.value):
        return
    floor = cuda_facts.minimum_driver(built.value, env.host.system)
    have = cuda_facts.driver_tuple(driver)
    need = cuda_facts.driver_tuple(floor[0]) if floor else None
    if floor is None or have is None or need is None or have >= need:
        return
    used = bool(users) or _reached(env, copy)
    yield make_finding(
        "library-driver-too-old",
        Severity.ERROR if used else Severity.WARNING,
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


def _reached(env: Environment, copy: LibraryCopy) -> bool:
    """Whether a plain dlopen of one of its names gives this copy (what a test without a framework gets)."""
    return any(
        r.context == "process" and r.name in copy.names and (r.loaded or r.predicted) in (copy.path, copy.real_path)
        for r in env.resolutions
    )


def _pin(build: FrameworkBuild, kind: LibraryKind) -> tuple[Pin, SpecifierSet] | None:
    for pin in build.pins:
        if re.fullmatch(kind.distributions, canonical_name(pin.package)):
            try:
                return pin, SpecifierSet(pin.specifier)
            except InvalidSpecifier:
                return None
    return None


def _at_precision(spec: SpecifierSet, version: str) -> SpecifierSet:
    """``spec`` with each version cut to as many parts as ``version`` has: a library answers three ("12.9.3"), its
    wheel's version has four ("==12.9.3.13"), and the fourth is the wheel's, not the library's."""
    parts = version.count(".") + 1
    cut = []
    for item in spec:
        release = item.version.removesuffix(".*").split(".")
        wildcard = item.version.endswith(".*")
        if len(release) > parts and not wildcard and item.operator in ("==", ">=", "<=", "~=", "!="):
            cut.append(f"{item.operator}{'.'.join(release[:parts])}")
        else:
            cut.append(str(item))
    try:
        return SpecifierSet(",".join(cut))
    except InvalidSpecifier:  # pragma: no cover - cut from a valid one
        return spec


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
    spec = _at_precision(spec, copy.version)
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


def _releases_differ(env: Environment, build: FrameworkBuild, copies: tuple[LibraryCopy, ...]) -> Iterator[Finding]:
    """Two kinds that must be of one release (cuBLAS and the cuBLASLt it calls), loaded by one framework from two."""
    by_kind = {copy.kind: copy for copy in copies}
    for copy in copies:
        kind = _kind(copy)
        partner_key, source = kind.same_release
        partner = by_kind.get(partner_key)
        if partner is None or kind.key > partner_key or None in (copy.version, partner.version):
            continue  # each pair once, and only where both versions were read
        if copy.version == partner.version:
            continue
        other = _kind(partner)
        loads = [kind_load(build, k, env.host.system) for k in (kind, other)]
        required = all(load is not None and load.required for load in loads)
        who = f"{phrases.framework(build.name)} {build.version or ''}".strip()
        yield make_finding(
            "library-release-mismatch",
            Severity.ERROR,
            COMPONENT,
            f"{who} loads {kind.display} {copy.version} with {other.display} {partner.version}: {kind.display} needs "
            f"the {other.display} of its own release",
            [f"{c.path}: {_kind(c).version_call} answered {c.version}" for c in (copy, partner)] + [cite(source)],
            f"give {phrases.framework(build.name)} {kind.display} and {other.display} of one release: reinstall the "
            "wheel that ships both (pip install --force-reinstall --no-deps), and take any other copy of either off "
            "LD_LIBRARY_PATH and out of the ldconfig cache",
            (copy.path, partner.path),
            frameworks=(build.name,) if required else (),
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
