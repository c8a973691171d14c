"""docs/faq.md and docs/loading.md hold to the product: every finding code the FAQ links is one the diagnosis has,
every FAQ entry names at least one, the pages' links into the repository resolve, and the FAQ's examples are what
their commands print (examples/readme_examples.py writes them, as it writes the README's)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pytest_cudnn.diagnosis import CODES

from .test_readme import _script

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
FAQ = DOCS / "faq.md"
PAGES = (FAQ, DOCS / "loading.md")

# A link to a finding's page, which the documentation site generates one per code: "(codes/no-driver.md)".
_CODE_LINK = re.compile(r"\]\(codes/([^)#]*)\.md\)")
_LINK = re.compile(r"\]\((?!https?://)([^)\s]+)\)")


def _entries(text: str) -> dict[str, str]:
    """The FAQ's entries: each "## " heading and the text under it."""
    parts = re.split(r"^## (.+)$", text, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_code_a_page_links_is_a_finding_code(page: Path) -> None:
    linked = set(_CODE_LINK.findall(page.read_text(encoding="utf-8")))
    assert linked, f"{page.name} links no finding"
    assert sorted(linked - set(CODES)) == []


ENTRIES = _entries(FAQ.read_text(encoding="utf-8"))


@pytest.mark.parametrize("heading", list(ENTRIES), ids=lambda heading: heading[:40])
def test_every_faq_entry_names_the_findings_of_its_cause(heading: str) -> None:
    codes = _CODE_LINK.findall(ENTRIES[heading])
    assert codes, f"{heading!r} links no codes/<code>.md"
    assert [code for code in codes if code not in CODES] == []


def test_the_faq_answers_the_messages_users_search() -> None:
    headings = " / ".join(ENTRIES)
    for message in (
        "Could not load dynamic library 'libcudnn.so.8'",
        "CUDNN_STATUS_NOT_INITIALIZED",
        "CUDNN_STATUS_INTERNAL_ERROR",
        "DLL load failed while importing",
        "The NVIDIA driver on your system is too old",
        "CUDA driver version is insufficient for CUDA runtime version",
        "no kernel image is available for execution on the device",
        "no CUDA-capable device is detected",
        "Loaded runtime CuDNN library",
        "libcudnn_cnn_infer.so.8",
        "CI went green without a GPU",
    ):
        assert message in headings


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_the_pages_link_only_files_that_exist(page: Path) -> None:
    targets = {link.split("#")[0] for link in _LINK.findall(page.read_text(encoding="utf-8"))}
    # codes/<code>.md are written by the documentation site's build, one per code (checked above).
    local = {target for target in targets if target and not target.startswith("codes/")}
    assert local, "no link into the repository"
    assert sorted(target for target in local if not (page.parent / target).exists()) == []


def test_the_faq_examples_are_ones_the_script_writes() -> None:
    script = _script()
    faq = FAQ.read_text(encoding="utf-8")
    shown = {m.group("name") for m in script._BLOCK.finditer(faq)}
    assert shown, "the FAQ shows no example"
    assert sorted(shown - set(script.EXAMPLES)) == []
    assert FAQ in script.pages()  # so tests/test_readme.py checks them with every other page's
