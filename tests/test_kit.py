"""The test kit's stand-in build cache, which the pytest-xdist workers of one run share (tests/conftest.py): each
stand-in is built once however many workers ask for it at the same time, and none is handed out half-written."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

from .simhost import Compiler

pytestmark = pytest.mark.e2e  # the compiler the kit calls is a child process

# A compiler that records each call and builds only once the three other callers wait for the build cache's lock
# (flock(2) on a .lock file beside -o): /proc/locks lists a waiting lock with "->" (proc(5), /proc/locks), then
# its device:inode. It writes the source to the -o path (the kit's command line is ARGV -o OUT SOURCE). Should
# the others never wait, it says so after a minute, and the test fails.
SLOW_COMPILER = """
import glob, os, sys, time
args = sys.argv[1:]
out = args[args.index("-o") + 1]
locks = {os.stat(path).st_ino for path in glob.glob(os.path.join(os.path.dirname(out), ".*.lock"))}

def waiting():
    with open("/proc/locks") as table:
        rows = [line.split() for line in table]
    return sum(1 for row in rows if row[1] == "->" and int(row[6].split(":")[2]) in locks)

deadline = time.monotonic() + 60
while waiting() < 3 and time.monotonic() < deadline:
    time.sleep(0.01)
with open(args[0], "a") as log:
    log.write("built\\n" if waiting() >= 3 else "built, but no other caller was waiting\\n")
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
