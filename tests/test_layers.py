"""The layers keep their order: a short walk over every module's imports (at the top, inside functions, and for
type checking alike) holds each package to what it may use. The layout (ARCHITECTURE.md):

    native/            the probe's child: the standard library only
    compat/, versions  sourced facts
    environment, devices, binaries/, files, serde, text     the model and its reading
    probe/, probing    reading a host into an Environment
    diagnosis/         Environment -> Diagnosis (findings, verdicts, copies in use): pure
    markers, report, overview, style, explain    questions to a Diagnosis, its renderings, what a code means
    fleet/             reports of many runners, read as they decided
    session, _run/, plugin, settings, gpu, live, hosts, remote    the pytest run (only here: pytest)
    cli                the doctor, snapshot, fleet and explain commands
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "pytest_cudnn"

# module (or package) -> the pytest_cudnn modules and packages it must never import
FORBIDDEN = {
    "diagnosis": {"probe", "probing", "native", "markers", "report", "explain", "fleet", "session", "plugin",
                  "settings", "cli", "hosts", "remote", "gpu", "live"},
    "probe": {"diagnosis", "markers", "report", "explain", "fleet", "session", "plugin", "settings", "cli", "hosts",
              "remote"},
    "probing": {"diagnosis", "markers", "report", "explain", "fleet", "session", "plugin", "settings", "cli", "hosts"},
    "markers": {"report", "explain", "probe", "probing", "native", "fleet", "session", "plugin", "settings", "cli",
                "hosts"},
    "report": {"markers", "probe", "probing", "native", "fleet", "session", "plugin", "settings", "cli", "hosts"},
    "explain": {"markers", "probe", "probing", "native", "fleet", "session", "plugin", "settings", "cli", "hosts"},
    "overview": {"markers", "probe", "probing", "native", "fleet", "session", "plugin", "settings", "cli", "hosts",
                 "report"},
    "style": {"markers", "probe", "probing", "native", "fleet", "session", "plugin", "settings", "cli", "hosts",
              "report", "overview", "diagnosis", "environment"},
    "fleet": {"probe", "probing", "native", "markers", "session", "_run", "plugin", "settings", "gpu", "live"},
    "environment": {"diagnosis", "probe", "probing", "markers", "report", "explain", "fleet", "session", "plugin",
                    "cli"},
    "cli": {"session", "_run", "plugin", "settings", "gpu"},
}  # fmt: skip
# module (or package) -> all it may import of pytest_cudnn
ONLY = {"compat": {"compat", "versions"}, "native": {"native"}, "versions": set(), "text": set(), "serde": set()}
# Only these may import pytest: everything else is pure, and the doctor never pays for pytest.
PYTEST_USERS = {"plugin", "session", "settings", "_run"}
TOP_LEVEL = {path.stem if path.is_file() else path.name for path in PACKAGE.iterdir() if path.suffix == ".py" or (
    path.is_dir() and (path / "__init__.py").exists())} - {"__init__", "__main__"}  # fmt: skip


def _imports(path: Path) -> tuple[set[str], set[str]]:
    """The pytest_cudnn top-level modules ``path`` imports, and the other top-level packages it imports."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    package = list(parts[:-1])  # the package the module is in
    ours: set[str] = set()
    others: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                target = [*base, *(node.module.split(".") if node.module else [])]
            else:
                target = (node.module or "").split(".")
            if target[0] != "pytest_cudnn":
                others.add(target[0])
            elif len(target) > 1:
                ours.add(target[1])
            else:  # from pytest_cudnn import x / from .. import x
                ours.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                head, _, rest = alias.name.partition(".")
                if head == "pytest_cudnn":
                    ours.add(rest.split(".")[0])
                else:
                    others.add(head)
    return ours & TOP_LEVEL, others


def _layer_of(path: Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return parts[0]


MODULES = sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=[str(p.relative_to(PACKAGE)) for p in MODULES])
def test_each_module_imports_only_what_its_layer_may(path: Path) -> None:
    layer = _layer_of(path)
    ours, others = _imports(path)
    forbidden = FORBIDDEN.get(layer, set())
    assert sorted((ours - {layer}) & forbidden) == [], f"{path.relative_to(PACKAGE)} imports a layer above its own"
    if layer in ONLY:  # native/: the probe's child imports nothing of pytest_cudnn but native/
        assert sorted(ours - ONLY[layer] - {layer}) == [], f"{path.relative_to(PACKAGE)} imports beyond its layer"
    if layer not in PYTEST_USERS:
        assert not {"pytest", "_pytest", "pluggy"} & others, f"{path.relative_to(PACKAGE)} imports pytest"


def _module_imports(path: Path) -> set[str]:
    """The pytest_cudnn modules ``path`` imports, dotted below the package (``native.calls``), wherever the import
    stands: at the top, inside a function, or for type checking. ``from . import calls`` names the module calls."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    package = list(parts[:-1])
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                target = [*package[: len(package) - (node.level - 1)], *(node.module.split(".") if node.module else [])]
            else:
                target = (node.module or "").split(".")
            heads = [[*target, alias.name] for alias in node.names]
            targets = [head for head in heads if _is_module(head)] or [target]
        elif isinstance(node, ast.Import):
            targets = [alias.name.split(".") for alias in node.names]
        else:
            continue
        found.update(".".join(target[1:]) for target in targets if target[0] == "pytest_cudnn" and target[1:])
    return found


def _is_module(dotted: list[str]) -> bool:
    where = PACKAGE.parent.joinpath(*dotted)
    return where.with_suffix(".py").is_file() or (where / "__init__.py").is_file()


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle of ``graph`` (module -> the modules it imports), or [] when it has none."""
    done: set[str] = set()

    def visit(module: str, trail: list[str]) -> list[str]:
        if module in trail:
            return [*trail[trail.index(module) :], module]
        if module in done:
            return []
        for imported in sorted(graph.get(module, ())):
            cycle = visit(imported, [*trail, module])
            if cycle:
                return cycle
        done.add(module)
        return []

    for module in sorted(graph):
        cycle = visit(module, [])
        if cycle:
            return cycle
    return []


def test_the_probe_childs_modules_import_each_other_without_a_cycle() -> None:
    # native/calls.py and native/isolation.py imported each other (the failure kinds had no home of their own):
    # each now imports native/protocol.py, and isolation imports calls, never the other way.
    native = sorted((PACKAGE / "native").glob("*.py"))
    graph = {f"native.{path.stem}": {m for m in _module_imports(path) if m.startswith("native.")} for path in native}
    assert "native.calls" in graph["native.isolation"]  # the walk sees the deferred import
    assert _cycle(graph) == []


# The one cycle left, on purpose for now: the registry's entries (frameworks/) point at per-framework code that still
# lives in probe/ and phrases, which ask the registry back (each side imports the other inside functions). Moving
# that code under frameworks/ ends it; no other cycle may appear.
REGISTRY_CYCLE = {
    "frameworks",
    *(f"probe.{name}" for name in ("loads", "pathfinder", "distributions", "torch", "jax", "tensorflow", "cupy")),
    "phrases",
}


def test_no_import_cycle_but_the_registrys() -> None:
    graph = {}
    for path in MODULES:
        dotted = ".".join(path.relative_to(PACKAGE).with_suffix("").parts).removesuffix(".__init__")
        graph[dotted] = _module_imports(path)

    def in_registry_cycle(module: str) -> bool:
        return module.split(".", maxsplit=1)[0] == "frameworks" or module in REGISTRY_CYCLE

    # Cut the registry's edges and look for any cycle that is left.
    cut = {
        m: {i for i in imported if not (in_registry_cycle(m) and in_registry_cycle(i))} for m, imported in graph.items()
    }
    assert _cycle(cut) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) == []


def test_the_walk_sees_what_a_module_imports(tmp_path: Path) -> None:
    # The walk itself: a deferred relative import two levels up, a typing-only import and a plain import count.
    module = PACKAGE / "diagnosis" / "result.py"
    ours, others = _imports(module)
    assert {"environment"} <= ours
    assert "dataclasses" in others
    assert _imports(PACKAGE / "plugin.py")[1] >= {"pytest"}
    assert "session" in _imports(PACKAGE / "plugin.py")[0]
