"""PyTorch read from its files as the real wheels lay them out (docs/build-facts.md), never imported."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from pytest_cudnn.environment import Distribution, FrameworkBuild, State
from pytest_cudnn.frameworks.torch import FRAMEWORK
from pytest_cudnn.frameworks.torch.reading import probe_torch as read_torch
from pytest_cudnn.frameworks.torch.reading import read_macros, read_version_py

from .simhost import Compiler, SimHost
from .test_binaries_fatbin import KERNEL, NVCC


def probe_torch(search_path: list[str], installed: list[Distribution] | None = None) -> FrameworkBuild:
    """The reader as the registry calls it: with the objects `import torch` loads."""
    return read_torch(search_path, installed or (), FRAMEWORK.import_objects)


MACROS_2_15 = """\
#define C10_BUILD_SHARED_LIBS
{"CUDA_VERSION", "13.2"},
{"CUDNN_VERSION", "9.26.0"},
{"USE_CUDNN", "ON"},
"""
METADATA_2_15 = """\
Metadata-Version: 2.1
Name: torch
Version: 2.15.0+cu132
Requires-Dist: filelock
Requires-Dist: nvidia-cudnn-cu13==9.26.0.51; platform_system == "Linux" and platform_machine == "x86_64"
Requires-Dist: cuda-toolkit[cublas,cudart]==13.2.2; platform_system == "Linux"

Requires-Dist: nvidia-not-a-header==1; this line is the long description
"""


def plant_torch(
    site: Path,
    version: str = "2.15.0+cu132",
    cuda: str | None = "13.2",
    macros: str | None = MACROS_2_15,
    metadata: str = METADATA_2_15,
) -> Path:
    package = site / "torch"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text('raise RuntimeError("pytest-cudnn imported torch")\n')
    (package / "version.py").write_text(
        f"from typing import Optional\n__version__ = {version!r}\ncuda: Optional[str] = {cuda!r}\n"
        "git_version = 'abc'\nhip: Optional[str] = None\n"
    )
    if macros is not None:
        (package / "include" / "caffe2" / "core").mkdir(parents=True)
        (package / "include" / "caffe2" / "core" / "macros.h").write_text(macros)
    dist = site / f"torch-{version}.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(metadata)
    return package


def test_a_cuda_build_says_its_cuda_and_cudnn_and_where_each_was_read(tmp_path: Path) -> None:
    package = plant_torch(tmp_path)
    cudnn_wheel = Distribution("nvidia_cudnn_cu13", "9.26.0.51", str(tmp_path))
    elsewhere = Distribution("cuda-toolkit", "13.2.2", "/some/other/site-packages")
    torch = probe_torch([str(tmp_path)], [cudnn_wheel, elsewhere])
    assert torch.state is State.FOUND
    assert (torch.distribution, torch.version, torch.location) == ("torch", "2.15.0+cu132", str(package))
    assert torch.is_cuda_build is True
    assert torch.cuda is not None
    assert (torch.cuda.value, torch.cuda.source) == ("13.2", str(package / "version.py"))
    assert torch.cudnn is not None
    assert (torch.cudnn.value, torch.cudnn.how) == ("9.26.0", "CUDNN_VERSION")
    assert torch.cudnn.source == str(package / "include" / "caffe2" / "core" / "macros.h")
    assert [(p.package, p.specifier, p.installed) for p in torch.pins] == [
        ("nvidia-cudnn-cu13", "==9.26.0.51", "9.26.0.51"),
        ("cuda-toolkit", "==13.2.2", None),  # installed, but in another site folder: not the one torch sees
    ]
    assert torch.reason is None


def test_a_release_without_macros_h_says_its_cudnn_build_is_unknown(tmp_path: Path) -> None:
    plant_torch(tmp_path, "2.5.1+cu124", "12.4", macros=None)
    torch = probe_torch([str(tmp_path)])
    assert torch.cudnn is None
    assert torch.reason == "its cuDNN build version is in no text file of this release (no caffe2/core/macros.h)"


def test_a_cpu_build_is_its_own_fact(tmp_path: Path) -> None:
    plant_torch(tmp_path, "2.15.0+cpu", None, macros='{"USE_CUDNN", "OFF"},\n')
    torch = probe_torch([str(tmp_path)])
    assert torch.is_cuda_build is False
    assert torch.cuda is None
    assert torch.cudnn is None
    assert torch.reason is None


def test_no_torch_is_absent(tmp_path: Path) -> None:
    torch = probe_torch([str(tmp_path)])
    assert torch.state is State.ABSENT
    assert torch.reason == "no 'torch' package on the Python path"


def test_an_unreadable_version_file_is_an_error_not_a_guess(tmp_path: Path) -> None:
    package = plant_torch(tmp_path)
    (package / "version.py").unlink()
    (package / "version.py").mkdir()  # a folder where the file should be
    torch = probe_torch([str(tmp_path)])
    assert torch.state is State.ERROR
    assert torch.is_cuda_build is None
    assert torch.version == "2.15.0+cu132"  # the distribution's METADATA still says it
    assert torch.reason is not None
    assert "version.py cannot be read" in torch.reason


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("__version__ = '2.5.1+cu124'\ncuda = '12.4'\n", {"__version__": "2.5.1+cu124", "cuda": "12.4"}),
        ("cuda: Optional[str] = None\n", {"cuda": None}),
        ("cuda = compute()\n__version__ = 2\n", {}),  # nothing computed or non-text is taken
        ("def (:\n", {}),
    ],
)
def test_version_py_is_read_without_running_it(text: str, expected: dict[str, str | None]) -> None:
    assert read_version_py(text) == expected


def test_macros_are_read_as_written() -> None:
    assert read_macros(MACROS_2_15) == {"CUDA_VERSION": "13.2", "CUDNN_VERSION": "9.26.0", "USE_CUDNN": "ON"}
    assert read_macros('{"CUDNN_VERSION", "9.26.0\n"}') == {}


def libtorch_cuda(compiler: Compiler) -> Path:
    """A real CUDA shared object linked as torch links libtorch_cuda.so: DT_RPATH to the nvidia wheels beside it,
    DT_NEEDED on the CUDA runtime and cuDNN, SASS for sm_75 and sm_80 and no PTX (nvcc 13.0 builds it)."""
    if not os.access(NVCC, os.X_OK):
        pytest.fail(f"nvcc is not at {NVCC}: these tests need CUDA 13's nvcc (or NVCC naming another)", pytrace=False)
    flags = [
        NVCC,
        "-shared",
        "-Xcompiler",
        "-fPIC",
        "-gencode",
        "arch=compute_75,code=sm_75",
        "-gencode",
        "arch=compute_80,code=sm_80",
        "-Xlinker",
        "--disable-new-dtags",
        "-Xlinker",
        "-rpath=$ORIGIN/../../nvidia/cudnn/lib:$ORIGIN",
        # nvcc passes linker flags on with -Xlinker, and libraries with -L/-l.
        *(
            f"-Xlinker={flag[4:]}" if flag.startswith("-Wl,") else flag
            for flag in compiler.link_against(["libcudart.so.13", "libcudnn.so.9"])
        ),
    ]
    return compiler.compile("libtorch_cuda.so", flags, KERNEL, ".cu")


def test_the_cuda_object_says_what_it_loads_how_and_for_which_gpus(tmp_path: Path, compiler: Compiler) -> None:
    package = plant_torch(tmp_path)
    (package / "lib").mkdir()
    shutil.copyfile(libtorch_cuda(compiler), package / "lib" / "libtorch_cuda.so")
    (cuda_object,) = probe_torch([str(tmp_path)]).objects
    # libtorch_global_deps.so is not planted, and no RECORD says it was installed: not listed (with a RECORD that
    # names it, it is listed as missing: tests/test_wheel_stories.py).
    assert cuda_object.path == str(package / "lib" / "libtorch_cuda.so")
    assert {"libcudart.so.13", "libcudnn.so.9"} <= set(cuda_object.needed)
    assert (cuda_object.rpath, cuda_object.runpath) == ("$ORIGIN/../../nvidia/cudnn/lib:$ORIGIN", None)
    assert (cuda_object.sass, cuda_object.ptx) == (("sm_75", "sm_80"), ())
    assert cuda_object.reason is None


def test_a_damaged_cuda_object_is_said_not_guessed(tmp_path: Path) -> None:
    package = plant_torch(tmp_path)
    (package / "lib").mkdir()
    (package / "lib" / "libtorch_cuda.so").write_bytes(b"\x7fELF\x02\x01\x01" + b"\0" * 9)  # cut after the ident
    (cuda_object,) = probe_torch([str(tmp_path)]).objects
    assert (cuda_object.needed, cuda_object.sass) == ((), ())
    assert cuda_object.reason is not None
    assert str(package / "lib" / "libtorch_cuda.so") in cuda_object.reason


def test_a_cpu_build_has_no_cuda_object_to_read(tmp_path: Path) -> None:
    plant_torch(tmp_path, "2.15.0+cpu", None, macros=None)
    assert probe_torch([str(tmp_path)]).objects == ()


def test_the_doctor_reports_torch_from_its_files_and_never_imports_it(host: SimHost, compiler: Compiler) -> None:
    package = plant_torch(host.site_packages)  # its __init__ raises: importing it would fail the doctor
    (package / "lib").mkdir()
    shutil.copyfile(libtorch_cuda(compiler), package / "lib" / "libtorch_cuda.so")
    host.add_distribution("nvidia-cudnn-cu13", "9.26.0.51")
    _, report = host.doctor_json()  # the environment also replays: doctor_json decodes it with every rule
    [torch] = report["environment"]["frameworks"]
    assert (torch["name"], torch["version"], torch["cuda"]["value"], torch["cudnn"]["value"]) == (
        "torch",
        "2.15.0+cu132",
        "13.2",
        "9.26.0",
    )
    assert torch["objects"][0]["sass"] == ["sm_75", "sm_80"]
    assert torch["pins"][0]["installed"] == "9.26.0.51"
    text = host.run("doctor", "-v").stdout
    assert f"PyTorch         2.15.0+cu132 (torch) at {package}" in text
    assert f"built for CUDA 13.2  (cuda = '13.2', {package / 'version.py'})" in text
    assert "DT_RPATH $ORIGIN/../../nvidia/cudnn/lib:$ORIGIN" in text
    assert "GPU code: sm_75, sm_80" in text
    assert "pins nvidia-cudnn-cu13==9.26.0.51  (installed 9.26.0.51)" in text


def libtorch_python(compiler: Compiler, flags: str) -> Path:
    """A libtorch_python.so whose .rodata holds the CUDA_ARCH_FLAGS string Module.cpp compiles in, among other
    strings that name one architecture each (as error messages do)."""
    source = (
        f'const char* arch_flags(void) {{ return "{flags}"; }}\n'
        'const char* other(void) { return "sm_90a"; }\n'
        'const char* words(void) { return "needs sm_80 or newer"; }\n'
    )
    return compiler.compile(f"libtorch_python_{len(flags)}.so", ["gcc", "-shared", "-fPIC", "-O0"], source)


def test_the_arch_list_is_the_string_torch_cuda_get_arch_list_splits(tmp_path: Path, compiler: Compiler) -> None:
    # torch 2.11.0+cu130, measured on a lent H200: get_arch_list() gave these six, the fatbin twelve targets.
    flags = "sm_75 sm_80 sm_86 sm_90 sm_100 sm_120"
    package = plant_torch(tmp_path)
    (package / "lib").mkdir()
    shutil.copyfile(libtorch_python(compiler, flags), package / "lib" / "libtorch_python.so")
    build = probe_torch([str(tmp_path)])
    assert build.arch_list is not None
    assert build.arch_list.value == flags
    assert build.arch_list.source == str(package / "lib" / "libtorch_python.so")


def test_without_libtorch_python_or_its_string_the_arch_list_is_not_guessed(tmp_path: Path, compiler: Compiler) -> None:
    package = plant_torch(tmp_path)
    assert probe_torch([str(tmp_path)]).arch_list is None  # no lib folder
    (package / "lib").mkdir()
    shutil.copyfile(libtorch_python(compiler, "sm_80"), package / "lib" / "libtorch_python.so")
    assert probe_torch([str(tmp_path)]).arch_list is None  # one word: any string could be it
