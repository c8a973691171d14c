"""JAX read from its files as jax[cuda12] lays them out (docs/build-facts.md), never imported."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_cudnn.environment import Distribution, State
from pytest_cudnn.frameworks.jax.reading import probe_jax

from . import frameworkhosts
from .simhost import Compiler, SimHost


def dist(site: Path, name: str, version: str, requires: tuple[str, ...] = ()) -> None:
    folder = site / f"{name.replace('-', '_')}-{version}.dist-info"
    folder.mkdir(parents=True)
    lines = [f"Name: {name}", f"Version: {version}", *(f"Requires-Dist: {r}" for r in requires)]
    (folder / "METADATA").write_text("Metadata-Version: 2.1\n" + "\n".join(lines) + "\n\ndescription\n")


def plant_jax(site: Path, plugin: str | None = "12") -> None:
    (site / "jax").mkdir(parents=True)
    (site / "jax" / "__init__.py").write_text('raise RuntimeError("pytest-cudnn imported jax")\n')
    dist(site, "jax", "0.10.2")
    if plugin is None:
        return
    folder = site / "jax_plugins" / f"xla_cuda{plugin}"  # a namespace package: no jax_plugins/__init__.py
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text('raise RuntimeError("pytest-cudnn imported the plugin")\n')
    (folder / "xla_cuda_plugin.so").write_bytes(b"\x7fELF")
    dist(
        site,
        f"jax-cuda{plugin}-plugin",
        "0.10.2",
        (
            f"jax-cuda{plugin}-pjrt==0.10.2",
            f'nvidia-cudnn-cu{plugin}<10,>=9.8; extra == "with-cuda"',
            f'nvidia-cuda-runtime-cu{plugin}>=12.1.105; extra == "with-cuda"',
        ),
    )
    dist(site, f"jax-cuda{plugin}-pjrt", "0.10.2")


def test_the_cuda_plugin_says_its_cuda_major_and_its_pins(tmp_path: Path) -> None:
    plant_jax(tmp_path)
    installed = [Distribution("nvidia-cudnn-cu12", "9.10.2.21", str(tmp_path))]
    jax = probe_jax([str(tmp_path)], installed)
    assert jax.state is State.FOUND
    assert (jax.distribution, jax.version, jax.location) == ("jax", "0.10.2", str(tmp_path / "jax"))
    assert jax.is_cuda_build is True
    assert jax.cuda is not None
    assert (jax.cuda.value, jax.cuda.source) == ("12", str(tmp_path / "jax_plugins" / "xla_cuda12"))
    assert jax.cudnn is None
    assert jax.reason is not None
    assert "only in the compiled jax_cuda12_plugin._versions" in jax.reason
    assert [(p.package, p.specifier, p.installed) for p in jax.pins] == [
        ("nvidia-cudnn-cu12", "<10,>=9.8", "9.10.2.21"),
        ("nvidia-cuda-runtime-cu12", ">=12.1.105", None),
    ]


def test_jax_without_a_cuda_plugin_is_a_cpu_build(tmp_path: Path) -> None:
    plant_jax(tmp_path, plugin=None)
    jax = probe_jax([str(tmp_path)])
    assert (jax.state, jax.is_cuda_build, jax.cuda, jax.reason) == (State.FOUND, False, None, None)


def test_two_cuda_plugins_are_said(tmp_path: Path) -> None:
    plant_jax(tmp_path / "a")
    other = tmp_path / "b" / "jax_plugins" / "xla_cuda13"
    other.mkdir(parents=True)
    jax = probe_jax([str(tmp_path / "a"), str(tmp_path / "b")])
    assert jax.cuda is not None
    assert jax.cuda.value == "12"  # the first on the path, as importing would find it
    assert jax.reason is not None
    assert f"several CUDA plugins are installed: {tmp_path / 'a' / 'jax_plugins' / 'xla_cuda12'}, {other}" in (
        jax.reason
    )


def test_no_jax_is_absent(tmp_path: Path) -> None:
    assert probe_jax([str(tmp_path)]).state is State.ABSENT


def test_the_plugin_object_is_read_and_a_damaged_one_is_said(tmp_path: Path) -> None:
    plant_jax(tmp_path)  # its xla_cuda_plugin.so is four bytes: an ELF magic and nothing else
    [plugin] = probe_jax([str(tmp_path)]).objects
    assert plugin.path == str(tmp_path / "jax_plugins" / "xla_cuda12" / "xla_cuda_plugin.so")
    assert (plugin.needed, plugin.sass, plugin.ptx) == ((), (), ())
    assert plugin.reason is not None
    assert plugin.path in plugin.reason


def test_the_build_versions_are_read_from_the_compiled_module_in_the_probes_child(
    host: SimHost, compiler: Compiler
) -> None:
    install = frameworkhosts.plant_jax(host.site_packages, compiler, cuda_build=12090, cudnn_build=90800)
    # The package's __init__ raises: the module is loaded from its file alone, never through an import of jax.
    (install.cuda_plugin / "__init__.py").write_text("raise RuntimeError('imported')\n", encoding="utf-8")
    _, report = host.doctor_json()
    [jax] = [build for build in report["environment"]["frameworks"] if build["name"] == "jax"]
    assert (jax["cuda"]["value"], jax["cudnn"]["value"]) == ("12.9", "9.8.0")
    assert jax["cudnn"]["how"] == (
        "jax_cuda12_plugin._versions.cudnn_build_version() = 90800, read in the probe's child process"
    )
    assert jax["reason"] is None


def test_a_versions_module_that_cannot_be_read_is_said(host: SimHost, compiler: Compiler) -> None:
    install = frameworkhosts.plant_jax(host.site_packages, compiler)
    assert install.versions is not None
    install.versions.write_bytes(b"\x7fELF damaged")
    _, report = host.doctor_json()
    [jax] = [build for build in report["environment"]["frameworks"] if build["name"] == "jax"]
    assert jax["cuda"]["value"] == "12"  # what the plugin's folder name says, no more
    assert jax["reason"].startswith("jax_cuda12_plugin._versions could not be read: ")


@pytest.mark.parametrize("major", [12, 13])
def test_the_cudnn_a_cuda_plugin_preloads_is_one_it_needs_whatever_its_cuda(major: int, tmp_path: Path) -> None:
    # nvidia/cudnn is one folder for CUDA 12 and 13 alike. JAX's preload list has a cuDNN row for each; on a CUDA 13
    # plugin the CUDA 12 row came first and marked the copy optional, so JAX's cuDNN went unjudged (seen on the lent
    # H100: "loaded by PyTorch" alone, tests/data/real-gpu/h100b-snapshot.json).
    from pytest_cudnn._base import loader
    from pytest_cudnn.environment import BuildFact, FrameworkBuild
    from pytest_cudnn.frameworks.jax.loads import jax_loads
    from pytest_cudnn.probe.loads import Search

    module, cudart = {12: ("cuda_runtime", "libcudart.so.12"), 13: ("cu13", "libcudart.so.13")}[major]
    for folder, name in (("cudnn", "libcudnn.so.9"), (module, cudart), ("nccl", "libnccl.so.2")):
        (tmp_path / "nvidia" / folder / "lib").mkdir(parents=True, exist_ok=True)
        (tmp_path / "nvidia" / folder / "lib" / name).write_bytes(b"")
    build = FrameworkBuild(
        "jax", State.FOUND, None, "jax", "0.11.2", str(tmp_path / "jax"), True,
        BuildFact(str(major), str(tmp_path / "jax_plugins" / f"xla_cuda{major}"), "folder"), None, (),
    )  # fmt: skip
    loads = {load.name: load for load in jax_loads(build, Search(loader.Process(), (str(tmp_path),)))}
    assert loads["libcudnn.so.9"].path == str(tmp_path / "nvidia" / "cudnn" / "lib" / "libcudnn.so.9")
    assert loads["libcudnn.so.9"].required
    assert loads[cudart].required
    assert not loads["libnccl.so.2"].required  # loaded when used
