"""The examples of the README and of the documentation site's pages are what the code prints:
examples/readme_examples.py writes them from real runs, and this test fails when one drifts (run
``python examples/readme_examples.py`` to rewrite them). The README stays a front page: short, its links working."""

from __future__ import annotations

import importlib.util
import re
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
def test_every_example_is_what_its_command_prints() -> None:
    script = _script()
    shown = {name for page in script.pages() for name in script.shown(page.read_text(encoding="utf-8"))}
    assert set(script.EXAMPLES) <= shown, "an example is unused"
    assert script.stale() == [], "run: python examples/readme_examples.py"


def test_the_examples_are_looked_for_in_the_readme_and_every_page_of_the_site() -> None:
    pages = _script().pages()
    assert pages[0] == ROOT / "README.md"
    assert {ROOT / "docs" / "getting-started.md", ROOT / "docs" / "doctor.md", ROOT / "docs" / "many-gpus.md"} <= set(
        pages
    )


def test_a_changed_example_on_a_page_of_the_site_is_named() -> None:
    """stale() over every page, given what each command printed: the comparison alone."""
    script = _script()
    printed = {
        name: body for page in script.pages() for name, body in script.shown(page.read_text(encoding="utf-8")).items()
    }
    assert script.stale(printed) == []
    assert script.stale({**printed, "doctor-mig": "X\n"}) == [(ROOT / "docs" / "many-gpus.md", "doctor-mig")]


def test_a_changed_example_is_named() -> None:
    """The comparison alone, against what the README shows: the test above runs every example already."""
    script = _script()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    shown = {m.group("name"): m.group("body") for m in script._BLOCK.finditer(readme)}
    tampered = readme.replace(
        "<!-- example: header-tf2.3 -->\n```text\n", "<!-- example: header-tf2.3 -->\n```text\nX\n"
    )
    assert tampered != readme
    assert script.differences(readme, shown) == []
    assert script.differences(tampered, shown) == ["header-tf2.3"]


def test_the_diagnosis_page_lists_every_finding_code_with_a_link_to_its_page() -> None:
    from pytest_cudnn.diagnosis import CODES

    page = (ROOT / "docs" / "diagnosis.md").read_text(encoding="utf-8")
    assert [code for code in CODES if f"[`{code}`](codes/{code}.md)" not in page] == []


def test_the_readme_is_a_front_page_of_at_most_250_lines() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250, f"README.md has {len(lines)} lines: move a section into a page under docs/"


# A Markdown link or image: [text](target) or ![alt](target), the target up to a space or the closing parenthesis.
_LINK = re.compile(r"!?\[[^\]]*\]\((?P<target>[^)\s]+)(?:\s+\"[^\"]*\")?\)")


def _relative_targets(text: str) -> list[str]:
    targets = [m.group("target") for m in _LINK.finditer(text)]
    return [target for target in targets if not re.match(r"^[a-z][a-z0-9+.-]*:|^#", target)]


def test_the_links_of_the_readme_lead_to_files_that_exist() -> None:
    """GitHub shows the README beside the repository: its relative links (to docs/*.md and the like) must resolve
    there. The site's own links are checked by mkdocs build --strict."""
    targets = _relative_targets((ROOT / "README.md").read_text(encoding="utf-8"))
    assert "docs/getting-started.md" in targets
    assert "docs/codes/index.md" in targets
    assert [target for target in targets if not (ROOT / target.split("#")[0]).exists()] == []


def test_a_link_to_a_missing_file_is_found() -> None:
    text = "See [the doctor](docs/doctor.md#exit), [a page](docs/no-such-page.md), ![x](docs/x.png) and [web](https://example.org)."
    targets = _relative_targets(text)
    assert targets == ["docs/doctor.md#exit", "docs/no-such-page.md", "docs/x.png"]
    assert [t for t in targets if not (ROOT / t.split("#")[0]).exists()] == ["docs/no-such-page.md", "docs/x.png"]
