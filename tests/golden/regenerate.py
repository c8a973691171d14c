"""The doctor's golden outputs: for each snapshot in examples/snapshots/, what ``pytest-cudnn doctor`` prints by
default, with ``-v`` and with ``--json``, kept in tests/golden/doctor/ as <name>.txt, <name>.verbose.txt and
<name>.json (tests/test_doctor_views.py compares them with what the doctor prints now).

    python tests/golden/regenerate.py           rewrite them after a change to what the doctor says
    python tests/golden/regenerate.py --check   compare only; exit 1 naming each file that differs

The doctor runs in this process, from the repository's root (the snapshot's path is in its first line), writing to a
UTF-8 stream that is no terminal, with the colour variables (PY_COLORS, NO_COLOR, FORCE_COLOR) unset: the view a
pipe gets, Unicode marks, no colour.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

from pytest_cudnn import cli

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOTS = ROOT / "examples" / "snapshots"
GOLDEN = Path(__file__).resolve().parent / "doctor"
COMMAND = "python tests/golden/regenerate.py"
# The file each view is kept in (after the snapshot's name), and the doctor's arguments that print it.
VIEWS = {".txt": (), ".verbose.txt": ("-v",), ".json": ("--json",)}
_COLOUR_VARIABLES = ("PY_COLORS", "NO_COLOR", "FORCE_COLOR")


def snapshot_names() -> list[str]:
    return sorted(path.stem for path in SNAPSHOTS.glob("*.json"))


@contextlib.contextmanager
def _as_a_pipe_from_the_root() -> Iterator[None]:
    saved = {name: os.environ.pop(name) for name in _COLOUR_VARIABLES if name in os.environ}
    folder = Path.cwd()
    os.chdir(ROOT)
    try:
        yield
    finally:
        os.chdir(folder)
        os.environ.update(saved)


def doctor(name: str, *args: str) -> tuple[int, str]:
    """The doctor's exit status and output on the snapshot ``name``, given ``args``."""
    written = io.BytesIO()
    stream = io.TextIOWrapper(written, encoding="utf-8", newline="\n")
    with _as_a_pipe_from_the_root(), contextlib.redirect_stdout(stream), contextlib.redirect_stderr(io.StringIO()):
        code = cli.main(["doctor", *args, "--env", f"{SNAPSHOTS.relative_to(ROOT)}/{name}.json"])
    stream.flush()
    return code, written.getvalue().decode("utf-8")


def outputs(name: str) -> dict[str, tuple[int, str]]:
    """Each golden file's name for the snapshot ``name``, with the exit status and the text the doctor gives now."""
    return {f"{name}{suffix}": doctor(name, *args) for suffix, args in VIEWS.items()}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="compare only; exit 1 naming the files that differ")
    args = parser.parse_args(argv)
    GOLDEN.mkdir(exist_ok=True)
    wanted = {file: text for name in snapshot_names() for file, (_, text) in outputs(name).items()}
    stale = sorted(path.name for path in GOLDEN.iterdir() if path.name not in wanted)
    differ = [file for file, text in wanted.items() if _read(GOLDEN / file) != text]
    if args.check:
        for file in [*differ, *stale]:
            print(f"{GOLDEN.relative_to(ROOT) / file} differs from what the doctor prints now", file=sys.stderr)
        return 1 if differ or stale else 0
    for file in differ:
        (GOLDEN / file).write_text(wanted[file], encoding="utf-8", newline="\n")
    for file in stale:
        (GOLDEN / file).unlink()
    print(f"{len(differ)} written, {len(stale)} removed, {len(wanted) - len(differ)} unchanged")
    return 0


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


if __name__ == "__main__":
    sys.exit(main())
