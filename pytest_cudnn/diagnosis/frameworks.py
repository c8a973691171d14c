"""Rules about PyTorch and JAX as their files describe them (issue 10, first rules): a CPU-only build, a driver
older than the CUDA the build needs, a GPU older than every kernel the build carries.

What a framework is built for is a floor: the CUDA runtime it loads is at least the CUDA it was built with, so
a driver too old for that is too old for whatever copy the framework loads. The copies themselves (which
libcudart and libcudnn each framework loads, through its RPATH or its preloads) are not yet judged.
"""

from __future__ import annotations

from collections.abc import Iterator

from .. import phrases
from ..compat import cuda as cuda_facts
from ..environment import Environment, FrameworkBuild, State
from .kernels import runs_on
from .model import Finding, Severity, cite, make_finding
from .stack import gpu_text, gpus_with_capability

_CUDA_BUILD = {
    "torch": "pip install torch (the Linux wheels on PyPI are CUDA builds), or a CUDA variant from PyTorch's index",
    "jax": "pip install 'jax[cuda12]' (or jax[cuda13]): JAX's GPU support is a separate CUDA plugin",
}
# Frameworks whose own fatbins hold their kernels. JAX's plugin carries few: XLA compiles most at run time.
_KERNELS_IN_FATBIN = ("torch",)


def framework_rules(env: Environment) -> Iterator[Finding]:
    for build in env.frameworks:
        if build.state is State.FOUND:
            yield from _framework(env, build)


def _subject(build: FrameworkBuild) -> tuple[str, ...]:
    """A framework finding is about the framework's package folder (findings about library copies name theirs)."""
    return (build.location,) if build.location else ()


def label(build: FrameworkBuild) -> str:
    return f"{phrases.framework(build.name)} {build.version or '(version unknown)'}"


def _framework(env: Environment, build: FrameworkBuild) -> Iterator[Finding]:
    if build.is_cuda_build is False:
        yield make_finding(
            "framework-cpu-only",
            Severity.WARNING,
            "framework",
            f"{label(build)} ({build.distribution}) is a CPU-only build: it will not use the GPU",
            (f"{build.location}: no CUDA build ({build.reason or 'its files name no CUDA'})",),
            _CUDA_BUILD.get(build.name, f"install a CUDA build of {build.name}"),
            _subject(build),
        )
        return
    yield from _driver(env, build)
    if build.name in _KERNELS_IN_FATBIN:
        yield from _kernels(env, build)


def _driver(env: Environment, build: FrameworkBuild) -> Iterator[Finding]:
    driver, cuda = env.driver, build.cuda
    if cuda is None or driver.state is not State.FOUND or not driver.version:
        return
    floor = cuda_facts.minimum_driver(cuda.value, env.host.system)
    have = cuda_facts.driver_tuple(driver.version)
    need = cuda_facts.driver_tuple(floor[0]) if floor else None
    if floor is None or have is None or need is None or have >= need:
        return
    yield make_finding(
        "framework-driver-too-old",
        Severity.ERROR,
        "framework",
        f"{label(build)} cannot run here: it is built for CUDA {cuda.value}, which needs driver {floor[0]} or newer; "
        f"the driver is {driver.version}",
        (
            f"{label(build)} at {build.location}: built for CUDA {cuda.value} ({cuda.how}, {cuda.source})",
            f"driver {driver.version} is below {floor[0]}, {floor[1].rule}",
            cite(floor[1].source),
        ),
        f"install a driver >= {floor[0]}, or a {phrases.framework(build.name)} build for an older CUDA",
        _subject(build),
    )


def _kernels(env: Environment, build: FrameworkBuild) -> Iterator[Finding]:
    targets = [target for item in build.objects for target in (*item.sass, *item.ptx)]
    if not targets:
        return  # nothing read: nothing to say
    listed = ", ".join(targets)
    where = "; ".join(item.path for item in build.objects)
    for gpu in gpus_with_capability(env):
        found = runs_on(targets, gpu.compute_capability or "")
        if found is None:
            yield make_finding(
                "framework-no-kernels-for-gpu",
                Severity.ERROR,
                "framework",
                f"{label(build)} has no kernels for {gpu_text(gpu)}: no SASS for it and no PTX",
                (f"{where}: GPU code {listed}",),
                f"use a {phrases.framework(build.name)} build whose architectures include this GPU's",
                _subject(build),
            )
        elif found == "ptx":
            yield make_finding(
                "framework-ptx-only",
                Severity.INFO,
                "framework",
                f"{label(build)} runs on {gpu_text(gpu)} only through PTX JIT (slow first start)",
                (f"{where}: GPU code {listed}",),
                "expect minutes of JIT compilation on first use; set CUDA_CACHE_MAXSIZE so the cache keeps it",
                _subject(build),
            )
