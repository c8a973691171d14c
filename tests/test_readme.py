"""The README's examples are what the code prints: examples/readme_examples.py writes them from real runs, and
this test fails when one drifts (run ``python examples/readme_examples.py`` to rewrite them)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("readme_examples", ROOT / "examples" / "readme_examples.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


@pytest.mark.e2e
def test_every_readme_example_is_what_its_command_prints() -> None:
    script = _script()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    shown = {m.group("name") for page in script.PAGES for m in script._BLOCK.finditer(page.read_text(encoding="utf-8"))}
    assert set(script.EXAMPLES) <= shown, "an example is unused"
    assert script.differences(readme) == [], "run: python examples/readme_examples.py"


def test_a_changed_example_is_named() -> None:
    """The comparison alone, against what the README shows: the test above runs every example already."""
    script = _script()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    shown = {m.group("name"): m.group("body") for m in script._BLOCK.finditer(readme)}
    tampered = readme.replace(
        "<!-- example: findings-tf2.3 -->\n```text\n", "<!-- example: findings-tf2.3 -->\n```text\nX\n"
    )
    assert tampered != readme
    assert script.differences(readme, shown) == []
    assert script.differences(tampered, shown) == ["findings-tf2.3"]


def test_the_readme_lists_every_finding_code() -> None:
    from pytest_cudnn.diagnosis import CODES

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert [code for code in CODES if f"`{code}`" not in readme] == []
