"""The documentation site's generated pages are what docs/generate.py writes from the code now, and its nav names every
page written by hand (mkdocs build --strict, in tox -e docs and CI, checks its links)."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from pytest_cudnn.diagnosis import CODES
from pytest_cudnn.diagnosis import explanations as explanations_module
from pytest_cudnn.diagnosis.explanations import Explanation

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_generate", DOCS / "generate.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_generated_pages_are_what_the_code_says_now() -> None:
    generate = _generator()
    assert generate.stale(DOCS, generate.pages()) == [], "run: python docs/generate.py"


def test_a_stale_missing_or_left_over_page_is_named_and_rewritten(tmp_path: Path) -> None:
    generate = _generator()
    wanted = generate.pages()
    assert generate.write(tmp_path, wanted) == sorted(wanted)
    assert generate.stale(tmp_path, wanted) == []
    (tmp_path / "reference" / "cli.md").write_text("# edited by hand\n", encoding="utf-8")
    (tmp_path / "codes" / "no-driver.md").unlink()
    (tmp_path / "codes" / "a-code-that-is-gone.md").write_text("# gone\n", encoding="utf-8")
    expected = ["codes/no-driver.md", "reference/cli.md", "codes/a-code-that-is-gone.md"]
    assert generate.stale(tmp_path, wanted) == expected
    assert generate.write(tmp_path, wanted) == expected
    assert generate.stale(tmp_path, wanted) == []
    assert not (tmp_path / "codes" / "a-code-that-is-gone.md").exists()


def test_every_finding_code_has_a_page_linked_from_the_index() -> None:
    pages = _generator().code_pages()
    assert sorted(pages) == sorted([*(f"codes/{code}.md" for code in CODES), "codes/index.md"])
    index = pages["codes/index.md"]
    assert [code for code in CODES if f"| [`{code}`]({code}.md) | " not in index] == []


def test_a_code_page_shows_its_explanation_or_says_there_is_none(monkeypatch: pytest.MonkeyPatch) -> None:
    said = Explanation(
        meaning="No libnvidia-ml.so.1 on the loader path.",
        confirm=("$ ldconfig -p | grep libnvidia-ml", "Look for the kernel module in /proc/modules."),
        fix="Install the NVIDIA driver.",
        sources=("NVML API reference, nvmlInit: https://docs.nvidia.com/deploy/nvml-api/",),
    )
    monkeypatch.setattr(explanations_module, "explanation", lambda code: said if code == "no-driver" else None)
    pages = _generator().code_pages()
    page = pages["codes/no-driver.md"]
    assert "## What it means\n\nNo libnvidia-ml.so.1 on the loader path.\n" in page
    assert "```sh\nldconfig -p | grep libnvidia-ml\n```" in page
    assert "- Look for the kernel module in /proc/modules.\n" in page
    assert "## The fix\n\nInstall the NVIDIA driver.\n" in page
    assert "- NVML API reference, nvmlInit: https://docs.nvidia.com/deploy/nvml-api/\n" in page
    assert "No explanation yet" not in page
    assert "No explanation yet" in pages["codes/no-gpu.md"]
    assert "## What it means" not in pages["codes/no-gpu.md"]


def test_the_generated_pages_hold_nothing_of_the_machine_that_wrote_them() -> None:
    for path, text in _generator().pages().items():
        assert str(ROOT) not in text, path
        assert str(Path.home()) not in text, path
        assert sys.prefix not in text, path


def test_the_pages_name_every_marker_fixture_command_option_and_public_name() -> None:
    from pytest_cudnn import __all__ as public
    from pytest_cudnn.signatures import MARKERS

    pages = _generator().pages()
    markers, cli, api = pages["reference/markers.md"], pages["reference/cli.md"], pages["reference/api.md"]
    assert [name for name in MARKERS if f"### `{name}`" not in markers] == []
    assert [name for name in ("gpu", "cudnn_handle", "cudnn_handle_session") if f"### `{name}`" not in markers] == []
    assert "cudnn_junit_properties" not in markers  # registered only with --junitxml: not the user's to request
    for heading in ("## `pytest-cudnn doctor`", "## `pytest-cudnn snapshot`", "## `pytest-cudnn fleet`"):
        assert heading in cli
    for option in (
        "`--env FILE`",
        "`--framework NAME`",
        "`--redact`",
        "`-o FILE`, `--output FILE`",
        "`--name NAME=PATH`",
    ):
        assert option in cli
    assert [name for name in public if f"## `{name}`" not in api] == []


@pytest.mark.e2e
def test_generating_the_pages_imports_neither_pytest_nor_the_probe() -> None:
    code = (
        "import json, runpy, sys; runpy.run_path(sys.argv[1], run_name='generate')['pages'](); "
        "print(json.dumps(sorted(sys.modules)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(DOCS / "generate.py")],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    # pytest_cudnn.probing itself is light (probe_host, public, imports the child's start only): its host module is not.
    heavy = ("pytest", "_pytest", "pynvml", "pytest_cudnn.plugin", "pytest_cudnn.probe", "pytest_cudnn.probing.host")
    imported = [
        name for name in json.loads(done.stdout) if name in heavy or name.startswith(tuple(f"{h}." for h in heavy))
    ]
    assert imported == []


def test_the_nav_names_every_page_written_by_hand() -> None:
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    in_nav = set(re.findall(r"^\s+- (?:[^:\n]+|\"[^\"]+\"): (\S+\.md)$", config, re.M))
    by_hand = {str(path.relative_to(DOCS)) for path in DOCS.rglob("*.md") if path.parent.name != "codes"}
    assert in_nav == {*by_hand, "codes/index.md"}


def test_nothing_cites_a_file_outside_the_repository() -> None:
    """The developers' notebook (../shared/docs) is not shipped: what the code, the tests and the docs rely on is
    said in docs/ in this project's words (docs/build-facts.md, docs/loading.md), and cited there."""
    cited = []
    for folder in ("pytest_cudnn", "tests", "docs", "examples", "benchmarks", ".ci"):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in {".py", ".md", ".sh", ".toml", ".yml"} or path.name == "run":
                text = path.read_text(encoding="utf-8", errors="replace")
                cited += [f"{path.relative_to(ROOT)}: {m.group(0)}" for m in re.finditer(r"shared/docs/[\w.-]+", text)]
    for name in ("README.md", "ARCHITECTURE.md", "CHANGELOG.md", "mkdocs.yml", "pyproject.toml", "tox.ini"):
        text = (ROOT / name).read_text(encoding="utf-8")
        cited += [f"{name}: {m.group(0)}" for m in re.finditer(r"shared/docs/[\w.-]+", text)]
    assert cited == [], cited
