"""The layers keep their order: the table of ARCHITECTURE.md ("Layers") names every top-level module of the package
in exactly one row, lowest first, and a short walk over every module's imports (at the top, inside functions, and
for type checking alike) holds each module to its own row and the rows above it. The upward imports the document
names in its second table are allowed, and no other. Beside the order: only the run layer imports pytest, and
native/ (the probe's child) nothing of the package but itself."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "pytest_cudnn"
ARCHITECTURE = PACKAGE.parent / "ARCHITECTURE.md"
TOP_LEVEL = {path.stem if path.is_file() else path.name for path in PACKAGE.iterdir() if path.suffix == ".py" or (
    path.is_dir() and (path / "__init__.py").exists())} - {"__init__", "__main__"}  # fmt: skip


def _tables() -> tuple[list[tuple[str, list[str]]], set[tuple[str, str]], dict[str, int]]:
    """ARCHITECTURE.md's layers (name, modules), lowest first, the upward imports it names (from, to), and each
    layer's budget of lines."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    section = text[text.index("## Layers") : text.index("\n## ", text.index("## Layers") + 1)]
    layers: list[tuple[str, list[str]]] = []
    upward: set[tuple[str, str]] = set()
    budgets: dict[str, int] = {}
    for row in re.findall(r"^\| (.+) \|$", section, re.M):
        cells = [cell.strip() for cell in row.split(" | ")]
        if cells[0] in ("layer", "from") or set(cells[0]) <= {"-", " "}:
            continue
        names = re.findall(r"`([\w.]+)`", cells[1])
        if cells[0].startswith("`"):  # the table of upward imports: `from` | `to` | why
            upward.add((cells[0].strip("`"), names[0]))
        else:
            layers.append((cells[0], names))
            budgets[cells[0]] = int(cells[2].replace(",", ""))
    return layers, upward, budgets


LAYERS, UPWARD, BUDGETS = _tables()
LAYER_OF = {module: index for index, (_, modules) in enumerate(LAYERS) for module in modules}
PYTEST_LAYERS = {"run"}
CHILD = "native"


def test_the_table_names_every_top_level_module_once() -> None:
    named = [module for _, modules in LAYERS for module in modules]
    assert sorted(named) == sorted(set(named)), "a module is named in two rows"
    assert set(named) == TOP_LEVEL, (sorted(TOP_LEVEL - set(named)), sorted(set(named) - TOP_LEVEL))
    assert {upper for pair in UPWARD for upper in pair} <= TOP_LEVEL


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


MODULES = sorted(path for path in PACKAGE.rglob("*.py") if _layer_of(path) not in ("__init__", "__main__"))
# The top-level modules whose own files import pytest.
PYTEST_IMPORTERS = {_layer_of(path) for path in MODULES if {"pytest", "_pytest", "pluggy"} & _imports(path)[1]}


@pytest.mark.parametrize("path", MODULES, ids=[str(p.relative_to(PACKAGE)) for p in MODULES])
def test_each_module_imports_only_from_its_row_and_the_rows_above(path: Path) -> None:
    top = _layer_of(path)
    ours, others = _imports(path)
    above = sorted(
        module for module in ours - {top} if LAYER_OF[module] > LAYER_OF[top] and (top, module) not in UPWARD
    )
    assert above == [], (
        f"{path.relative_to(PACKAGE)} imports from a higher layer (a later row of ARCHITECTURE.md's table): {above}"
    )
    if top == CHILD:  # the probe's child imports nothing of pytest_cudnn but native/
        assert sorted(ours - {CHILD}) == [], f"{path.relative_to(PACKAGE)} imports beyond native/"
    if LAYERS[LAYER_OF[top]][0] not in PYTEST_LAYERS:
        assert not {"pytest", "_pytest", "pluggy"} & others, f"{path.relative_to(PACKAGE)} imports pytest"
        # Nor through a module that does: the doctor never pays for pytest.
        assert sorted(ours & PYTEST_IMPORTERS) == [], f"{path.relative_to(PACKAGE)} imports pytest's users"


def lines_of_code(path: Path) -> int:
    """Non-blank lines that are not comments (docstrings count: they are what the module says)."""
    return sum(
        1
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    )


def test_each_layer_keeps_within_its_budget_of_lines() -> None:
    """Growth is a decision: a layer past its budget fails until the change raises the number in ARCHITECTURE.md."""
    counted = dict.fromkeys(BUDGETS, 0)
    for path in MODULES:
        counted[LAYERS[LAYER_OF[_layer_of(path)]][0]] += lines_of_code(path)
    over = {layer: f"{counted[layer]:,} > {BUDGETS[layer]:,}" for layer in BUDGETS if counted[layer] > BUDGETS[layer]}
    assert over == {}, over


def test_the_order_reads_as_the_architecture_says() -> None:
    assert LAYERS[0] == ("child", ["native"])
    assert LAYERS[-1] == ("commands", ["cli"])
    assert LAYER_OF["compat"] < LAYER_OF["environment"] < LAYER_OF["probe"] < LAYER_OF["frameworks"]
    assert LAYER_OF["frameworks"] < LAYER_OF["probing"] < LAYER_OF["diagnosis"] < LAYER_OF["markers"]
    assert LAYER_OF["markers"] < LAYER_OF["plugin"]
    assert {"plugin", "_run"} <= PYTEST_IMPORTERS


def test_each_upward_import_named_is_still_there() -> None:
    """An upward import the document allows and the code no longer makes is taken off the table."""
    made = {(_layer_of(path), module) for path in MODULES for module in _imports(path)[0]}
    assert made >= UPWARD, sorted(UPWARD - made)


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


def test_no_import_cycle() -> None:
    """No module imports one that imports it back, directly or around a loop: the registry's entries look other
    entries up through frameworks/base.py, the registry's distributions are passed to the probe's reader, and the
    reading code an entry points at imports no entry."""
    graph = {}
    for path in sorted(PACKAGE.rglob("*.py")):  # the package's own __init__ and __main__ too
        dotted = ".".join(path.relative_to(PACKAGE).with_suffix("").parts).removesuffix(".__init__")
        graph[dotted] = _module_imports(path)
    assert _cycle(graph) == []


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
    assert "_run" in _imports(PACKAGE / "plugin.py")[0]


# A framework's name compared in code: each is an entry field instead (issue 30), but for the one adapter that reads
# TensorFlow's build info from a version 1 or 2 snapshot, which kept it beside the frameworks (environment.py).
_NAME_BRANCH = re.compile(r"""(name|\.name|\("name"\)) (==|!=) "(torch|jax|tensorflow|cupy|onnxruntime)"|"""
                          r""""(torch|jax|tensorflow|cupy|onnxruntime)" (not in|in) """)  # fmt: skip
_NAME_BRANCHES_LEFT = {"environment.py": 1}


def test_no_module_outside_frameworks_branches_on_a_frameworks_name() -> None:
    found: dict[str, int] = {}
    for path in MODULES:
        relative = path.relative_to(PACKAGE).as_posix()
        if relative.startswith("frameworks/"):
            continue
        count = len(_NAME_BRANCH.findall(path.read_text(encoding="utf-8")))
        if count:
            found[relative] = count
    assert found == _NAME_BRANCHES_LEFT
