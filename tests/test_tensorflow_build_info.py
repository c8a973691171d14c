"""TensorFlow's build_info.py in every shape its releases shipped, read without executing it.

The files in tests/data/build_info are the bodies of build_info.py taken from the released wheels on PyPI
(license header removed), one per format generation and platform.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_cudnn.compat.tensorflow import library_names
from pytest_cudnn.environment import State
from pytest_cudnn.frameworks.tensorflow.reading import InvalidBuildInfo, parse_build_info, probe_tensorflow
from pytest_cudnn.probe.discovery import Layout

DATA = Path(__file__).parent / "data" / "build_info"


@pytest.mark.parametrize(
    ("filename", "shape", "cuda", "cudnn", "is_cuda"),
    [
        # 1.12 and 1.13 recorded no versions at all.
        ("tensorflow-gpu-1.12.0-linux.py", "module constants", None, None, True),
        ("tensorflow-gpu-1.13.1-win.py", "module constants", None, None, True),
        ("tensorflow-gpu-1.14.0-linux.py", "module constants", "10.0", "7", True),
        ("tensorflow-gpu-1.14.0-win.py", "module constants", "10.0", "7", True),
        # 1.15, 2.0 and 2.2 on Linux recorded the CUDA major only.
        ("tensorflow-1.15.0-linux.py", "module constants", "10", "7", True),
        ("tensorflow-gpu-2.0.0-linux.py", "module constants", "10", "7", True),
        ("tensorflow-2.1.0-linux.py", "module constants", "10.1", "7", True),
        ("tensorflow-2.1.0-win.py", "module constants", "10.1", "7", True),
        ("tensorflow-2.2.0-linux.py", "module constants", "10", "7", True),
        ("tensorflow-cpu-2.1.0-linux.py", "module constants", None, None, False),
        ("tensorflow-2.3.0-linux.py", "build_info dict", "10.1", "7", True),
        ("tensorflow-2.3.0-win.py", "build_info dict", "64_101", "64_7", True),
        ("tensorflow-cpu-2.3.0-linux.py", "build_info dict", None, None, False),
        ("tensorflow-2.4.0-linux.py", "build_info OrderedDict", "11.0", "8", True),
        ("tensorflow-2.4.0-win.py", "build_info OrderedDict", "64_110", "64_8", True),
        ("tensorflow-2.5.0-linux.py", "build_info OrderedDict", "11.2", "8", True),
        ("tensorflow-2.10.0-win.py", "build_info OrderedDict", "64_112", "64_8", True),
        ("tensorflow-2.14.0-linux.py", "build_info OrderedDict", "11.8", "8", True),
        ("tensorflow-2.15.0-linux.py", "build_info OrderedDict", "12.2", "8", True),
        ("tensorflow-2.18.0-linux.py", "build_info OrderedDict", "12.5.1", "9", True),
        ("tensorflow-2.21.0-linux.py", "build_info OrderedDict", "12.5.1", "9", True),
        # Native Windows builds after 2.10 are CPU-only.
        ("tensorflow-intel-2.15.0-win.py", "build_info OrderedDict", None, None, False),
        ("tensorflow-2.21.0-win.py", "build_info OrderedDict", None, None, False),
    ],
)
def test_every_shipped_format_parses(
    filename: str, shape: str, cuda: str | None, cudnn: str | None, is_cuda: bool
) -> None:
    info = parse_build_info((DATA / filename).read_text(), filename)
    assert info.format == shape
    assert info.fields.get("cuda_version") == cuda
    assert info.fields.get("cudnn_version") == cudnn
    assert info.fields["is_cuda_build"] is is_cuda


def test_windows_builds_carry_their_dll_names() -> None:
    info = parse_build_info((DATA / "tensorflow-2.4.0-win.py").read_text())
    assert info.fields["cudart_dll_name"] == "cudart64_110.dll"
    assert info.fields["cudnn_dll_name"] == "cudnn64_8.dll"


def test_windows_crlf_files_parse_alike() -> None:
    text = (DATA / "tensorflow-2.10.0-win.py").read_text()
    assert parse_build_info(text.replace("\n", "\r\n")) == parse_build_info(text)


@pytest.mark.parametrize(
    ("filename", "cudart", "cudnn"),
    [
        ("tensorflow-gpu-1.15.0-win.py", "cudart64_100.dll", "cudnn64_7.dll"),
        ("tensorflow-2.3.0-win.py", "cudart64_101.dll", "cudnn64_7.dll"),
        ("tensorflow-2.4.0-win.py", "cudart64_110.dll", "cudnn64_8.dll"),
        # build_info says cudart64_112.dll; the DLL TF 2.5-2.10 loads is cudart64_110.dll.
        ("tensorflow-2.10.0-win.py", "cudart64_110.dll", "cudnn64_8.dll"),
    ],
)
def test_windows_probe_reports_the_dll_names_tensorflow_really_loads(
    tmp_path: Path, filename: str, cudart: str, cudnn: str
) -> None:
    _plant(tmp_path / "sp", (DATA / filename).read_text())
    tf = probe_tensorflow(Layout(system="Windows", variables={}), [str(tmp_path / "sp")])
    assert (tf.cudart_name, tf.cudnn_name) == (cudart, cudnn)


def test_parsing_executes_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "executed"
    source = f"import os\nos.mkdir({str(marker)!r})\nbuild_info = {{'cuda_version': '11.2', 'is_cuda_build': True}}\n"
    assert parse_build_info(source).fields["cuda_version"] == "11.2"
    assert not marker.exists()


@pytest.mark.parametrize(
    ("source", "problem"),
    [
        ("def (:", "not valid Python"),
        ("import os\n", "no build fields found"),
        ("build_info = make_info()\n", "build_info is not a literal mapping"),
        ("build_info = {1: 'a'}\n", "build_info keys are not strings"),
        ("build_info = collections.OrderedDict(zip(a, b))\n", "build_info is not a literal mapping"),
        ("\x00", "not valid Python"),
    ],
)
def test_malformed_build_info_names_the_file_and_the_problem(source: str, problem: str) -> None:
    with pytest.raises(InvalidBuildInfo, match=f"^/x/build_info.py: {problem}"):
        parse_build_info(source, "/x/build_info.py")


@pytest.mark.parametrize(
    ("system", "cuda", "cudnn", "expected"),
    [
        ("Linux", "10.0", "7", ("libcudart.so.10.0", "libcudnn.so.7")),
        ("Linux", "10.1", "7", ("libcudart.so.10.1", "libcudnn.so.7")),
        ("Linux", "10", "7", (None, "libcudnn.so.7")),  # the minor is not recorded: unknown, not guessed
        ("Linux", "11.0", "8", ("libcudart.so.11.0", "libcudnn.so.8")),
        ("Linux", "11.2", "8", ("libcudart.so.11.0", "libcudnn.so.8")),
        ("Linux", "12.5.1", "9", ("libcudart.so.12", "libcudnn.so.9")),
        ("Linux", None, None, (None, None)),
        ("Windows", "10.1", "7", ("cudart64_101.dll", "cudnn64_7.dll")),
        ("Windows", "11.2", "8", ("cudart64_110.dll", "cudnn64_8.dll")),
        ("Windows", "10.0", "7", ("cudart64_100.dll", "cudnn64_7.dll")),
    ],
)
def test_library_names_tensorflow_asks_the_loader_for(
    system: str, cuda: str | None, cudnn: str | None, expected: tuple[str | None, str | None]
) -> None:
    assert library_names(system, cuda, cudnn) == expected


def _plant(site: Path, build_info: str, dist: str = "tensorflow", version: str = "2.3.1") -> None:
    platform = site / "tensorflow" / "python" / "platform"
    platform.mkdir(parents=True)
    (site / "tensorflow" / "__init__.py").write_text("raise RuntimeError('imported')\n")
    (platform / "build_info.py").write_text(build_info)
    meta = site / f"{dist.replace('-', '_')}-{version}.dist-info"
    meta.mkdir()
    (meta / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n\n")
    (meta / "top_level.txt").write_text("tensorflow\n")


LINUX = Layout(system="Linux", variables={})


def test_probe_reads_version_build_and_wheel_folders_from_files(tmp_path: Path) -> None:
    site = tmp_path / "site-packages"
    _plant(site, (DATA / "tensorflow-2.3.0-linux.py").read_text(), "tensorflow-gpu", "2.3.1")
    (site / "nvidia" / "cudnn" / "lib").mkdir(parents=True)
    (site / "tensorflow_estimator-2.3.0.dist-info").mkdir()  # a neighbour that does not provide the package
    tf = probe_tensorflow(LINUX, [str(site)])
    assert (tf.state, tf.distribution, tf.version) == (State.FOUND, "tensorflow-gpu", "2.3.1")
    assert (tf.cuda_version, tf.cudnn_version, tf.is_cuda_build) == ("10.1", "7", True)
    assert (tf.cudart_name, tf.cudnn_name) == ("libcudart.so.10.1", "libcudnn.so.7")
    assert tf.library_dirs == (str(site / "nvidia" / "cudnn" / "lib"),)
    assert tf.compute_capabilities[-1] == "compute_70"
    assert tf.reason is None


def test_probe_says_plainly_when_the_build_records_no_cuda_version(tmp_path: Path) -> None:
    _plant(
        tmp_path / "site-packages", (DATA / "tensorflow-gpu-1.13.1-linux.py").read_text(), "tensorflow-gpu", "1.13.1"
    )
    tf = probe_tensorflow(LINUX, [str(tmp_path / "site-packages")])
    assert tf.state is State.FOUND
    assert tf.cuda_version is None
    assert tf.reason == "its build_info records no CUDA version"


def test_probe_of_a_cpu_build_records_no_libraries(tmp_path: Path) -> None:
    _plant(tmp_path / "sp", (DATA / "tensorflow-cpu-2.3.0-linux.py").read_text(), "tensorflow-cpu", "2.3.0")
    tf = probe_tensorflow(LINUX, [str(tmp_path / "sp")])
    assert (tf.is_cuda_build, tf.cudart_name, tf.cudnn_name, tf.reason) == (False, None, None, None)


def test_probe_of_a_damaged_build_info_is_an_error_naming_the_file(tmp_path: Path) -> None:
    _plant(tmp_path / "sp", "build_info = {")
    tf = probe_tensorflow(LINUX, [str(tmp_path / "sp")])
    assert tf.state is State.ERROR
    assert tf.reason is not None
    assert tf.reason.startswith(str(tmp_path / "sp" / "tensorflow" / "python" / "platform" / "build_info.py"))
    assert tf.version == "2.3.1"


def test_probe_with_no_tensorflow(tmp_path: Path) -> None:
    tf = probe_tensorflow(LINUX, [str(tmp_path)])
    assert (tf.state, tf.reason) == (State.ABSENT, "no 'tensorflow' package on the Python path")


@pytest.mark.parametrize("path", sorted(DATA.glob("*.py")), ids=lambda p: p.stem)
def test_every_collected_wheel_file_parses_and_is_consistent(path: Path) -> None:
    info = parse_build_info(path.read_text(), path.name)
    assert isinstance(info.fields["is_cuda_build"], bool)
    if not info.fields["is_cuda_build"]:
        assert "cudnn_version" not in info.fields
