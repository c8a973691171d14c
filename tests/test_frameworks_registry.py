"""The framework registry (pytest_cudnn/frameworks/): every view derives from it, its layering, what it costs, and
the search its entries' loads are built on."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_cudnn import phrases
from pytest_cudnn._base import loader
from pytest_cudnn.environment import LinkedObject
from pytest_cudnn.frameworks import NAMES, REGISTRY, relevant
from pytest_cudnn.probe.loads import Search, by_name
from pytest_cudnn.signatures import FRAMEWORK_NAMES, MARKERS

PACKAGE = Path(__file__).resolve().parent.parent / "pytest_cudnn"


def test_every_view_names_exactly_the_registry() -> None:
    assert FRAMEWORK_NAMES == NAMES == tuple(entry.name for entry in REGISTRY)
    assert len(set(NAMES)) == len(NAMES)
    framework_markers = {name for name in MARKERS if name.removeprefix("requires_") in NAMES}
    assert framework_markers == {entry.marker for entry in REGISTRY}
    for entry in REGISTRY:
        preload = ", preload_dlls=False" if entry.preload else ""  # the one argument its preload call adds
        assert MARKERS[entry.marker].startswith(f"{entry.marker}(spec=None, *, gpu=True{preload}): ")
        assert phrases.framework(entry.name) == entry.display
        assert relevant(entry.name.replace("_", "-")) or entry.name == "cupy"  # CuPy's are cupy-cudaNNx


def test_the_registry_imports_no_layer_above_it() -> None:
    """frameworks/ may use the model, compat, binaries and the probe's helpers; never the plugin, the run, the
    markers, the report or the CLI (architecture review §10)."""
    forbidden = ("plugin", "session", "cli", "markers", "report", "settings", "hosts", "remote", "fleet")
    for path in sorted((PACKAGE / "frameworks").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level >= 2:
                top = (node.module or "").split(".")[0]
                assert top not in forbidden, f"{path.name} imports {node.module}"
            if isinstance(node, ast.Import):
                assert not any(alias.name.split(".")[0] in ("torch", "jax", "tensorflow", "cupy", "onnxruntime")
                               for alias in node.names), path.name  # fmt: skip


@pytest.mark.e2e  # a child Python: a fresh sys.modules
def test_registering_the_markers_costs_no_probe_and_no_framework() -> None:
    """signatures (imported on every run) reads the registry and the library catalog (requires_nccl): that must
    import none of the probe, no compatibility table but the catalog, and no framework."""
    code = (
        "import sys, pytest_cudnn.signatures\n"
        "print(sorted(m for m in sys.modules if m.startswith(('pytest_cudnn.probe', 'pytest_cudnn.environment',"
        " 'pytest_cudnn.compat', 'packaging', 'torch', 'onnxruntime'))))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "['pytest_cudnn.compat', 'pytest_cudnn.compat.catalog']", done.stdout


def test_a_name_in_the_ldconfig_cache_is_found_by_a_framework_search() -> None:
    """The search order is built once per requester from a placeholder name; the cache is looked up by name, so
    the placeholder's order has no cache step and a framework's library listed only there was 'NOT FOUND'."""
    cached = "/usr/local/cuda-13.0/lib/libcudart.so.13"
    process = loader.Process(
        ldconfig=(("libcudart.so.13", cached),), default_dirs=("/usr/lib/x86_64-linux-gnu", "/usr/lib")
    )
    search = Search(process, (), exists=lambda path: path == cached)
    provider = LinkedObject(
        "/site/onnxruntime/capi/libonnxruntime_providers_cuda.so", None, ("libcudart.so.13",), None, None, (), (), None
    )
    load = by_name("libcudart.so.13", provider, "DT_NEEDED", True, search)
    assert load.path == cached
    assert load.found_by == "ldconfig cache"
    # In glibc's order: after DT_RUNPATH and LD_LIBRARY_PATH, before the default folders.
    order = [step.rule for step in search.order("libcudart.so.13", provider).steps]
    assert order == [loader.Rule.LDCONFIG, loader.Rule.DEFAULT, loader.Rule.DEFAULT]
