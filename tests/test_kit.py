"""The test kit's stand-in build cache, which the pytest-xdist workers of one run share (tests/conftest.py): each
stand-in is built once however many workers ask for it at the same time, and none is handed out half-written."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

from .simhost import Compiler

pytestmark = pytest.mark.e2e  # the compiler the kit calls is a child process

# A compiler that records each call and takes its time, so that the callers overlap: it writes the source,
# a second later, to the -o path (the kit's command line is ARGV -o OUT SOURCE).
SLOW_COMPILER = """
import sys, time
args = sys.argv[1:]
with open(args[0], "a") as log:
    log.write("built\\n")
time.sleep(1)
out = args[args.index("-o") + 1]
with open(args[-1]) as source, open(out, "w") as built:
    built.write(source.read())
"""


def test_workers_asking_for_one_stand_in_together_build_it_once(tmp_path: Path) -> None:
    script, log = tmp_path / "cc.py", tmp_path / "calls.log"
    script.write_text(SLOW_COMPILER)
    cache = tmp_path / "shared"
    results: list[Path] = []

    def worker() -> None:  # each worker has its own Compiler on the shared folder, as each xdist worker has
        results.append(Compiler(cache).compile("libx.so", [sys.executable, str(script), str(log)], "int x;\n"))

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert log.read_text() == "built\n"
    assert len(results) == 4
    assert len(set(results)) == 1
    assert results[0].read_text() == "int x;\n"
