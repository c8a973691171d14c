"""Write the examples of the README and of the documentation site from real runs, so that they cannot drift from what
the code prints.

Each example in README.md and in the pages under docs/ sits between two comments::

    <!-- example: NAME -->
    ```text
    ...what the command printed...
    ```
    <!-- /example -->

and is produced here by running its command (the doctor, or pytest on the example suite) in a child process, on
the example snapshots in examples/snapshots/. An example may be shown on several pages; each is run once.
``python examples/readme_examples.py`` rewrites the blocks on every page; ``--check`` only compares and exits 1
naming each page and block that differs (tests/test_readme.py runs that check).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
SNAPSHOTS = "examples/snapshots"


@dataclass(frozen=True)
class Example:
    command: tuple[str, ...]  # run from the repository's root; "pytest-cudnn", "pytest", "python": this interpreter
    keep: Callable[[list[str]], list[str]]  # the lines of the output the README shows

    def shown(self) -> str:
        """The command as a reader would type it."""
        return " ".join(self.command)


def _everything(lines: list[str]) -> list[str]:
    return lines


def _from(marker: str) -> Callable[[list[str]], list[str]]:
    def keep(lines: list[str]) -> list[str]:
        start = next(index for index, line in enumerate(lines) if line.startswith(marker))
        return lines[start:]

    return keep


def _header_and_skips(lines: list[str]) -> list[str]:
    header = [line for line in lines if line.startswith("pytest-cudnn:")]
    skips = [line for line in lines if line.startswith("SKIPPED")]
    return [*header, "...", *skips]


def _header(lines: list[str]) -> list[str]:
    return [line for line in lines if line.startswith("pytest-cudnn:")]


# The doctor's per-framework blocks (-v) start with these words at the margin.
_FRAMEWORKS = ("PyTorch ", "JAX ", "TensorFlow ")


def _blocks(lines: list[str]) -> list[list[str]]:
    """The doctor's text cut into blocks: a line at the margin and the indented lines under it."""
    blocks: list[list[str]] = []
    for line in lines:
        if (line and not line[0].isspace()) or not blocks:
            blocks.append([line])
        else:
            blocks[-1].append(line)
    return blocks


def _frameworks_and_findings(lines: list[str]) -> list[str]:
    """The doctor's first line, each framework's block (the ones that end in that framework's verdict), then the
    findings and the verdict; "..." where something is left out."""
    blocks = _blocks(lines)
    kept = [lines[0], "..."]
    for block in blocks:
        if block[0].startswith(_FRAMEWORKS) and any(line.lstrip().startswith("verdict:") for line in block):
            kept += [line for line in block if line.strip()]
    return _with_findings(kept, blocks)


def _gpus_and_findings(lines: list[str]) -> list[str]:
    """The doctor's first line, its GPUs (MIG devices included), then its findings and verdict."""
    blocks = _blocks(lines)
    kept = [lines[0], "..."]
    for block in blocks:
        if block[0].startswith("GPUs"):
            kept += block
    return _with_findings(kept, blocks)


def _with_findings(kept: list[str], blocks: list[list[str]]) -> list[str]:
    """``kept``, then "..." and the doctor's findings and verdict."""
    kept.append("...")
    for block in blocks:
        if block[0].startswith(("Findings", "Verdict:")):
            kept += ["", *(line for line in block if line.strip())]
    return kept


def _pins_and_findings(lines: list[str]) -> list[str]:
    """The doctor's first line, each framework's label line and pins, then its findings and verdict."""
    blocks = _blocks(lines)
    kept = [lines[0], "..."]
    for block in blocks:
        if block[0].startswith(_FRAMEWORKS):
            kept += [block[0].split(" at ")[0], *(line for line in block if line.lstrip().startswith("pins "))]
    return _with_findings(kept, blocks)


def _driver_and_findings(lines: list[str]) -> list[str]:
    """The doctor's first line, its driver, libcuda and GPU lines, then its findings and verdict."""
    blocks = _blocks(lines)
    kept = [lines[0], "..."]
    for block in blocks:
        if block[0].startswith(("Driver", "libcuda", "GPUs")):
            kept += block
    return _with_findings(kept, blocks)


# A finding in the doctor's full text (-v): "  ERROR [code] summary" (further in when it follows from another),
# its evidence indented under it.
_FINDING = re.compile(r" {2,}(?:ERROR|WARNING|INFO) \[(?P<code>[\w-]+)\] ")


def _findings(*codes: str, also: tuple[str, ...] = ()) -> Callable[[list[str]], list[str]]:
    """The doctor's findings of ``codes``, each its summary line, the evidence lines that start with one of ``also``
    and its fix: what the FAQ shows of one finding."""

    def keep(lines: list[str]) -> list[str]:
        kept = ["Findings"]
        code = None
        for line in lines:
            if (found := _FINDING.match(line)) is not None:
                code = found.group("code")
                if code in codes:
                    kept.append(line)
            elif line.startswith("      ") and code in codes and line.strip().startswith(("fix:", *also)):
                kept.append(line)
            elif not line.startswith("      "):
                code = None
        return kept

    return keep


def _session_causes(lines: list[str]) -> list[str]:
    """A pytest session's pytest-cudnn lines: its header, the tests it stopped by cause, its last word."""
    return [line for line in lines if line.startswith("pytest-cudnn:") or re.match(r"   \d+ x [\w-]+: ", line)]


def _doctor(snapshot: str, keep: Callable[[list[str]], list[str]] = _frameworks_and_findings) -> Example:
    """The doctor's full text (-v) on an example snapshot, the lines ``keep`` keeps."""
    return Example(("pytest-cudnn", "doctor", "-v", "--env", f"{SNAPSHOTS}/{snapshot}.json"), keep)


def _session(snapshot: str) -> Example:
    return Example(
        ("pytest", "examples/suite", "-p", "no:cacheprovider", f"--gpu-env={SNAPSHOTS}/{snapshot}.json"), _header
    )


EXAMPLES: dict[str, Example] = {
    "doctor-no-driver": Example(
        ("pytest-cudnn", "doctor", "--env", f"{SNAPSHOTS}/gpu-less-ci-machine.json"), _everything
    ),
    "header-tf2.3": Example(
        (
            "pytest",
            "examples/suite",
            "-p",
            "no:cacheprovider",
            "-rs",
            f"--gpu-env={SNAPSHOTS}/tf2.3-meets-cudnn8.json",
        ),
        _header_and_skips,
    ),
    "findings-tf2.3": _doctor("tf2.3-meets-cudnn8", _from("Findings")),
    "doctor-torch2.15": _doctor("torch2.15-driver-too-old"),
    "header-torch2.15": _session("torch2.15-driver-too-old"),
    "doctor-jax0.10": _doctor("jax0.10-cuda12-healthy"),
    "header-jax0.10": _session("jax0.10-cuda12-healthy"),
    "doctor-mixed": _doctor("mixed-torch-jax-tf"),
    "header-mixed": _session("mixed-torch-jax-tf"),
    "doctor-mig": _doctor("mig-h100-ci-runner", _gpus_and_findings),
    "header-mig-xdist": Example(
        (
            "pytest",
            "examples/suite",
            "-p",
            "no:cacheprovider",
            "-p",
            "xdist",
            "-n",
            "4",
            f"--gpu-env={SNAPSHOTS}/mig-h100-ci-runner.json",
        ),
        _header,
    ),
    "doctor-overwritten-wheels": _doctor("overwritten-wheels", _pins_and_findings),
    "doctor-cuda-compat": _doctor("cuda-compat-13.0-on-driver-535", _driver_and_findings),
    "live-memory": Example(("python", "examples/many_gpus.py", "live"), _everything),
    "remote-hosts": Example(("python", "examples/many_gpus.py", "remote"), _everything),
    "fleet": Example(("python", "examples/many_gpus.py", "fleet"), _everything),
    # docs/faq.md: each answer's finding as the doctor gives it.
    "faq-tf-cudnn-not-found": _doctor(
        "tf2.3-meets-cudnn8",
        _findings("tensorflow-cudnn-not-found", also=("cuDNN ",)),
    ),
    "faq-tf-library-missing": _doctor(
        "mixed-torch-jax-tf",
        _findings("framework-library-missing", also=("installed where",)),
    ),
    "faq-torch-driver-too-old": _doctor(
        "torch2.15-driver-too-old",
        _findings("framework-driver-too-old", also=("driver ",)),
    ),
    "faq-status-35-no-driver": _doctor(
        "ci-runner-lost-its-gpu",
        _findings("no-driver", also=("CUDA runtime ",)),
    ),
    "faq-cudnn-too-old": _doctor(
        "mixed-torch-jax-tf",
        _findings("tensorflow-cudnn-too-old", "framework-import-order-conflict", also=("TensorFlow will log",)),
    ),
    "faq-cudnn-incomplete": _doctor(
        "incomplete-cudnn8",
        _findings("cudnn-incomplete", also=("missing beside it",)),
    ),
    "faq-wheels-overwritten": _doctor(
        "overwritten-wheels",
        _findings("wheel-files-overwritten"),
    ),
    "faq-require-gpu": Example(
        (
            "pytest",
            "examples/suite",
            "-p",
            "no:cacheprovider",
            "--require-gpu",
            f"--gpu-env={SNAPSHOTS}/gpu-less-ci-machine.json",
        ),
        _session_causes,
    ),
}


def run(example: Example) -> str:
    program, *args = example.command
    launch = {"pytest-cudnn": ["-m", "pytest_cudnn"], "pytest": ["-m", "pytest"], "python": []}[program]
    environ = {key: value for key, value in os.environ.items() if not key.startswith(("PYTEST_", "GITHUB_", "CUDA_"))}
    # A wide terminal: pytest cuts summary lines to the terminal's width.
    environ.update(COLUMNS="10000", PY_COLORS="0", NO_COLOR="1")
    completed = subprocess.run(
        [sys.executable, *launch, *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=environ,
        timeout=120,
        check=False,
    )
    lines = completed.stdout.rstrip("\n").splitlines()
    return "\n".join(example.keep(lines)).rstrip() + "\n"


_BLOCK = re.compile(r"(<!-- example: (?P<name>[\w.-]+) -->\n```text\n)(?P<body>.*?)(```\n<!-- /example -->)", re.S)


def render(text: str, outputs: Mapping[str, str]) -> str:
    return _BLOCK.sub(lambda m: m.group(1) + outputs.get(m.group("name"), m.group("body")) + m.group(4), text)


def pages() -> list[Path]:
    """Every page that may show examples: the README, then the documentation site's pages."""
    return [README, *sorted(DOCS.rglob("*.md"))]


def shown(text: str) -> dict[str, str]:
    """The examples a page shows, by name, with their text."""
    return {m.group("name"): m.group("body") for m in _BLOCK.finditer(text)}


def _known(page: Path, text: str) -> None:
    unknown = sorted(set(shown(text)) - set(EXAMPLES))
    if unknown:
        raise SystemExit(f"{page.relative_to(ROOT)} names examples this script does not know: {', '.join(unknown)}")


def differences(text: str, printed: Mapping[str, str] | None = None, page: Path = README) -> list[str]:
    """The names of the examples on a page (``text``, read from ``page``) whose text differs from what their command
    prints now (or, given ``printed``, from the text it gives for each name: the comparison alone, without running
    anything)."""
    _known(page, text)
    if printed is None:
        return [name for name, body in shown(text).items() if run(EXAMPLES[name]) != body]
    return [name for name, body in shown(text).items() if printed.get(name) != body]


def stale(printed: Mapping[str, str] | None = None) -> list[tuple[Path, str]]:
    """Each (page, example) whose text differs from what its command prints now, every example run once."""
    texts = {page: page.read_text(encoding="utf-8") for page in pages()}
    for page, text in texts.items():
        _known(page, text)
    if printed is None:
        printed = {name: run(EXAMPLES[name]) for name in sorted({n for t in texts.values() for n in shown(t)})}
    return [(page, name) for page, text in texts.items() for name in differences(text, printed, page)]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare only; exit 1 naming the blocks that differ")
    args = parser.parse_args(argv)
    if args.check:
        found = stale()
        for page, name in found:
            where = page.relative_to(ROOT)
            print(f"{where}: example {name!r} differs from what `{EXAMPLES[name].shown()}` prints", file=sys.stderr)
        return 1 if found else 0
    texts = {page: page.read_text(encoding="utf-8") for page in pages()}
    for page, text in texts.items():
        _known(page, text)
    names = sorted({name for text in texts.values() for name in shown(text)})
    printed = {name: run(EXAMPLES[name]) for name in names}
    for page, text in texts.items():
        rendered = render(text, printed)
        if rendered != text:
            page.write_text(rendered, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
