"""Fixes that resolve: the pip requirement after which a finding is gone, checked against what the frameworks
installed here demand of the same distribution.

A requirement such as ``nvidia-cudnn-cu12<9.11`` fixes a cuDNN 9.28 on a V100 only if the frameworks that load that
cuDNN can live with it: their own pins on the distribution (``FrameworkBuild.pins``; for TensorFlow, its
``[and-cuda]`` pins), and the cuDNN rule of their build (a framework built with cuDNN M.m needs a loaded cuDNN of
major M and minor at least m: TensorFlow's and PyTorch's rules, "tf-cudnn-rule" and "torch-cudnn-rule"). Where no
release can meet them all, the fix says so and names who stands in the way, and the finding carries no requirement.

Pure: an :class:`~pytest_cudnn.environment.Environment` in, words and requirement strings out.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from packaging.version import Version

from .. import phrases
from .._base.versions import canonical_name, specifier_set
from ..environment import Cudnn, Distribution, Environment, State
from ..frameworks.base import entry_of as framework
from .model import major, major_minor

__all__ = ["Demand", "PipFix", "demands_on", "owning_distribution", "pip_fix", "satisfiable"]


@dataclass(frozen=True)
class Demand:
    """What one framework requires of a distribution: ``who`` ("TensorFlow 2.20.0") and a specifier."""

    who: str
    specifier: str  # ">=9.3.0.75,<10.0"
    why: str  # "pins", "was built with cuDNN 9.3"


@dataclass(frozen=True)
class PipFix:
    """A requirement and whether the frameworks installed allow it: ``blocking`` names the demands no release
    meets together with it (empty: ``pip install requirement`` resolves the finding)."""

    requirement: str  # "nvidia-cudnn-cu12<9.11"
    blocking: tuple[Demand, ...]

    @property
    def resolves(self) -> bool:
        return not self.blocking


def owning_distribution(env: Environment, copy: Cudnn) -> Distribution | None:
    """The installed nvidia-cudnn wheel whose folder holds ``copy`` (``<site>/nvidia/cudnn/lib/libcudnn.so.9`` and
    nvidia-cudnn-cu12 in ``<site>``); where two are installed there, the one of the copy's CUDA major, else of its
    version. None for a copy outside a wheel folder."""
    path = copy.path.replace("\\", "/")
    site, found, _ = path.partition("/nvidia/")
    if not found:
        return None
    wheels = [
        d
        for d in env.distributions
        if canonical_name(d.name).startswith("nvidia-cudnn-cu") and d.location.rstrip("/\\") == site
    ]
    cuda = major(copy.cudart_version)
    for wheel in wheels:
        if cuda is not None and canonical_name(wheel.name) == f"nvidia-cudnn-cu{cuda}":
            return wheel
    for wheel in wheels:
        if copy.version and wheel.version.startswith(copy.version):
            return wheel
    return wheels[0] if len(wheels) == 1 else None


def demands_on(env: Environment, package: str, cudnn: bool = False) -> list[Demand]:
    """Every framework's demand on distribution ``package``: its pins, and with ``cudnn`` its build's cuDNN rule
    (major equal, minor at least the build's)."""
    name = canonical_name(package)
    demands: list[Demand] = []
    pinned_by = set()
    for build in env.frameworks:
        if build.state is not State.FOUND:
            continue
        who = f"{phrases.framework(build.name)} {build.version or ''}".strip()
        for pin in build.pins:
            if canonical_name(pin.package) == name and _valid(pin.specifier):
                demands.append(Demand(who, pin.specifier, "pins"))
                pinned_by.add(build.name)
            for wheel, spec in _through_meta_package(pin.package, pin.specifier):
                if wheel == name:  # torch >=2.11 pins cuda-toolkit[cudart,...]==X, which pins the runtime wheel
                    demands.append(Demand(who, spec, "pins"))
                    pinned_by.add(build.name)
        entry = framework(build.name)
        table = entry.table_pins if entry is not None and build.is_cuda_build is not False else None
        if table is not None and build.name not in pinned_by and build.version:  # where its METADATA does not say
            demands += [
                Demand(who, spec, "pins") for pinned, spec in table(build.version) if canonical_name(pinned) == name
            ]
        if cudnn and build.cudnn is not None:
            demands += _cudnn_rule(who, build.cudnn.value)
    return demands


def _through_meta_package(package: str, specifier: str) -> list[tuple[str, str]]:
    """The wheels a pinned meta-package pins in turn (cuda-toolkit==13.2.2 -> nvidia-cuda-runtime==13.2.86.*,
    "cuda-toolkit-extras"), as (canonical name, specifier)."""
    if canonical_name(package) != "cuda-toolkit":
        return []
    version = specifier.strip().removeprefix("==").strip()
    from ..compat.torch import CUDA_TOOLKIT_CUDART

    found = []
    for toolkit, requirement, _ in CUDA_TOOLKIT_CUDART:
        if toolkit == version:
            wheel, _, spec = requirement.partition("==")
            found.append((canonical_name(wheel), f"=={spec}"))
    return found


def _cudnn_rule(who: str, built: str) -> list[Demand]:
    """A framework built with cuDNN ``built`` ("9.3.0", or TensorFlow's "9") needs the same major and at least
    that minor: TensorFlow's rule ("tf-cudnn-rule") and PyTorch's ("torch-cudnn-rule")."""
    first, version = major(built), major_minor(built)
    if first is None or version is None:
        return []
    return [Demand(who, f">={version},<{first + 1}", f"was built with cuDNN {built}")]


def satisfiable(specifiers: Iterable[str]) -> bool:
    """Whether some version meets every specifier: tried on each version they name and just above it (a release
    between two bounds, "9.10.1" for ">9.10" and "<9.11").

    >>> satisfiable(["<9.11", ">=9.3.0.75,<10.0"]), satisfiable(["<9.11", "==9.26.0.51"])
    (True, False)
    >>> satisfiable([">9.10", "<9.11"])
    True
    """
    sets = [specifier_set(text) for text in specifiers]
    named = {Version(clause.version.rstrip(".*")) for spec in sets for clause in spec if _plain(clause.version)}
    candidates = named | {Version(f"{v.base_version}.1") for v in named} | {Version("0")}
    return any(all(spec.contains(c, prereleases=True) for spec in sets) for c in candidates)


def _valid(specifier: str) -> bool:
    """A specifier pip could read: a replayed snapshot may carry any text (an invalid one is no demand)."""
    if not specifier:
        return False
    try:
        specifier_set(specifier)
    except ValueError:  # InvalidSpecifier
        return False
    return True


def _plain(text: str) -> bool:
    try:
        Version(text.rstrip(".*"))
    except ValueError:
        return False
    return True


def pip_fix(env: Environment, package: str, specifier: str, *, cudnn: bool = False) -> PipFix:
    """``package`` + ``specifier`` as a requirement, with the demands of the frameworks installed that no release
    meets together with it. Where they allow it, the requirement also carries the tightest bound they set that
    ``specifier`` does not: pip picks the newest release a requirement allows, and does not ask the frameworks
    already installed (it only warns after), so ``>=8.9.2`` beside a TensorFlow pinning ``==8.9.4.25`` must say
    ``==8.9.4.25``."""
    demands = demands_on(env, package, cudnn)
    blocking = tuple(d for d in demands if not satisfiable([specifier, d.specifier]))
    if not blocking and not satisfiable([specifier, *(d.specifier for d in demands)]):
        blocking = tuple(demands)  # each allows it, but not all of them together
    if blocking:
        return PipFix(f"{package}{specifier}", blocking)
    return PipFix(f"{package}{_tightened(specifier, [d.specifier for d in demands])}", ())


def _tightened(own: str, others: list[str]) -> str:
    """``own`` with the bound of ``others`` that decides which release pip picks: an exact pin, else the lowest
    upper bound below ``own``'s (lower bounds do not change the newest release allowed).

    >>> _tightened(">=8.9.2", ["==8.9.4.25", ">=8,<9"]), _tightened("<9.11", [">=9.3.0.75,<10.0"])
    ('==8.9.4.25', '<9.11')
    >>> _tightened(">=9.3", ["<9.20", ">=9,<10"])
    '>=9.3,<9.20'
    >>> _tightened("", ["==13.2.86.*"])
    '==13.2.86.*'
    """
    clauses = [c for text in [own, *others] for c in specifier_set(text)]
    exact = [c for c in clauses if c.operator in ("==", "===") and not c.version.endswith(".*")]
    if exact:
        return f"=={exact[0].version}"
    prefix = [c for c in clauses if c.operator == "==" and c.version.endswith(".*")]
    if prefix:  # a meta-package's pin (cuda-toolkit==13.2.2 pins nvidia-cuda-runtime==13.2.86.*)
        return f"=={prefix[0].version}"
    uppers = [c for c in clauses if c.operator in ("<", "<=") and _plain(c.version)]
    own_uppers = [c for c in specifier_set(own) if c.operator in ("<", "<=")]
    tightest = min(uppers, key=lambda c: (Version(c.version), c.operator == "<="), default=None)
    if tightest is None or tightest in own_uppers:
        return own
    return f"{own},{tightest}" if own else str(tightest)


def blocking_text(fix: PipFix) -> str:
    """'TensorFlow 2.20.0 pins >=9.3.0.75,<10.0' for each demand that stands in the way, joined."""
    return "; ".join(
        f"{d.who} {d.why} {d.specifier}" if d.why == "pins" else f"{d.who} {d.why} (it needs {d.specifier})"
        for d in fix.blocking
    )
