"""Plugin overhead on a 3000-test suite whose markers are satisfied, against the same run with -p no:cudnn.

Goal: at most 1.15x, and at most 20 us per marked test. The environment is a replayed snapshot in both runs,
so this measures the plugin's per-test work; the one-off probe is measured by bench_doctor.py.

    python benchmarks/bench_plugin.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import tempfile
from pathlib import Path

from _timing import describe, interleaved

ROOT = Path(__file__).resolve().parent.parent
SNAPSHOT = ROOT / "examples" / "snapshots" / "healthy-tf2.18-a100.json"
MARKED, PLAIN = 2000, 1000

SUITE = f"""
import pytest

@pytest.mark.requires_cudnn(">=9")
@pytest.mark.requires_gpu(memory="1GiB", compute_capability=">=8.0")
@pytest.mark.parametrize("n", range({MARKED}))
def test_marked(n):
    pass

@pytest.mark.parametrize("n", range({PLAIN}))
def test_plain(n):
    pass
"""

# Registered for the baseline too, so that both runs do the same marker bookkeeping.
INI = """[pytest]
markers =
    requires_cudnn: x
    requires_gpu: x
"""


def suite(marked: int, plain: int, with_marks: bool) -> str:
    text = SUITE.replace(f"range({MARKED})", f"range({marked})").replace(f"range({PLAIN})", f"range({plain})")
    if not with_marks:
        text = text.replace("@pytest.mark.requires_cudnn", "# ").replace("@pytest.mark.requires_gpu", "# ")
    return text


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--per-test", type=int, default=20000, help="marked tests for the per-test measurement")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "test_marked.py").write_text(suite(MARKED, PLAIN, True))
        Path(folder, "test_many_marked.py").write_text(suite(args.per_test, 0, True))
        Path(folder, "test_many_unmarked.py").write_text(suite(args.per_test, 0, False))
        Path(folder, "pytest.ini").write_text(INI)
        base = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-x"]
        plugin = [*base, f"--gpu-env={SNAPSHOT}"]
        ratio = interleaved(
            {
                "without the plugin": [*base, "-p", "no:cudnn", "test_marked.py"],
                "with the plugin": [*plugin, "test_marked.py"],
            },
            args.repeat,
            cwd=folder,
        )
        many = interleaved(
            {
                "plugin, marked": [*plugin, "test_many_marked.py"],
                "no plugin, marked": [*base, "-p", "no:cudnn", "test_many_marked.py"],
                "plugin, unmarked": [*plugin, "test_many_unmarked.py"],
                "no plugin, unmarked": [*base, "-p", "no:cudnn", "test_many_unmarked.py"],
            },
            args.repeat,
            cwd=folder,
        )
    print(f"{platform.platform()}, Python {platform.python_version()}, {args.repeat} runs each, interleaved")
    print(f"{MARKED + PLAIN} tests, {MARKED} of them marked and satisfied:")
    print(describe(ratio, "without the plugin"))
    print(f"{args.per_test} tests, marked and unmarked, with and without the plugin:")
    print(describe(many, "no plugin, unmarked"))
    # pytest itself spends time on marks; the plugin's share is what it adds on marked tests beyond what it adds
    # on unmarked ones.
    cpu = {name: statistics.median(sample.cpu) for name, sample in many.items()}
    added_marked = cpu["plugin, marked"] - cpu["no plugin, marked"]
    added_unmarked = cpu["plugin, unmarked"] - cpu["no plugin, unmarked"]
    print(
        f"CPU the plugin adds: {added_marked / args.per_test * 1e6:.1f} us per marked test, "
        f"{added_unmarked / args.per_test * 1e6:.1f} us per unmarked test (fixed costs included); "
        f"per marked test beyond an unmarked one: {(added_marked - added_unmarked) / args.per_test * 1e6:.1f} us"
    )


if __name__ == "__main__":
    main()
