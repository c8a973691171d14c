"""The cache of what files say (:mod:`pytest_cudnn.probe.facts`, issue 28): never stale, never trusted blindly,
never an error.

The property: on a simulated host with PyTorch, the nvidia wheels it loads (installed with their RECORDs), a driver
and a copy of cuDNN on ``LD_LIBRARY_PATH``, any sequence of changes to the host (a library replaced, one rewritten in
place with its size and mtime put back, a RECORD edited, a wheel installed over another or removed, a copy added to a
folder, ``LD_LIBRARY_PATH`` and other variables, the loader's cache, the driver, the GPU count, MIG) leaves the
probe that reads through the cache with the environment, the findings and the verdict of a probe that reads every
file: what a snapshot would hold (all but when and how long it probed) is the same, warm or cold.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import stat
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_cudnn.cli import main
from pytest_cudnn.diagnosis import judge_environment
from pytest_cudnn.environment import Environment
from pytest_cudnn.probe.answers import Batch
from pytest_cudnn.probe.facts import LIMIT, FileFacts, cache_file, identity, remembered, using
from pytest_cudnn.probe.wheels import record_lines
from pytest_cudnn.probing.host import probe_environment

from .frameworkhosts import plant_nvidia_wheel, plant_torch
from .simhost import Compiler, SimGpu, SimHost, SimMig

needs_gcc = pytest.mark.skipif(sys.platform != "linux" or shutil.which("gcc") is None, reason="needs Linux and gcc")


# The cache file itself ---------------------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def settled_at_once(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file just written is racy (facts.RACY) and its facts are not kept: these tests write their files and read
    them at once, so they are taken as settled, except where raciness is what is tested."""
    if "racy" not in request.node.name:
        monkeypatch.setattr("pytest_cudnn.probe.facts.RACY", -(10**18))


def test_a_racy_file_is_read_again_until_it_has_settled(tmp_path: Path) -> None:
    environ, data = _cache(tmp_path), tmp_path / "data.txt"
    data.write_text("a\n")
    facts = _count(environ, data)[1]
    assert facts.reads == 1  # changed less than RACY ago: the coarse clock may not tell the next
    assert not facts.new
    assert _count(environ, data)[1].reads == 1


def _cache(tmp_path: Path) -> dict[str, str]:
    return {"XDG_CACHE_HOME": str(tmp_path / "cache"), "HOME": str(tmp_path)}


def _count(environ: dict[str, str], path: Path, kind: str = "lines") -> tuple[int, FileFacts]:
    """The number of lines of ``path`` read through a cache loaded from ``environ``, which is then saved."""
    facts = FileFacts.load(environ)
    with using(facts):
        value = remembered(kind, str(path), [str(path)], lambda: len(path.read_text().splitlines()), int, _whole)
    assert facts.save() is None
    return value, facts


def _whole(raw: Any) -> int:
    if not isinstance(raw, int):
        raise TypeError("not a count")
    return raw


def test_a_fact_is_read_once_then_kept_under_its_files_identity(tmp_path: Path) -> None:
    environ, data = _cache(tmp_path), tmp_path / "data.txt"
    data.write_text("a\nb\n")
    assert _count(environ, data)[1].reads == 1
    value, facts = _count(environ, data)
    assert (value, facts.hits, facts.reads) == (2, 1, 0)
    path = cache_file(environ)
    assert path is not None
    assert path.startswith(str(tmp_path / "cache" / "pytest-cudnn") + "/")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode) == 0o700


def test_a_file_rewritten_with_its_size_and_mtime_put_back_is_read_again(tmp_path: Path) -> None:
    environ, data = _cache(tmp_path), tmp_path / "data.txt"
    data.write_text("a\nb\n")
    _count(environ, data)
    before = os.stat(data)
    data.write_text("a\n\n\n")  # the same size, one more line
    os.utime(data, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(data)
    assert (after.st_mtime_ns, after.st_size, after.st_ino) == (before.st_mtime_ns, before.st_size, before.st_ino)
    value, facts = _count(environ, data)
    assert (value, facts.hits, facts.reads) == (3, 0, 1)


def test_a_file_replaced_by_another_is_read_again(tmp_path: Path) -> None:
    environ, data, other = _cache(tmp_path), tmp_path / "data.txt", tmp_path / "other.txt"
    data.write_text("a\n")
    _count(environ, data)
    other.write_text("b\n")
    os.replace(other, data)
    assert _count(environ, data)[1].reads == 1


@pytest.mark.parametrize(
    ("spoil", "said"),
    [
        (lambda path: path.write_text("{not json"), "damaged: not JSON"),
        (lambda path: path.write_text('{"schema": "pytest-cudnn/environment"}'), "not a pytest-cudnn cache"),
        (lambda path: path.chmod(0o666), "others may write it (mode 666)"),
        (lambda path: path.write_bytes(b" " * (LIMIT + 1)), f"{LIMIT + 1} bytes, more than {LIMIT}"),
        (
            lambda path: path.write_text(json.dumps({**json.loads(path.read_text()), "plugin": "0.0.1"})),
            "written by another version of pytest-cudnn",
        ),
    ],
)
def test_a_cache_not_to_be_trusted_is_ignored_with_a_note(
    tmp_path: Path, spoil: Callable[[Path], object], said: str
) -> None:
    environ, data = _cache(tmp_path), tmp_path / "data.txt"
    data.write_text("a\n")
    _count(environ, data)
    path = Path(str(cache_file(environ)))
    spoil(path)
    facts = FileFacts.load(environ)
    assert facts.note == f"cache {path} ignored: {said}"
    with using(facts):
        assert remembered("lines", str(data), [str(data)], lambda: 1, int, _whole) == 1
    assert facts.reads == 1
    assert said in facts.summary()


def test_a_cache_of_another_user_is_ignored(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("only root can give a file to another user")
    environ, data = _cache(tmp_path), tmp_path / "data.txt"
    data.write_text("a\n")
    _count(environ, data)
    path = Path(str(cache_file(environ)))
    os.chown(path, 12345, -1)
    assert FileFacts.load(environ).note == f"cache {path} ignored: owned by user 12345, not by this one"


def test_a_value_that_does_not_decode_is_read_again(tmp_path: Path) -> None:
    environ, data = _cache(tmp_path), tmp_path / "data.txt"
    data.write_text("a\n")
    _count(environ, data)
    path = Path(str(cache_file(environ)))
    document = json.loads(path.read_text())
    for entry in document["facts"].values():
        entry[1] = "not a count"
    path.write_text(json.dumps(document))
    path.chmod(0o600)
    value, facts = _count(environ, data)
    assert (value, facts.reads, facts.note) == (1, 1, None)


def test_a_symbolic_link_in_place_of_the_cache_is_not_followed(tmp_path: Path) -> None:
    environ, data = _cache(tmp_path), tmp_path / "data.txt"
    data.write_text("a\n")
    _count(environ, data)
    path = Path(str(cache_file(environ)))
    target = tmp_path / "elsewhere.json"
    path.rename(target)
    path.symlink_to(target)
    facts = FileFacts.load(environ)
    assert facts.note is not None
    assert facts.note.startswith(f"cache {path} ignored:")
    with using(facts):
        remembered("lines", str(data), [str(data)], lambda: 1, int, _whole)
    assert facts.save() == f"cache {path} not written: is a symbolic link (to {target}), not a regular file"
    assert path.is_symlink()  # left as it was


def test_a_home_that_cannot_be_written_costs_the_cache_and_nothing_else(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    home.chmod(0o500)
    data = tmp_path / "data.txt"
    data.write_text("a\n")
    try:
        facts = FileFacts.load({"HOME": str(home)})
        with using(facts):
            assert remembered("lines", str(data), [str(data)], lambda: 1, int, _whole) == 1
        problem = facts.save()
        if os.geteuid() != 0:  # root writes anywhere
            assert problem is not None
            assert problem.startswith(f"cache {home}/.cache/pytest-cudnn/facts-")
    finally:
        home.chmod(0o700)
    assert FileFacts.load({}).summary() == "no cache: neither XDG_CACHE_HOME nor HOME is an absolute path"


@pytest.mark.parametrize("value", ["0", "off", "OFF", "false", "no"])
def test_the_variable_turns_the_cache_off(tmp_path: Path, value: str) -> None:
    facts = FileFacts.load({**_cache(tmp_path), "PYTEST_CUDNN_CACHE": value})
    assert facts.path is None
    assert facts.summary() == "no cache: turned off"


def test_a_missing_file_is_read_and_never_kept(tmp_path: Path) -> None:
    facts = FileFacts(str(tmp_path / "cache.json"))
    with using(facts):
        assert remembered("lines", "/nonexistent", ["/nonexistent"], lambda: 0, int, _whole) == 0
    assert not facts.new
    assert identity("/nonexistent") is None


# The property: warm equals cold on a host that changes ------------------------------------------------------------

TORCH_CUDNN = ("nvidia-cudnn-cu13", "9.26.0.51")


@contextmanager
def _on(host: SimHost) -> Iterator[dict[str, str]]:
    """The in-process probe sees ``host``: its site on sys.path, its PATH for ldconfig."""
    environ = host.environ()
    with (
        mock.patch.object(sys, "path", [str(host.site_packages)]),
        mock.patch.dict(os.environ, {"PATH": environ["PATH"]}),
    ):
        yield environ


def _snapshot(env: Environment) -> dict[str, Any]:
    document = env.to_json()
    document.pop("probed_at"), document.pop("probe_seconds")
    return document


def _judged(env: Environment) -> tuple[Any, ...]:
    diagnosis = judge_environment(env)
    return tuple(diagnosis.findings), diagnosis.verdict


class Changes:
    """The changes a host can go through between two runs; each keeps the host one the probe can read."""

    def __init__(self, host: SimHost, compiler: Compiler) -> None:
        self.host, self.compiler = host, compiler
        self.system = host.folder("opt/cudnn/lib")
        self.step = 0

    def replace_library(self) -> None:  # a new file in place of the old: another inode
        torch = self.host.site_packages / "torch"
        shutil.rmtree(torch, ignore_errors=True)
        needed = ("libcudart.so.13", "libcudnn.so.9") if self.step % 2 else ("libcudart.so.13",)
        plant_torch(self.host.site_packages, self.compiler, needed=needed, sass=("sm_80",) if self.step % 2 else ())

    def rewrite_in_place(self) -> None:  # the same size, the mtime put back: only the ctime tells
        front = self.host.site_packages / "nvidia" / "cudnn" / "lib" / "libcudnn.so.9"
        if not front.exists():
            return
        before = os.stat(front)
        data = bytearray(front.read_bytes())
        data[-1] = (data[-1] + next(_DISTINCT)) % 256  # never the bytes of an earlier change
        with open(front, "r+b") as handle:
            handle.write(data)
        os.utime(front, ns=(before.st_atime_ns, before.st_mtime_ns))

    def edit_record(self) -> None:
        for record in self.host.site_packages.glob("nvidia_*.dist-info/RECORD"):
            lines = record.read_text().splitlines()
            record.write_text("\n".join(line.replace(",sha256=", ",sha256=X", 1) for line in lines[:1]) + "\n" +
                              "\n".join(lines[1:]) + "\n")  # fmt: skip
            return

    def install_wheel_over(self) -> None:  # a CUDA 12 cuDNN wheel writes the same files over the CUDA 13 one's
        plant_nvidia_wheel(
            self.host.site_packages, self.compiler, "cudnn", cudnn=(9, 10 + self.step % 5, 0), cudnn_cudart=12090,
            distribution=("nvidia-cudnn-cu12", f"9.{10 + self.step % 5}.0.1"),
        )  # fmt: skip

    def remove_wheel(self) -> None:
        shutil.rmtree(self.host.site_packages / "nvidia" / "cu13", ignore_errors=True)
        for info in self.host.site_packages.glob("nvidia_cuda_runtime-*.dist-info"):
            shutil.rmtree(info)

    def reinstall_wheels(self) -> None:
        plant_nvidia_wheel(
            self.host.site_packages, self.compiler, "cudnn", cudnn=(9, 26, 0), cudnn_cudart=13020,
            distribution=TORCH_CUDNN,
        )  # fmt: skip
        plant_nvidia_wheel(
            self.host.site_packages,
            self.compiler,
            "cu13",
            cudart=13020,
            distribution=("nvidia-cuda-runtime", "13.2.51"),
        )

    def replace_nccl(self) -> None:  # another NCCL build in its place: what its file says of its CUDA changes
        cuda = ("12.9", "13.0")[self.step % 2]
        plant_nvidia_wheel(
            self.host.site_packages, self.compiler, "nccl", nccl=(2, 28 + self.step % 3, 3), nccl_cuda=cuda,
            distribution=(f"nvidia-nccl-cu{cuda[:2]}", f"2.{28 + self.step % 3}.3"),
        )  # fmt: skip

    def add_copy_to_a_folder(self) -> None:  # the folder's listing changes
        self.host.add_cudnn(str(self.system.relative_to(self.host.root)), (9, 1 + self.step % 7, 0), 12090)

    def library_path(self) -> None:
        folder = str(self.system)
        if folder in self.host.ld_library_path:
            self.host.ld_library_path.remove(folder)
        else:
            self.host.ld_library_path.append(folder)

    def variable(self) -> None:
        self.host.variables["CUDA_VISIBLE_DEVICES"] = str(self.step % 3)

    def loader_cache(self) -> None:  # another ldconfig -p listing: a program first on PATH
        folder = self.host.folder(f"sbin{self.step}")
        listing = folder / "listing.txt"
        listed = f"\tlibcudnn.so.9 (libc6,x86-64) => {self.system}/libcudnn.so.9\n" if self.step % 2 else ""
        listing.write_text(f"{listed.count(chr(10))} libs found in cache `/etc/ld.so.cache'\n{listed}")
        fake = folder / "ldconfig"
        fake.write_text(f"#!/bin/sh\ncat '{listing}'\n")
        fake.chmod(0o755)
        self.host.variables["PATH"] = f"{folder}:{os.environ.get('PATH', '/usr/bin:/bin')}"

    def driver(self) -> None:
        self.host.add_driver([SimGpu()], version=("580.65.06", "535.104.05")[self.step % 2], cuda_version=13000)

    def gpu_count(self) -> None:
        gpus = [SimGpu(uuid=f"GPU-{i:08d}-0000-0000-0000-000000000000") for i in range(1 + self.step % 3)]
        self.host.add_driver(gpus, version="580.65.06", cuda_version=13000)

    def mig(self) -> None:
        mig = SimMig() if self.step % 2 else None
        gpu = SimGpu(mig_mode=1, mig=(mig,)) if mig else SimGpu(mig_mode=0)
        self.host.add_driver([gpu], version="580.65.06", cuda_version=13000)


CHANGES = [name for name in vars(Changes) if not name.startswith("_")]
_DISTINCT = itertools.cycle(range(1, 256))


@pytest.fixture
def torch_host(host: SimHost, compiler: Compiler) -> SimHost:
    host.add_driver([SimGpu()], version="580.65.06", cuda_version=13000)
    plant_torch(host.site_packages, compiler)
    Changes(host, compiler).reinstall_wheels()
    return host


def _probe(host: SimHost, facts: FileFacts | None) -> Environment:
    with _on(host) as environ:
        return probe_environment(environ=environ, facts=facts)


@needs_gcc
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(changes=st.lists(st.sampled_from(CHANGES), min_size=1, max_size=3))
def test_warm_equals_cold_whatever_changed(torch_host: SimHost, compiler: Compiler, changes: list[str]) -> None:
    cache = {**_cache(torch_host.root), **{"PYTEST_CUDNN_CACHE": "on"}}
    _probe(torch_host, FileFacts.load(cache))  # the cache as the last run left it
    change = Changes(torch_host, compiler)
    for step, name in enumerate(changes):
        change.step = step + len(torch_host.variables)
        getattr(change, name)()
    warm_facts = FileFacts.load(cache)
    warm = _probe(torch_host, warm_facts)
    cold = _probe(torch_host, None)
    assert warm_facts.hits > 0, warm_facts.summary()  # the cache was used, not bypassed
    assert _snapshot(warm) == _snapshot(cold), changes
    assert _judged(warm) == _judged(cold), changes


@needs_gcc
@pytest.mark.parametrize("change", CHANGES)
def test_warm_equals_cold_after_each_kind_of_change(torch_host: SimHost, compiler: Compiler, change: str) -> None:
    cache = _cache(torch_host.root)
    _probe(torch_host, FileFacts.load(cache))
    getattr(Changes(torch_host, compiler), change)()
    warm_facts = FileFacts.load(cache)
    warm = _probe(torch_host, warm_facts)
    cold = _probe(torch_host, None)
    assert warm_facts.hits > 0, warm_facts.summary()
    assert _snapshot(warm) == _snapshot(cold)
    assert _judged(warm) == _judged(cold)


@needs_gcc
def test_a_healthy_torch_host_reads_no_record_whole_and_a_warm_probe_reads_almost_nothing(torch_host: SimHost) -> None:
    cache = _cache(torch_host.root)

    def one_line(text: str) -> Any:
        assert text.count("\n") <= 1, "a RECORD parsed whole"
        return record_lines(text)

    with mock.patch("pytest_cudnn.probe.wheels.record_lines", side_effect=one_line):
        cold_facts = FileFacts.load(cache)
        cold = _probe(torch_host, cold_facts)
    assert cold.wheel_files  # every loaded file is its wheel's own: no whole check
    assert not cold.wheel_checks
    warm_facts = FileFacts.load(cache)
    with mock.patch("pytest_cudnn.probe.wheels.sha256_of", side_effect=AssertionError("hashed again")):
        warm = _probe(torch_host, warm_facts)
    assert _snapshot(warm) == _snapshot(cold)
    assert warm_facts.hits == cold_facts.reads - warm_facts.reads, warm_facts.summary()
    assert warm_facts.reads <= 2, warm_facts.summary()


# The plugin's settings -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "variable", "ini", "said"),
    [
        ((), None, None, "file facts from the cache"),
        (("--gpu-cache=off",), None, None, "no cache: turned off"),
        ((), "0", None, "no cache: turned off"),
        ((), None, "false", "no cache: turned off"),
        (("--gpu-cache=on",), "off", "false", "file facts from the cache"),  # the command line wins
        ((), "1", "false", "file facts from the cache"),  # the variable wins over the ini key
    ],
)
def test_the_cache_setting_and_its_precedence(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    args: tuple[str, ...],
    variable: str | None,
    ini: str | None,
    said: str,
) -> None:
    pytester.makepyfile("def test_a():\n    pass\n")
    if ini is not None:
        pytester.makeini(f"[pytest]\ngpu_cache = {ini}\n")
    monkeypatch.setenv("XDG_CACHE_HOME", str(pytester.path / "cache"))
    if variable is None:
        monkeypatch.delenv("PYTEST_CUDNN_CACHE", raising=False)
    else:
        monkeypatch.setenv("PYTEST_CUDNN_CACHE", variable)
    result = pytester.runpytest_subprocess("-v", "-p", "no:cacheprovider", *args)
    result.assert_outcomes(passed=1)
    probed = [line for line in result.outlines if line.startswith("pytest-cudnn: probed in ")]
    assert len(probed) == 1, result.outlines
    assert said in probed[0], probed


def test_a_bad_cache_variable_is_a_usage_error_naming_it(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pytester.makepyfile("def test_a():\n    pass\n")
    monkeypatch.setenv("PYTEST_CUDNN_CACHE", "sometimes")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*the environment variable PYTEST_CUDNN_CACHE='sometimes': expected 1/0, true/false, yes/no or on/off*"]
    )
    # The doctor and the snapshot read the same variable: a usage error there too, before anything is probed.
    capsys.readouterr()
    assert main(["doctor"]) == 2
    assert capsys.readouterr().err == (
        "pytest-cudnn: error: the environment variable PYTEST_CUDNN_CACHE='sometimes': expected 1/0, true/false, "
        "yes/no or on/off\n"
    )


@needs_gcc
def test_a_warm_probe_loads_no_catalog_library_again_until_its_folder_changes(
    torch_host: SimHost, compiler: Compiler
) -> None:
    """The version calls of NCCL and cuBLAS answer constants of the file: asked once, then kept under the identity
    of the file and its folder. Loading the real cuBLAS costs 55-115 ms, on every run before this."""
    plant_nvidia_wheel(torch_host.site_packages, compiler, "nccl", nccl=(2, 30, 7), nccl_cuda="13.0",
                       distribution=("nvidia-nccl-cu13", "2.30.7"))  # fmt: skip
    torch_host.add_cublas(torch_host.site_packages / "nvidia" / "cublas" / "lib", (12, 9, 3), 12080)
    cache = _cache(torch_host.root)
    asked: list[str] = []
    real = Batch.library

    def counting(self: Batch, path: str, *args: Any) -> Any:
        asked.append(path.rsplit("/", 1)[-1])
        return real(self, path, *args)

    with mock.patch.object(Batch, "library", counting):
        cold = _probe(torch_host, FileFacts.load(cache))
        assert sorted(asked) == ["libcublas.so.12", "libcublasLt.so.12", "libnccl.so.2"]
        asked.clear()
        warm = _probe(torch_host, FileFacts.load(cache))
        assert asked == []
        assert warm.libraries == cold.libraries
        plant_nvidia_wheel(torch_host.site_packages, compiler, "nccl", nccl=(2, 29, 3), nccl_cuda="12.9",
                           distribution=("nvidia-nccl-cu12", "2.29.3"))  # fmt: skip
        again = _probe(torch_host, FileFacts.load(cache))
    assert asked == ["libnccl.so.2"]  # its folder changed; cuBLAS's did not
    assert [copy.version for copy in again.libraries if copy.kind == "nccl"] == ["2.29.3"]
