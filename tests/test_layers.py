"""The layers keep their order: a short walk over every module's imports (at the top, inside functions, and for
type checking alike) holds each package to what it may use. The layout (ARCHITECTURE.md):

    native/            the probe's child: the standard library only
    compat/, versions  sourced facts
    environment, devices, binaries/, files, serde, text     the model and its reading
    probe/, probing    reading a host into an Environment
    diagnosis/         Environment -> Diagnosis (findings, verdicts, copies in use): pure
    markers, report    questions to a Diagnosis, and its renderings
    fleet/             reports of many runners, read as they decided
    session, _run/, plugin, settings, gpu, live, hosts, remote    the pytest run (only here: pytest)
    cli                the doctor, snapshot and fleet commands
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "pytest_cudnn"

# module (or package) -> the pytest_cudnn modules and packages it must never import
FORBIDDEN = {
    "diagnosis": {"probe", "probing", "native", "markers", "report", "fleet", "session", "plugin", "settings", "cli",
                  "hosts", "remote", "gpu", "live"},
    "probe": {"diagnosis", "markers", "report", "fleet", "session", "plugin", "settings", "cli", "hosts", "remote"},
    "probing": {"diagnosis", "markers", "report", "fleet", "session", "plugin", "settings", "cli", "hosts"},
    "markers": {"report", "probe", "probing", "native", "fleet", "session", "plugin", "settings", "cli", "hosts"},
    "report": {"markers", "probe", "probing", "native", "fleet", "session", "plugin", "settings", "cli", "hosts"},
    "fleet": {"probe", "probing", "native", "markers", "session", "_run", "plugin", "settings", "gpu", "live"},
    "environment": {"diagnosis", "probe", "probing", "markers", "report", "fleet", "session", "plugin", "cli"},
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


def test_the_walk_sees_what_a_module_imports(tmp_path: Path) -> None:
    # The walk itself: a deferred relative import two levels up, a typing-only import and a plain import count.
    module = PACKAGE / "diagnosis" / "result.py"
    ours, others = _imports(module)
    assert {"environment"} <= ours
    assert "dataclasses" in others
    assert _imports(PACKAGE / "plugin.py")[1] >= {"pytest"}
    assert "session" in _imports(PACKAGE / "plugin.py")[0]
