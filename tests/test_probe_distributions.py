"""The installed distributions that matter to the GPU stack, read from their dist-info headers: the exact
wheel versions pins are written against (nvidia-cudnn-cu12 9.3.0.75 where the library says 9.3.0)."""

from __future__ import annotations

import doctest
import importlib
import os
import sys
import time
from pathlib import Path

import pytest

from pytest_cudnn.environment import Distribution
from pytest_cudnn.frameworks import relevant
from pytest_cudnn.probe.distributions import installed_distributions, metadata_header
from pytest_cudnn.probing.host import probe_environment

from .fakefs import FakeFileSystem
from .simhost import SimHost


@pytest.mark.parametrize(
    ("name", "wanted"),
    [
        ("nvidia-cudnn-cu12", True),
        ("nvidia_cuda_runtime_cu12", True),
        ("nvidia-ml-py", True),
        ("NVIDIA-CUBLAS-CU11", True),
        ("tensorflow", True),
        ("tensorflow-cpu", True),
        ("tensorflow_gpu", True),
        ("tf-nightly", True),
        ("torch", True),
        ("jax", True),
        ("jaxlib", True),
        ("jax-cuda12-plugin", True),
        ("jax_cuda12_pjrt", True),
        ("cupy-cuda12x", True),
        ("cupy-cuda102", True),
        ("nvidia", False),
        ("tensorflow-estimator", False),
        ("tensorflow-io-gcs-filesystem", False),
        ("torchvision", False),
        ("jax-cuda12-other", False),
        ("cupy", False),
        ("numpy", False),
    ],
)
def test_which_distributions_matter(name: str, wanted: bool) -> None:
    assert relevant(name) is wanted


def test_the_header_is_read_as_written_and_reading_stops_at_the_blank_line(tmp_path: Path) -> None:
    metadata = tmp_path / "METADATA"
    metadata.write_text("Metadata-Version: 2.1\nname: NVIDIA-cuDNN-cu12\nVersion: 9.3.0.75 \n\nVersion: 0.0\n")
    assert metadata_header(str(metadata)) == ("NVIDIA-cuDNN-cu12", "9.3.0.75")
    metadata.write_text("Metadata-Version: 2.1\nName: nvidia-cudnn-cu12\n\nVersion: 1.0\n")
    assert metadata_header(str(metadata)) == ("nvidia-cudnn-cu12", None)
    assert metadata_header(str(tmp_path / "missing")) == (None, None)


def test_only_relevant_distributions_with_a_name_and_a_version_are_recorded(host: SimHost) -> None:
    site = host.site_packages
    host.add_distribution("nvidia-cudnn-cu12", "9.3.0.75")
    host.add_distribution("nvidia-cuda-runtime-cu12", "12.5.82")
    host.add_tensorflow("2.18.0", "tensorflow-2.21.0-linux.py", distribution="tensorflow-cpu")
    host.add_distribution("jax-cuda12-plugin", "0.4.30")
    host.add_distribution("numpy", "2.1.0")
    host.add_distribution("tensorflow-estimator", "2.15.0")
    broken = host.add_distribution("nvidia-cublas-cu12", "12.5.3.2")
    (broken / "METADATA").write_text("Metadata-Version: 2.1\nName: nvidia-cublas-cu12\n\n")  # no version
    (site / "nvidia_nccl_cu12-2.21.5.dist-info").mkdir()  # no METADATA at all
    (site / "nvidia_cufft_cu12-11.0.0.dist-info.tmp").mkdir()  # not a dist-info folder
    (site / "nvidia").mkdir(exist_ok=True)  # the wheels' package folder, not metadata
    found = installed_distributions([str(site), str(site) + "/", str(host.root / "missing")], wanted=relevant)
    assert found == (
        Distribution("jax-cuda12-plugin", "0.4.30", str(site)),
        Distribution("nvidia-cuda-runtime-cu12", "12.5.82", str(site)),
        Distribution("nvidia-cudnn-cu12", "9.3.0.75", str(site)),
        Distribution("tensorflow-cpu", "2.18.0", str(site)),
    )


def test_the_same_distribution_in_two_folders_is_listed_in_import_order(host: SimHost) -> None:
    user = host.folder("home/.local/lib/python3.11/site-packages")
    host.add_distribution("nvidia-cudnn-cu12", "9.3.0.75")
    host.add_distribution("nvidia-cudnn-cu12", "8.9.7.29", site=user)
    found = installed_distributions([str(user), str(host.site_packages)], wanted=relevant)
    assert [(d.version, d.location) for d in found] == [
        ("8.9.7.29", str(user)),
        ("9.3.0.75", str(host.site_packages)),
    ]


def test_only_dist_info_folders_with_a_relevant_name_are_opened(tmp_path: Path) -> None:
    fs = FakeFileSystem(["/site/numpy-2.1.0.dist-info/METADATA", "/site/nvidia_cudnn_cu12-9.3.0.75.dist-info/METADATA"])
    opened: list[str] = []
    import pytest_cudnn.probe.distributions as module

    def header(path: str) -> tuple[str | None, str | None]:
        opened.append(path)
        return "nvidia-cudnn-cu12", "9.3.0.75"

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(module, "metadata_header", header)
        assert installed_distributions(["/site"], fs, wanted=relevant) == (
            Distribution("nvidia-cudnn-cu12", "9.3.0.75", "/site"),
        )
    assert opened == ["/site/nvidia_cudnn_cu12-9.3.0.75.dist-info/METADATA"]


def test_an_unreadable_site_folder_is_reported() -> None:
    fs = FakeFileSystem([], errors={"/site": PermissionError(13, "Permission denied")})
    assert installed_distributions(["/site"], fs, wanted=relevant) == ()
    assert fs.unreadable == {"/site": "Permission denied"}


def test_the_doctor_records_the_wheels_beside_tensorflow(host: SimHost) -> None:
    host.add_tensorflow("2.18.0", "tensorflow-2.21.0-linux.py")
    host.add_distribution("nvidia-cudnn-cu12", "9.3.0.75")
    host.add_distribution("nvidia-cuda-runtime-cu12", "12.5.82")
    _, report = host.doctor_json()
    planted = [d for d in report["environment"]["distributions"] if d["location"] == str(host.site_packages)]
    assert planted == [
        {"name": "nvidia-cuda-runtime-cu12", "version": "12.5.82", "location": str(host.site_packages)},
        {"name": "nvidia-cudnn-cu12", "version": "9.3.0.75", "location": str(host.site_packages)},
        {"name": "tensorflow", "version": "2.18.0", "location": str(host.site_packages)},
    ]


@pytest.mark.e2e
def test_this_environment_has_the_runtime_wheel_of_the_test_extra() -> None:
    names = {d.name for d in probe_environment().distributions}
    assert "nvidia-cuda-runtime-cu12" in names


def test_reading_every_site_folder_costs_about_a_millisecond() -> None:
    site_path = [p for p in sys.path if os.path.isabs(p)]
    installed_distributions(site_path, wanted=relevant)  # warm the folder cache
    started = time.perf_counter()
    for _ in range(10):
        installed_distributions(site_path, wanted=relevant)
    assert (time.perf_counter() - started) / 10 < 0.02  # generous: ~0.2 ms measured for this venv


@pytest.mark.parametrize("name", ["pytest_cudnn.frameworks", "pytest_cudnn.native.calls"])
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert (result.attempted > 0, result.failed) == (True, 0)
