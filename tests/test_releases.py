"""The newest published build that runs here (diagnosis/releases.py): where PyPI's default is a CUDA 13 build the
driver or the GPUs cannot run, a fix that says what to install names the release bound that still runs, and why
the newer builds do not (compat audit F4: ``pip install 'onnxruntime-gpu[cuda,cudnn]'`` on a driver-550 host or
a V100 installs a stack that cannot run)."""

from __future__ import annotations

import pytest

from pytest_cudnn.compat.onnxruntime import PYPI_BUILDS
from pytest_cudnn.compat.sources import SOURCES
from pytest_cudnn.compat.torch import RELEASES
from pytest_cudnn.diagnosis import diagnose
from pytest_cudnn.diagnosis.releases import install
from pytest_cudnn.environment import Environment, FrameworkBuild, State
from pytest_cudnn.frameworks import framework
from pytest_cudnn.frameworks.base import BuildLine

from .envbuilder import SITE, EnvBuilder, gpu

A100, V100 = gpu(cc="8.0"), gpu(name="Tesla V100-SXM2-32GB", cc="7.0")
P100 = gpu(1, name="Tesla P100-PCIE-16GB", cc="6.0")
CUDA13 = "cannot run here: driver 550.54.15 is below 580.65.06"


def host(driver: str, raw: int, *gpus: object) -> Environment:
    b = EnvBuilder().with_driver(version=driver, cuda_version_raw=raw)
    if gpus:
        b.with_gpus(*gpus)  # type: ignore[arg-type]
    return b.build()


@pytest.mark.parametrize(
    ("env", "torch", "onnxruntime"),
    [
        pytest.param(host("580.65.06", 13000, A100), None, None, id="driver-580-a100-the-newest-runs"),
        pytest.param(
            host("550.54.15", 12040, A100),
            f'pip install "torch<2.11" (2.11.0 and later are built for CUDA 13.0, which {CUDA13})',
            f'pip install "onnxruntime-gpu[cuda,cudnn]<1.27" (1.27.0 and later are built for CUDA 13.0, which '
            f"{CUDA13})",
            id="driver-550",
        ),
        pytest.param(
            host("580.65.06", 13000, V100),
            'pip install "torch<2.11" (2.11.0 and later are built for CUDA 13.0, which cannot run here: GPU 0 Tesla '
            "V100-SXM2-32GB (compute capability 7.0, Volta) is not among its GPU targets (sm_75, sm_80, sm_86, sm_90, "
            "sm_100, sm_120))",
            'pip install "onnxruntime-gpu[cuda,cudnn]<1.27" (1.27.0 and later are built for CUDA 13.0, which cannot '
            "run here: GPU 0 Tesla V100-SXM2-32GB (compute capability 7.0, Volta) is below compute capability 7.5, "
            "CUDA 13.0's oldest)",
            id="v100",
        ),
        pytest.param(
            host("580.65.06", 13000, A100, P100),
            'pip install "torch<2.8" (2.8.0 and later are built for CUDA 12.8, which cannot run here: GPU 1 Tesla '
            "P100-PCIE-16GB (compute capability 6.0, Pascal) is not among its GPU targets (sm_70, sm_75, sm_80, sm_86, "
            "sm_90, sm_100, sm_120))",
            'pip install "onnxruntime-gpu[cuda,cudnn]<1.27" (1.27.0 and later are built for CUDA 13.0, which cannot '
            "run here: GPU 1 Tesla P100-PCIE-16GB (compute capability 6.0, Pascal) is below compute capability 7.5, "
            "CUDA 13.0's oldest)",
            id="an-a100-beside-a-p100",
        ),
        # Too old for every CUDA 12 build: torch's last CUDA 11 build on PyPI; ONNX Runtime's tabled builds (the
        # extras came in 1.21) are all CUDA 12 or 13, so none runs and the driver finding says what to do.
        pytest.param(
            host("470.82.01", 11040, A100),
            'pip install "torch<2.1" (2.1.0 and later are built for CUDA 12.1, which cannot run here: driver '
            "470.82.01 is below 525.60.13)",
            None,
            id="driver-470",
        ),
        pytest.param(host("418.67", 10010, A100), None, None, id="driver-418-none-runs"),
        # No driver read: too little to tell, the plain hint stands.
        pytest.param(EnvBuilder().without_driver().build(), None, None, id="no-driver"),
    ],
)
def test_the_release_named_is_the_newest_that_runs_here(
    env: Environment, torch: str | None, onnxruntime: str | None
) -> None:
    assert install(env, "torch") == torch
    assert install(env, "onnxruntime") == onnxruntime
    assert install(env, "jax") is None  # not tabled: its own hint


def test_a_cpu_only_onnxruntime_on_driver_550_is_offered_the_last_cuda_12_release() -> None:
    """The compat audit's F4: the hint installed a CUDA 13 build (1.27 and later) on a driver-550 host."""
    b = EnvBuilder().with_driver(version="550.54.15", cuda_version_raw=12040)
    location = f"{SITE}/onnxruntime"
    b.frameworks.append(
        FrameworkBuild("onnxruntime", State.FOUND, None, "onnxruntime", "1.31.1", location, False, None, None, (), ())
    )
    [finding] = [f for f in diagnose(b.build()) if f.code == "framework-cpu-only"]
    assert finding.fix.startswith('pip install "onnxruntime-gpu[cuda,cudnn]<1.27" (1.27.0 and later'), finding.fix


def test_a_torch_too_new_for_the_driver_is_told_the_release_that_runs() -> None:
    env = EnvBuilder().with_driver(version="550.54.15", cuda_version_raw=12040).with_torch().build()
    [finding] = [f for f in diagnose(env) if f.code == "framework-driver-too-old"]
    assert finding.fix == (
        f'install a driver >= 580.65.06, or pip install "torch<2.11" (2.11.0 and later are built for CUDA 13.0, '
        f"which {CUDA13})"
    )


def lines(name: str) -> tuple[BuildLine, ...]:
    entry = framework(name)
    assert entry is not None
    assert entry.pypi is not None
    return tuple(entry.pypi[1]())


def test_the_lines_follow_the_tables_newest_first() -> None:
    torch = lines("torch")
    assert [(line.first, line.last, line.cuda) for line in torch[:3]] == [
        ("2.15.0", "2.15.0", "13.2"),
        ("2.11.0", "2.14.1", "13.0"),
        ("2.8.0", "2.10.0", "12.8"),
    ]
    # Every release is in exactly one line.
    assert sum(1 for row in RELEASES for line in torch if line.first <= row.version <= line.last) >= len(RELEASES)
    assert [(line.first, line.last, line.cuda) for line in lines("onnxruntime")] == [
        (row.first, row.last, row.cuda) for row in reversed(PYPI_BUILDS)
    ]
    assert all(row.source in SOURCES for row in PYPI_BUILDS)


@pytest.mark.parametrize(("last", "below"), [("2.10.0", "2.11"), ("1.26.0", "1.27"), ("2.9.1", "2.10"), ("3", "3")])
def test_the_bound_is_the_next_minor_after_the_last_release_read(last: str, below: str) -> None:
    assert BuildLine("0", last, "12.8").below == below
