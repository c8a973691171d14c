"""CuPy judged by the libraries it really loads (issue 20, case 4 and item 5), on simulated hosts.

CuPy 14 links the CUDA runtime statically and finds NVRTC, cuBLAS and the rest through NVIDIA's cuda-pathfinder,
whose site-packages step reads ``site.getsitepackages()``, not sys.path: so each host here is a real venv (``python
-m venv --without-pip``) whose own site-packages holds CuPy and the nvidia wheels, and the doctor runs with that
venv's interpreter. pytest-cudnn and ``packaging`` reach it through a ``.pth`` file naming a folder of links to
them alone (the test venv's own site-packages, with its CUDA runtime wheel, stays out of sight).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from pytest_cudnn._base import loader
from pytest_cudnn.diagnosis import diagnose, judge_environment
from pytest_cudnn.diagnosis.model import verdict
from pytest_cudnn.environment import BuildFact, Environment, FrameworkBuild, LoadedLibrary, State
from pytest_cudnn.frameworks.cupy.pathfinder import Places, cupy_loads
from pytest_cudnn.probe.loads import Search

from .envbuilder import EnvBuilder
from .frameworkhosts import plant_nvidia_wheel
from .simhost import Compiler, SimGpu, SimHost
from .test_framework_stories import cache_or_default_folders_have, without_ldconfig_cache

NEEDS_GCC = pytest.mark.skipif(sys.platform != "linux" or shutil.which("gcc") is None, reason="needs Linux and gcc")

A100 = SimGpu()
DRIVER_580 = ("580.65.06", 13000)
REPO = Path(__file__).resolve().parent.parent


class CupyVenv:
    """A real venv in the simulated host, with CuPy planted in its own site-packages."""

    def __init__(self, host: SimHost, *, pathfinder: bool = False) -> None:
        self.host = host
        self.root = host.root / "cupy-venv"
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(self.root)], check=True, timeout=120)
        self.python = self.root / "bin" / "python"
        purelib = subprocess.run(
            [str(self.python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        self.site = Path(purelib)
        links = host.root / "product"
        links.mkdir()
        (links / "pytest_cudnn").symlink_to(REPO / "pytest_cudnn")
        import packaging

        (links / "packaging").symlink_to(Path(packaging.__file__).parent)
        if pathfinder:  # the real one, from the test extra, never imported here
            spec = importlib.util.find_spec("cuda.pathfinder")
            assert spec is not None, "cuda-pathfinder is in the test extra"
            assert spec.submodule_search_locations is not None
            (self.site / "cuda").mkdir()
            (self.site / "cuda" / "pathfinder").symlink_to(spec.submodule_search_locations[0])
        (self.site / "pytest_cudnn_product.pth").write_text(f"{links}\n")

    def plant_cupy(self, distribution: str = "cupy-cuda12x", cuda: str = "12.x") -> Path:
        package = self.site / "cupy"
        (package / ".data").mkdir(parents=True)
        (package / "__init__.py").write_text('raise RuntimeError("pytest-cudnn imported cupy")\n')
        (package / ".data" / "_wheel.json").write_text(json.dumps({"cuda": cuda, "packaging": "pip"}))
        major = distribution.removeprefix("cupy-cuda").removesuffix("x")
        self.host.add_distribution(
            distribution,
            "14.2.0",
            site=self.site,
            requires=[f'cuda-toolkit[cublas,cudart,nvrtc]=={major}.*; extra == "ctk"', "cuda-pathfinder==1.*"],
        )
        return package

    def doctor(self, *args: str) -> tuple[int, dict[str, Any], str]:
        """The doctor's exit status, its JSON report, and its whole text (-v), run by this venv's interpreter."""
        env = self.host.environ()
        env.pop("PYTHONPATH")
        runs = [
            subprocess.run(
                [str(self.python), "-m", "pytest_cudnn", "doctor", *extra, *args],
                capture_output=True,
                text=True,
                env=env,
                cwd=self.host.root,
                timeout=120,
                check=False,
            )
            for extra in (["--json"], ["-v"])
        ]
        assert runs[0].stdout, runs[0].stderr
        report = json.loads(runs[0].stdout)
        Environment.from_json(report["environment"], "the probe's own output")
        assert runs[1].returncode == runs[0].returncode, runs[1].stdout + runs[1].stderr
        return runs[0].returncode, report, runs[1].stdout


def cupy_json(report: dict[str, Any]) -> dict[str, Any]:
    return next(b for b in report["environment"]["frameworks"] if b["name"] == "cupy")


def loads(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {load["name"]: load for load in cupy_json(report)["loads"]}


def errors(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["severity"] == "error"]


def cuda12_wheels(site: Path, compiler: Compiler, components: Sequence[str] = ("cuda_nvrtc", "cublas")) -> None:
    """The CUDA 12 wheels of ``cupy-cuda12x[ctk]`` CuPy needs first: NVRTC, cuBLAS and cuBLASLt."""
    sonames = {"cuda_nvrtc": ("libnvrtc.so.12",), "cublas": ("libcublas.so.12", "libcublasLt.so.12")}
    for component in components:
        plant_nvidia_wheel(site, compiler, component, others=sonames[component])


# Each story twice: with the search re-stated, and with cuda-pathfinder installed, its own search in the probe child.
LOCATOR = pytest.mark.parametrize("pathfinder", [False, True], ids=["restated", "pathfinder"])


@NEEDS_GCC
@LOCATOR
def test_a_cupy_wheel_without_nvrtc_or_cublas_cannot_run(host: SimHost, compiler: Compiler, pathfinder: bool) -> None:
    """Case 4: plain ``pip install cupy-cuda12x`` on a pip-only host: CuPy itself fails with
    'DynamicLibNotFoundError: Failure finding "libnvrtc.so.13 or libnvrtc.so.12"'."""
    for name in ("libnvrtc.so.13", "libnvrtc.so.12", "libcublas.so.13", "libcublas.so.12"):
        if cache_or_default_folders_have(name):
            pytest.skip(f"this machine's loader finds {name} by itself")
    host.add_driver([A100], version=DRIVER_580[0], cuda_version=DRIVER_580[1])
    without_ldconfig_cache(host)
    venv = CupyVenv(host, pathfinder=pathfinder)
    venv.plant_cupy()

    code, report, text = venv.doctor("--framework", "cupy")
    assert code != 0, text
    # One cause, one fix (CuPy's [ctk] extra installs them all): one finding naming each library.
    [missing] = [f for f in errors(report) if f["code"] == "framework-library-missing"]
    assert missing["summary"] == (
        "CuPy 14.2.0 cannot use the GPU: it cannot load libnvrtc.so.13 or libnvrtc.so.12, libcublasLt.so.13 or "
        "libcublasLt.so.12, libcublas.so.13 or libcublas.so.12"
    ), missing["summary"]
    nvrtc = "libnvrtc.so.13 or libnvrtc.so.12: searched: "
    searched = next(line for line in missing["evidence"] if line.startswith(nvrtc))
    assert str(venv.site / "nvidia" / "cuda_nvrtc" / "lib") in searched, searched  # pathfinder's wheel folder
    assert missing["fix"].startswith('pip install "cupy-cuda12x[ctk]"'), missing["fix"]
    assert "or pip install nvidia-cuda-nvrtc-cu12 nvidia-cublas-cu12, " in missing["fix"], missing["fix"]
    assert "can run GPU work here" not in text
    assert "libnvrtc.so.13 or libnvrtc.so.12" in text
    # Judged by what CuPy uses: no CUDA runtime file to install for it.
    assert "nvidia-cuda-runtime" not in json.dumps(report["findings"]), report["findings"]


@NEEDS_GCC
@LOCATOR
def test_cupy_with_its_nvidia_wheels_lists_the_copies_it_loads(
    host: SimHost, compiler: Compiler, pathfinder: bool
) -> None:
    host.add_driver([A100], version=DRIVER_580[0], cuda_version=DRIVER_580[1])
    without_ldconfig_cache(host)
    venv = CupyVenv(host, pathfinder=pathfinder)
    venv.plant_cupy()
    cuda12_wheels(venv.site, compiler)

    code, report, text = venv.doctor("--framework", "cupy")
    assert code == 0, text
    found = loads(report)
    for soname, component in (
        ("libnvrtc.so.12", "cuda_nvrtc"),
        ("libcublas.so.12", "cublas"),
        ("libcublasLt.so.12", "cublas"),
    ):
        load = found[soname]
        assert load["path"] == str(venv.site / "nvidia" / component / "lib" / soname), load
        assert load["required"] is True
        assert "site-packages" in (load["found_by"] or ""), load
    assert not any(name.startswith("libcudart") for name in found), sorted(found)  # linked in statically
    assert found["libcurand.so.11 or libcurand.so.10"]["required"] is False  # cuRAND: only cupy.random needs it
    said = "site-packages, run in the probe's child" if pathfinder else "cuda-pathfinder's search, re-stated: site"
    assert said in found["libnvrtc.so.12"]["found_by"], found["libnvrtc.so.12"]
    assert errors(report) == []
    assert report["verdict"]["ok"], report["verdict"]
    assert "no CUDA runtime" not in text


@NEEDS_GCC
def test_a_cupy_only_venv_is_not_told_to_install_a_cuda_runtime(host: SimHost, compiler: Compiler) -> None:
    host.add_driver([A100], version=DRIVER_580[0], cuda_version=DRIVER_580[1])
    without_ldconfig_cache(host)
    venv = CupyVenv(host)
    venv.plant_cupy()
    cuda12_wheels(venv.site, compiler)

    code, report, text = venv.doctor()
    assert report["environment"]["cuda_runtimes"] == [] or all(
        "cupy-venv" not in copy["path"] for copy in report["environment"]["cuda_runtimes"]
    )
    said = json.dumps(report["findings"])
    assert "no-cuda-runtime" not in [f["code"] for f in report["findings"]], said
    assert "nvidia-cuda-runtime" not in said
    assert "nvidia-cuda-runtime" not in text
    assert code == 0, text
    assert report["verdict"]["ok"], report["verdict"]


@NEEDS_GCC
def test_the_venvs_site_packages_is_what_pathfinder_searches(host: SimHost) -> None:
    """The kit's premise: the venv's interpreter reports its own site-packages, where CuPy is planted."""
    venv = CupyVenv(host)
    said = subprocess.run(
        [str(venv.python), "-c", "import site; print(site.getsitepackages()[0])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert Path(said) == venv.site
    assert Path(sysconfig.get_paths()["purelib"]) != venv.site
    assert os.path.isfile(venv.site / "pytest_cudnn_product.pth")


# The re-stated search, and the rules, without a host ---------------------------------------------------------------

SITE = "/venv/lib/python3.11/site-packages"


def cupy_build(loads: tuple[LoadedLibrary, ...] = ()) -> FrameworkBuild:
    location = f"{SITE}/cupy"
    cuda = BuildFact("12", f"{location}/.data/_wheel.json", "cuda = '12.x'")
    return FrameworkBuild(
        "cupy", State.FOUND, None, "cupy-cuda12x", "14.2.0", location, True, cuda, None, (), (), loads
    )


def restated(files: set[str], where: Places, ld_library_path: str | None = None) -> dict[str, LoadedLibrary]:
    search = Search(loader.Process(ld_library_path=ld_library_path), (SITE,), exists=files.__contains__)
    return {load.name: load for load in cupy_loads(cupy_build(), search, where)}


def test_the_restated_search_takes_the_wheels_then_conda_then_the_loader_then_cuda_path() -> None:
    wheel, conda = f"{SITE}/nvidia/cuda_nvrtc/lib/libnvrtc.so.12", "/conda/lib/libnvrtc.so.12"
    ld, toolkit = "/opt/ld/libnvrtc.so.13", "/usr/local/cuda/lib64/libnvrtc.so.12"
    where = Places((SITE,), conda_prefix="/conda", cuda_path="/usr/local/cuda")
    everything = {wheel, conda, ld, toolkit}
    steps = [
        (everything, "libnvrtc.so.12", wheel, "site-packages"),
        (everything - {wheel}, "libnvrtc.so.12", conda, "conda"),
        (everything - {wheel, conda}, "libnvrtc.so.13", ld, "system-search (LD_LIBRARY_PATH)"),
        ({toolkit}, "libnvrtc.so.12", toolkit, "CUDA_PATH"),
    ]
    for files, name, path, via in steps:
        load = restated(files, where, ld_library_path="/opt/ld")[name]
        assert (load.path, load.found_by) == (path, f"cuda-pathfinder's search, re-stated: {via}"), load
        assert load.required is True
    # Within one folder the sonames go in pathfinder's order: CUDA 13's first, whatever CuPy was built for.
    both = {f"{SITE}/nvidia/cu13/lib/libnvrtc.so.13", f"{SITE}/nvidia/cu13/lib/libnvrtc.so.12"}
    assert "libnvrtc.so.13" in restated(both, Places((SITE,)))


def test_a_missing_dependency_fails_the_library_that_needs_it() -> None:
    cublas = f"{SITE}/nvidia/cublas/lib/libcublas.so.12"
    found = restated({cublas}, Places((SITE,)))
    assert found["libcublasLt.so.13 or libcublasLt.so.12"].path is None
    load = found["libcublas.so.13 or libcublas.so.12"]
    assert (load.path, load.required) == (None, True)
    assert f"{SITE}/nvidia/cublas/lib" in load.searched
    found = restated({cublas, f"{SITE}/nvidia/cublas/lib/libcublasLt.so.12"}, Places((SITE,)))
    assert found["libcublas.so.12"].path == cublas


def test_cupy_without_nvrtc_cannot_run_and_with_it_can() -> None:
    missing = LoadedLibrary("libnvrtc.so.13 or libnvrtc.so.12", None, "dlopen", True, None, None, (f"{SITE}/x",))
    b = EnvBuilder().with_driver(version="580.65.06", cuda_version_raw=13000)
    b.frameworks.append(cupy_build((missing,)))
    env = b.build()
    findings = diagnose(env)
    [finding] = [f for f in findings if f.code == "framework-library-missing"]
    assert finding.summary == "CuPy 14.2.0 cannot use the GPU: it cannot load libnvrtc.so.13 or libnvrtc.so.12"
    assert finding.fix.startswith('pip install "cupy-cuda12x[ctk]" '), finding.fix
    assert "pip install nvidia-cuda-nvrtc-cu12," in finding.fix, finding.fix
    assert not judge_environment(env, tuple(findings)).frameworks[0].ok

    found = dataclasses.replace(missing, name="libnvrtc.so.12", path=f"{SITE}/nvidia/cuda_nvrtc/lib/libnvrtc.so.12")
    b.frameworks[0] = cupy_build((found,))
    env = b.build()
    findings = diagnose(env)
    assert [f.code for f in findings if f.severity.value == "error"] == []
    assert judge_environment(env, tuple(findings)).frameworks[0].ok


def test_cupy_for_cuda_13_on_driver_550_is_told_the_driver_first_and_its_libraries_once() -> None:
    """Real-wheels report D4: plain ``cupy-cuda13x`` on driver 550 led with "cannot load libnvrtc" and its [ctk]
    fix, three library errors before the driver; following that fix left CuPy unable to run. The driver comes first
    and the libraries its extra installs are one finding."""
    names = ("libnvrtc.so.13 or libnvrtc.so.12", "libcublas.so.13 or libcublas.so.12", "libcufft.so.12")
    loads = tuple(LoadedLibrary(name, None, "dlopen", True, None, None, (f"{SITE}/x",)) for name in names)
    cuda13 = BuildFact("13", f"{SITE}/cupy/.data/_wheel.json", "cuda = '13.x'")
    build = dataclasses.replace(cupy_build(loads), distribution="cupy-cuda13x", cuda=cuda13)
    b = EnvBuilder().with_driver(version="550.54.15", cuda_version_raw=12040)
    b.frameworks.append(build)
    findings = diagnose(b.build())
    errors = [f for f in findings if f.severity.value == "error"]
    assert [f.code for f in errors] == ["framework-driver-too-old", "framework-library-missing"]
    assert errors[1].summary == f"CuPy 14.2.0 cannot use the GPU: it cannot load {', '.join(names)}"
    assert errors[1].fix == (
        'pip install "cupy-cuda13x[ctk]" (CuPy\'s extra that installs the CUDA libraries it loads from PyPI), or add '
        "the folders that hold them to LD_LIBRARY_PATH"
    )
    assert verdict(findings).summary == (
        "cannot run GPU work: CuPy 14.2.0 cannot run here: it is built for CUDA 13, which needs driver 580.65.06 or "
        "newer; the driver is 550.54.15 (and 1 more error)"
    )


def test_a_cupy_only_environment_needs_no_cuda_runtime_file() -> None:
    b = EnvBuilder().with_driver(version="580.65.06", cuda_version_raw=13000)
    b.frameworks.append(cupy_build())
    assert b.copies == []
    codes = [f.code for f in diagnose(b.build())]
    assert "no-cuda-runtime" not in codes, codes
    # Beside a framework that loads a runtime file, its absence is an error again.
    b.with_torch()
    assert "no-cuda-runtime" in [f.code for f in diagnose(b.build())]


@NEEDS_GCC
def test_the_child_job_searches_the_callers_site_packages_whatever_its_own_site_says(
    tmp_path: Path, compiler: Compiler
) -> None:
    """On the lent H100 a ``python -I -S`` child of a Debian Python 3.12 venv answered /usr's dist-packages from
    site.getsitepackages(), so pathfinder there found the system toolkit's NVRTC, not the wheel CuPy maps: the job
    searches the folders the caller hands it, and nothing else."""
    pathfinder = importlib.util.find_spec("cuda.pathfinder")
    assert pathfinder is not None, "cuda-pathfinder is in the test extra"
    assert pathfinder.submodule_search_locations is not None
    site = tmp_path / "elsewhere" / "site-packages"
    nvrtc = plant_nvidia_wheel(site, compiler, "cuda_nvrtc", others=("libnvrtc.so.12",)) / "libnvrtc.so.12"
    job = {"kind": "pathfinder", "names": ["nvrtc"], "site_dirs": [str(site)]}
    program = (
        "import json, sys; sys.path[:0] = sys.argv[1:3]\n"
        "from pytest_cudnn.native.calls import probe_pathfinder\n"
        "print(json.dumps(probe_pathfinder(json.loads(sys.argv[3]))))\n"
    )
    roots = [str(REPO), str(Path(pathfinder.submodule_search_locations[0]).parent.parent)]
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", program, *roots, json.dumps(job)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
    )
    answer = json.loads(done.stdout)
    assert answer["libraries"]["nvrtc"] == {
        "abs_path": str(nvrtc),
        "found_via": "site-packages",
        "was_already_loaded_from_elsewhere": False,
    }, answer
    assert isinstance(answer["version"], str)


def test_every_cupy_fact_names_its_source() -> None:
    from pytest_cudnn.compat import cupy as facts
    from pytest_cudnn.compat.sources import SOURCES

    keys = [row.source for row in facts.CUPY_LIBRARIES]
    keys += [facts.CTK_EXTRA[1], facts.PATHFINDER_ANCHORS[1], *(key for _, key in facts.STATIC_CUDA_RUNTIME)]
    assert [key for key in keys if key not in SOURCES] == []
    assert "pathfinder-search" in SOURCES
    assert "cupy-pathfinder-loads" in SOURCES
    assert {row.name for row in facts.CUPY_LIBRARIES} >= {
        dep for row in facts.CUPY_LIBRARIES for dep in row.dependencies
    }
