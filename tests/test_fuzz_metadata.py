"""Every reader of installed metadata, fuzzed where it reads: whatever one file of an install says, the probe answers.

One site folder holds PyTorch (CUDA 13) with the nvidia wheels it loads (installed with their RECORDs), TensorFlow,
JAX with its CUDA 12 plugin and ONNX Runtime, as tests/frameworkhosts.py lays them out. Each example replaces the
text of one of its metadata files (a RECORD, a METADATA, torch's ``version.py`` and ``macros.h``, TensorFlow's
``build_info.py``, ONNX Runtime's ``build_and_package_info.py``) with hostile text, or that file's own text with
one character swapped for a hostile one, then runs the whole probe in this process without its child (every
library answer "unanswered"), the diagnosis and the doctor's views over it. Nothing may escape: the field test
of 2026-11-29 (A1) found that one RECORD size written as ``²`` took down every pytest session.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_cudnn.diagnosis import diagnose, judge_environment, verdict
from pytest_cudnn.environment import Environment
from pytest_cudnn.native.isolation import ProbeFailure
from pytest_cudnn.probing.host import probe_environment
from pytest_cudnn.report import doctor_json, doctor_text

from .frameworkhosts import plant_jax, plant_nvidia_wheel, plant_onnxruntime, plant_tensorflow, plant_torch
from .simhost import Compiler

pytestmark = [
    pytest.mark.e2e,  # the probe runs ldconfig -p
    pytest.mark.skipif(sys.platform != "linux" or shutil.which("gcc") is None, reason="needs Linux and gcc"),
]

# Characters that break a reader that trusts its input: digits int() refuses though str.isdigit() accepts them, digits
# of other scripts that int() takes, separators of the formats read (CSV, RFC 822 headers, Python literals, dotted
# versions), control characters, a path that leaves the site.
HOSTILE = (
    "\u00b2",
    "\u00b3",
    "\u2460",
    "\u0663",
    "\uff11",
    ",",
    '"',
    "'",
    "\n",
    "\r",
    ":",
    ".",
    "=",
    "\x00",
    "\x1b",
    "\\",
    "../",
    "-1",
    "9" * 30,
    "\ufeff",
    "\u202e",
    "\ud7ff",
)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, compiler: Compiler) -> Path:
    folder = tmp_path_factory.mktemp("fuzzed") / "site-packages"
    folder.mkdir()
    plant_torch(folder, compiler)
    plant_nvidia_wheel(
        folder, compiler, "cudnn", cudnn=(9, 26, 0), cudnn_cudart=13020, distribution=("nvidia-cudnn-cu13", "9.26.0.51")
    )
    plant_nvidia_wheel(folder, compiler, "cu13", cudart=13020, distribution=("nvidia-cuda-runtime", "13.2.51"))
    plant_tensorflow(folder, compiler)
    plant_jax(folder, compiler)
    plant_onnxruntime(folder, compiler)
    return folder


def _text_files(site: Path) -> list[Path]:
    names = {"RECORD", "METADATA", "version.py", "macros.h", "build_info.py", "build_and_package_info.py"}
    return sorted(path for path in site.rglob("*") if path.name in names and path.is_file())


def _probe(site: Path) -> Environment:
    with mock.patch.object(sys, "path", [str(site)]):
        return probe_environment(environ={"PATH": "/usr/bin:/bin"}, child=ProbeFailure("no child in this test"))


def _views(env: Environment) -> None:
    findings = tuple(diagnose(env))
    result = verdict(list(findings))
    judged = judge_environment(env, findings)
    text = doctor_text(judged, result)
    assert all(ch.isprintable() or ch in "\n" for ch in text), text
    json.dumps(doctor_json(judged, result))
    Environment.from_json(json.loads(json.dumps(env.to_json())))  # what was read is a snapshot that reads back


@pytest.fixture
def files(site: Path) -> Iterator[list[Path]]:
    found = _text_files(site)
    saved = {path: path.read_bytes() for path in found}
    yield found
    for path, data in saved.items():
        path.write_bytes(data)


def test_the_unfuzzed_site_has_each_kind_of_file_and_every_framework(site: Path, files: list[Path]) -> None:
    assert {path.name for path in files} == {
        "RECORD",
        "METADATA",
        "version.py",
        "macros.h",
        "build_info.py",
        "build_and_package_info.py",
    }
    env = _probe(site)
    assert {build.name for build in env.frameworks} == {"torch", "tensorflow", "jax", "onnxruntime"}
    assert env.wheel_files, "the RECORDs of the wheels torch loads were read"
    _views(env)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(data=st.data())
def test_any_one_damaged_metadata_file_is_answered_never_raised(
    files: list[Path], site: Path, data: st.DataObject
) -> None:
    path = data.draw(st.sampled_from(files), label="file")
    original = path.read_bytes()
    text = original.decode("utf-8", "replace")
    replaced = data.draw(
        st.one_of(
            st.lists(st.one_of(st.characters(), st.sampled_from(HOSTILE)), max_size=60).map("".join),
            st.tuples(st.integers(0, max(len(text) - 1, 0)), st.sampled_from(HOSTILE)).map(
                lambda at: text[: at[0]] + at[1] + text[at[0] + 1 :]
            ),
            # A digit swapped: where sizes, versions and majors are read.
            st.tuples(
                st.sampled_from([i for i, ch in enumerate(text) if ch.isdigit()] or [0]), st.sampled_from(HOSTILE)
            ).map(lambda at: text[: at[0]] + at[1] + text[at[0] + 1 :]),
        ),
        label="text",
    )
    path.write_bytes(replaced.encode("utf-8", "surrogatepass"))
    try:
        _views(_probe(site))
    finally:
        path.write_bytes(original)


@pytest.mark.parametrize("size", ["\u00b2", "\u2460", "\u0663", "\uff11"])
def test_a_record_size_in_digits_int_refuses_costs_only_its_line(files: list[Path], site: Path, size: str) -> None:
    # The field test's A1: '²'.isdigit() is True and int('²') raises; the doctor, the snapshot and every pytest
    # session ended in a traceback. Here a sibling library's line holds the size, and the loaded library's line
    # another size than the disk's, so that the RECORD is also checked whole.
    record = next(path for path in files if path.name == "RECORD" and path.parent.name.startswith("nvidia_cudnn"))
    lines = record.read_text().splitlines()
    front = next(i for i, line in enumerate(lines) if line.startswith("nvidia/cudnn/lib/libcudnn.so.9,"))
    sibling = next(i for i, line in enumerate(lines) if "libcudnn_graph" in line)
    name, digest, real = lines[front].split(",")
    lines[front] = f"{name},{digest},{int(real) + 1}"
    name, digest, _ = lines[sibling].split(",")
    lines[sibling] = f"{name},{digest},{size}"
    record.write_text("\n".join(lines) + "\n")
    env = _probe(site)
    check = next(check for check in env.wheel_checks if check.distribution == "nvidia-cudnn-cu13")
    sized = [line for line in lines if line.rsplit(",", 1)[-1]]
    assert check.files == len(sized) - 1  # the damaged line is no size to check; the others are
    assert check.differing == ("nvidia/cudnn/lib/libcudnn.so.9",)
    _views(env)
