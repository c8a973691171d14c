"""Frameworks that share one process: which copy each gets when another was imported first.

A pytest process often imports several frameworks (a conftest imports torch, a test imports TensorFlow). glibc
serves a request for a library by name from an object already loaded under that soname, before any search
(source "glibc-already-loaded"): the first copy of a name mapped into a process serves every later request by
name, and a later load by absolute path of another file maps a second copy that requests by name never reach.
So a framework's verdict alone (its ``loads``, :mod:`pytest_cudnn.probe.loads`) can change with import order:

* a library its own search cannot find (TensorFlow 2.21 and ``libcusolver.so.11``, outside its RUNPATH) is found
  when a framework imported before it loaded that name (torch's preload): it works only in that order;
* a framework that works alone gets the earlier framework's copy of a name it shares, which its own rule may
  refuse (torch built with cuDNN 9.26 after JAX preloaded cuDNN 9.8): it breaks in that order.

Pure: the environment's per-framework loads in, facts and findings out; each import order is walked once, in time
linear in the libraries of the frameworks it names. Assumed, as :mod:`pytest_cudnn.probe.loads` does: a library's
soname is the name it is asked for, and the first load of a name in a framework's ``loads`` is the one that maps it
(a later one of the same name is a second copy, mapped and unused). Not modelled: libraries a CUDA library loads
itself (cuDNN's sub-libraries, ``libnvrtc-builtins``), which follow the same rule.
"""

from __future__ import annotations

import dataclasses
import posixpath
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from .. import phrases
from ..environment import Cudnn, Environment, FrameworkBuild, LoadedLibrary, State
from ..frameworks import maps_at_import
from .frameworks import cudnn_refusal, label, missing_fix, subjects
from .model import Finding, Severity, cite, folder_of, make_finding
from .stack import gpu_frameworks, load_copy

__all__ = ["Library", "OrderFacts", "Refusal", "Turn", "imports", "order_facts", "process_findings", "process_rules"]


@dataclass(frozen=True)
class Library:
    """One library a framework needs, as it gets it in a process."""

    name: str  # the name asked for, e.g. "libcudnn.so.9"
    alone: str | None  # the copy its own search gives it, imported alone; None: found nowhere
    path: str | None  # the copy it gets in this process; None: found nowhere
    given_by: str | None  # the framework (import name) imported before it that mapped this name; None: its own


@dataclass(frozen=True)
class Refusal:
    """A copy a framework gets, from its own search or from a framework imported before it, and refuses by its own
    rule."""

    name: str
    path: str
    version: str
    given_by: str | None  # the framework imported before it that mapped this copy; None: its own search's
    problem: str  # the framework's rule, said: "PyTorch 2.15.0 refuses it: compiled with cuDNN 9.26.0"
    source: str  # the rule's source key


@dataclass(frozen=True)
class Turn:
    """One framework's import in a process, after ``before`` (in their import order)."""

    framework: str
    before: tuple[str, ...]
    libraries: tuple[Library, ...]  # the libraries it cannot do without
    missing: tuple[str, ...]  # those found nowhere, even in the process
    refusals: tuple[Refusal, ...]  # the copies it gets and refuses

    @property
    def problems(self) -> str:
        """'it cannot load libcusolver.so.11; it refuses cuDNN 9.1.0 (/opt/.../libcudnn.so.9)': why it fails."""
        said = [f"it cannot load {', '.join(self.missing)}"] if self.missing else []
        said += [f"it refuses {r.name} {r.version} ({r.path})" for r in self.refusals]
        return "; ".join(said)

    @property
    def loads_all(self) -> bool:
        """Whether it gets every library it needs, in copies its own rules accept."""
        return not self.missing and not self.refusals


@dataclass(frozen=True)
class OrderFacts:
    """What import order does to one framework: alone, and after each other framework."""

    framework: str
    alone: Turn
    after: tuple[Turn, ...]  # one per other framework, imported just before it

    @property
    def works_after(self) -> tuple[str, ...]:
        """The frameworks after which it loads everything, when alone it does not."""
        return () if self.alone.loads_all else tuple(t.before[-1] for t in self.after if t.loads_all)

    @property
    def breaks_after(self) -> tuple[str, ...]:
        """The frameworks after which it gets a copy it refuses, when alone it loads everything."""
        return tuple(t.before[-1] for t in self.after if t.refusals) if self.alone.loads_all else ()


def _builds(env: Environment) -> list[FrameworkBuild]:
    """The frameworks whose loads were read: those whose verdict import order can change."""
    return [b for b in gpu_frameworks(env) if b.state is State.FOUND and b.loads]


def _same(env: Environment, first: str | None, second: str | None, name: str) -> bool:
    """Whether two spellings of a copy are one file (a link and its target are one probed copy)."""
    if first is None or second is None:
        return first == second
    if posixpath.normpath(first) == posixpath.normpath(second):
        return True
    one = load_copy(env, LoadedLibrary(name, None, "dlopen", True, first, None))
    other = load_copy(env, LoadedLibrary(name, None, "dlopen", True, second, None))
    return one is not None and one is other


# The judgements already made, by (framework, copy, who mapped it): one run judges each pair once.
_Judged = dict[tuple[str, str, str | None], "Refusal | None"]


def imports(env: Environment, order: Sequence[str], judged: _Judged | None = None) -> tuple[Turn, ...]:
    """Each framework of ``order`` (import names; those not installed or not read are passed over) as it loads in
    one process, imported in that order. ``judged``: judgements to reuse and fill (see :func:`order_facts`)."""
    judged = {} if judged is None else judged
    builds = {b.name: b for b in _builds(env)}
    mapped: dict[str, tuple[str, str]] = {}  # name -> (the copy mapped first, the framework that mapped it)
    turns: list[Turn] = []
    for name in (n for n in dict.fromkeys(order) if n in builds):
        build = builds[name]
        before = tuple(turn.framework for turn in turns)
        libraries: list[Library] = []
        missing: list[str] = []
        refusals: list[Refusal] = []
        seen: set[str] = set()
        for load in build.loads:
            if not load.required or load.name in seen:
                continue
            seen.add(load.name)
            earlier = mapped.get(load.name)
            path, given_by = earlier if earlier else (load.path, None)
            if given_by is not None and _same(env, path, load.path, load.name):
                path, given_by = load.path, None  # the same file its own search finds: nothing changes
            libraries.append(Library(load.name, load.path, path, given_by))
            if path is None:
                missing.append(load.name)
            else:
                key = (name, path, given_by)
                if key not in judged:
                    judged[key] = _refusal(env, build, dataclasses.replace(load, path=path), given_by)
                if (refusal := judged[key]) is not None:
                    refusals.append(refusal)
        if maps_at_import(build.name):
            for load in build.loads:
                if load.path is not None:  # preloads it never asks for too: they are mapped all the same
                    mapped.setdefault(load.name, (load.path, name))
        turns.append(Turn(name, before, tuple(libraries), tuple(missing), tuple(refusals)))
    return tuple(turns)


def _refusal(env: Environment, build: FrameworkBuild, load: LoadedLibrary, given_by: str | None) -> Refusal | None:
    """Whether ``build`` refuses the copy ``load`` names (its own, or the one ``given_by`` mapped first). The cuDNN
    rules are the frameworks' own (:func:`~pytest_cudnn.diagnosis.frameworks.cudnn_refusal`); no framework tables
    a rule for another CUDA library's minor, whose soname already fixes its major."""
    copy = load_copy(env, load)
    if not isinstance(copy, Cudnn) or not copy.version or load.path is None:
        return None
    refused = cudnn_refusal(env, build, copy)
    if refused is None:
        return None
    return Refusal(load.name, load.path, copy.version, given_by, refused[0], refused[1])


def order_facts(env: Environment) -> tuple[OrderFacts, ...]:
    """For each framework whose loads were read: its turn alone, and after each other one."""
    names = [b.name for b in _builds(env)]
    judged: _Judged = {}
    facts = []
    for name in names:
        alone = imports(env, [name], judged)[-1]
        after = tuple(imports(env, [other, name], judged)[-1] for other in names if other != name)
        facts.append(OrderFacts(name, alone, after))
    return tuple(facts)


def process_findings(env: Environment) -> list[Finding]:
    """The findings about frameworks whose verdict depends on import order."""
    return list(process_rules(env))


def process_rules(env: Environment) -> Iterator[Finding]:
    builds = {b.name: b for b in _builds(env)}
    if len(builds) < 2:
        return
    facts = {fact.framework: fact for fact in order_facts(env)}
    for fact in facts.values():
        build = builds[fact.framework]
        if fact.works_after:
            yield _needs_order(env, build, fact, [builds[name] for name in fact.works_after])
        for name in fact.breaks_after:
            turn = next(t for t in fact.after if t.before[-1] == name)
            reverse = next(t for t in facts[name].after if t.before[-1] == fact.framework)
            yield _conflict(env, build, builds[name], (fact.alone, turn), (facts[name].alone, reverse))


def _import(build: FrameworkBuild) -> str:
    return f"import {build.name}"


def _copy_text(env: Environment, path: str | None, name: str) -> str:
    copy = load_copy(env, LoadedLibrary(name, None, "dlopen", True, path, None)) if path else None
    return f"{path} (version {copy.version})" if copy is not None and copy.version else str(path)


def _how(helper: FrameworkBuild, name: str) -> str:
    """How ``helper`` maps ``name``: 'torch's preload of libcusolver.so.*[0-9] (...)', 'DT_RPATH of ...'."""
    load = next((load for load in helper.loads if load.name == name and load.path), None)
    return (load.found_by or load.how) if load else "its own load"


def _needs_order(env: Environment, build: FrameworkBuild, fact: OrderFacts, helpers: list[FrameworkBuild]) -> Finding:
    first = helpers[0]
    alone = fact.alone
    turn = next(t for t in fact.after if t.before[-1] == first.name)
    refused = {refusal.name: refusal for refusal in alone.refusals}
    evidence: list[str] = []
    fixes: list[str] = []
    for library in (lib for lib in turn.libraries if lib.name in alone.missing or lib.name in refused):
        after = (
            f"after {label(first)} it gets {_copy_text(env, library.path, library.name)}, which "
            f"{phrases.framework(first.name)} mapped first ({_how(first, library.name)})"
        )
        refusal = refused.get(library.name)
        if refusal is None:
            evidence.append(f"{library.name}: its own search finds no copy; {after}")
            load = next(load for load in build.loads if load.name == library.name)
            fixes.append(missing_fix(build, load))
        else:
            evidence += [
                f"{library.name}: its own search gives {_copy_text(env, refusal.path, refusal.name)}, which it "
                f"refuses ({refusal.problem}); {after}",
                cite(refusal.source),
            ]
            fixes.append(
                f"make its own search give it a {library.name} it accepts (the one it was built for, see its pins; "
                f"{folder_of(refusal.path)} comes first now)"
            )
    others = f" (or {', '.join(label(h) for h in helpers[1:])})" if helpers[1:] else ""
    return make_finding(
        "framework-needs-import-order",
        Severity.WARNING,
        "framework",
        f"{label(build)} gets every library it needs only when {label(first)}{others} is imported before it in "
        f"the same process: alone {alone.problems}",
        (
            *evidence,
            f"order that works: {_import(first)}, then {_import(build)}; {_import(build)} first or alone: "
            f"{alone.problems}",
            cite("glibc-already-loaded"),
        ),
        f"{'; '.join(dict.fromkeys(fixes))}. Until then, as a workaround: {_import(first)} before "
        f"{_import(build)} in every test process (e.g. at the top of conftest.py)",
        subjects(build),
    )


def _conflict(
    env: Environment, build: FrameworkBuild, first: FrameworkBuild, turns: tuple[Turn, Turn], theirs: tuple[Turn, Turn]
) -> Finding:
    """``build`` loads everything alone (``turns[0]``) and refuses a copy after ``first`` (``turns[1]``);
    ``theirs``: ``first`` alone, and after ``build``."""
    alone, turn = turns
    refusal = turn.refusals[0]
    own = next((library.alone for library in alone.libraries if library.name == refusal.name), None)
    if theirs[1].loads_all:
        orders = f"order that works: {_import(build)}, then {_import(first)} (both get copies they accept)"
    elif not theirs[0].loads_all:
        orders = (
            f"order that works for {phrases.framework(build.name)}: {_import(build)}, then {_import(first)}, "
            f"which fails there as it does alone ({theirs[1].problems})"
        )
    else:
        orders = f"no order works for both: {_import(build)} first, {label(first)} then fails ({theirs[1].problems})"
    if orders.startswith("order that works"):
        fix = (
            f"{_import(build)} before {_import(first)} in every test process (e.g. at the top of conftest.py), or "
            f"install one copy of {refusal.name} both accept"
        )
    else:
        fix = f"install one copy of {refusal.name} both accept, or do not import both in one test process"
    return make_finding(
        "framework-import-order-conflict",
        Severity.WARNING,
        "framework",
        f"{label(build)} imported after {label(first)} gets its copy of {refusal.name} (version "
        f"{refusal.version}): {refusal.problem}",
        (
            f"alone: {_copy_text(env, own, refusal.name)}",
            f"after {label(first)}: {_copy_text(env, refusal.path, refusal.name)}, mapped first by "
            f"{phrases.framework(first.name)} ({_how(first, refusal.name)})",
            cite(refusal.source),
            orders,
            cite("glibc-already-loaded"),
        ),
        fix,
        subjects(build),
    )
