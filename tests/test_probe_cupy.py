"""CuPy read from its files (never imported): the CUDA major it was built for, and its driver floor."""

from __future__ import annotations

from pathlib import Path

from pytest_cudnn.diagnosis import diagnose
from pytest_cudnn.environment import Distribution, State
from pytest_cudnn.frameworks.cupy.reading import probe_cupy

from .envbuilder import EnvBuilder


def plant_cupy(site: Path, wheel_json: str | None = '{"cuda": "12.x", "packaging": "pip"}') -> Path:
    package = site / "cupy"
    (package / ".data").mkdir(parents=True)
    (package / "__init__.py").write_text('raise RuntimeError("pytest-cudnn imported cupy")\n')
    if wheel_json is not None:
        (package / ".data" / "_wheel.json").write_text(wheel_json)
    info = site / "cupy_cuda12x-14.2.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: cupy-cuda12x\nVersion: 14.2.0\n"
        'Requires-Dist: cuda-toolkit[cublas,cudart]==12.*; extra == "ctk"\n'
    )
    return package


def installed(site: Path) -> tuple[Distribution, ...]:
    return (Distribution("cupy-cuda12x", "14.2.0", str(site)),)


def test_the_wheel_says_its_cuda_major(tmp_path: Path) -> None:
    package = plant_cupy(tmp_path)
    cupy = probe_cupy([str(tmp_path)], installed(tmp_path))
    assert (cupy.state, cupy.distribution, cupy.version, cupy.is_cuda_build) == (
        State.FOUND,
        "cupy-cuda12x",
        "14.2.0",
        True,
    )
    assert cupy.cuda is not None
    assert (cupy.cuda.value, cupy.cuda.source, cupy.cuda.how) == (
        "12",
        str(package / ".data" / "_wheel.json"),
        "cuda = '12.x'",
    )
    assert cupy.cudnn is None  # CuPy 14 has no cuDNN
    assert [pin.requirement for pin in cupy.pins] == ['cuda-toolkit[cublas,cudart]==12.*; extra == "ctk"']


def test_without_its_wheel_file_the_distribution_name_says_it(tmp_path: Path) -> None:
    plant_cupy(tmp_path, wheel_json=None)
    cupy = probe_cupy([str(tmp_path)], installed(tmp_path))
    assert cupy.cuda is not None
    assert (cupy.cuda.value, cupy.cuda.how) == ("12", "its distribution's name, cupy-cuda12x")


def test_a_damaged_wheel_file_is_said(tmp_path: Path) -> None:
    plant_cupy(tmp_path, wheel_json='{"cuda": "twelve"}')
    cupy = probe_cupy([str(tmp_path)], installed(tmp_path))
    assert "names no CUDA version" in (cupy.reason or "")
    assert (cupy.cuda.value if cupy.cuda else None) == "12"  # the name still says it


def test_no_cupy_is_absent(tmp_path: Path) -> None:
    assert probe_cupy([str(tmp_path)]).state is State.ABSENT


def test_a_cuda_12_cupy_on_a_cuda_11_driver_cannot_run(tmp_path: Path) -> None:
    plant_cupy(tmp_path)
    cupy = probe_cupy([str(tmp_path)], installed(tmp_path))
    b = EnvBuilder().with_driver(version="470.82.01", cuda_version_raw=11040)
    b.frameworks.append(cupy)
    [finding] = [f for f in diagnose(b.build()) if f.code == "framework-driver-too-old"]
    assert finding.summary == (
        "CuPy 14.2.0 cannot run here: it is built for CUDA 12, which needs driver 525.60.13 or newer; "
        "the driver is 470.82.01"
    )
    b = EnvBuilder().with_driver(version="535.104.05", cuda_version_raw=12020)
    b.frameworks.append(cupy)
    assert not [f for f in diagnose(b.build()) if f.code == "framework-driver-too-old"]
