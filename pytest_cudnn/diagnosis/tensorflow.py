"""Rules about TensorFlow: the libraries it loads, the cuDNN it accepts, its kernels, its wheel pins."""

from __future__ import annotations

from collections.abc import Iterator

from packaging.version import Version

from .. import phrases
from .._base.versions import canonical_name
from ..compat import tensorflow as tf_facts
from ..environment import (
    CudaRuntime,
    Cudnn,
    Environment,
    Resolution,
    State,
    Via,
)
from .kernels import runs_on
from .model import (
    Finding,
    Severity,
    cite,
    folder_of,
    major,
    make_finding,
    parse_version,
)
from .remedies import blocking_text, owning_distribution, pip_fix
from .stack import (
    TensorFlowNeeds,
    any_gpu_framework,
    copy_of,
    cudnn_evidence,
    gpu_text,
    gpus_with_capability,
    resolution_of,
    runtime_evidence,
    tensorflow_needs,
    winning_candidate,
)

# TensorFlow ---------------------------------------------------------------------------------------


def tensorflow_rules(env: Environment) -> Iterator[Finding]:
    tf = env.tensorflow
    if tf.state is not State.FOUND:
        return
    if tf.is_cuda_build is False:
        last, source = tf_facts.WINDOWS_LAST_GPU_RELEASE
        version = parse_version(tf.version)
        if env.host.system == "Windows" and version and version >= Version(last) and version.release[:2] > (2, 10):
            yield make_finding(
                "windows-tensorflow-no-gpu",
                Severity.WARNING,
                "tensorflow",
                f"TensorFlow {tf.version} has no GPU support on native Windows (the last was {last})",
                (f"TensorFlow {tf.version} at {tf.location}: a CPU-only build", cite(source)),
                "run TensorFlow in WSL2, or pin tensorflow<2.11 with CUDA 11.2 and cuDNN 8.1",
            )
        else:
            # Alone, a CPU-only build means nothing here will use the GPU: an error of its own (issue 10).
            fix, requirement = _gpu_build_fix(env)
            yield make_finding(
                "tensorflow-cpu-only",
                Severity.WARNING if any_gpu_framework(env) else Severity.ERROR,
                "tensorflow",
                f"TensorFlow {tf.version} ({tf.distribution}) is a CPU-only build: it will not use the GPU",
                (f"{tf.build_info_path}: is_cuda_build = False",),
                fix,
                requirement=requirement,
            )
        return
    needs = tensorflow_needs(env)
    if needs is None:
        return
    if not tf.cuda_version and needs.tested:
        yield make_finding(
            "tensorflow-build-unrecorded",
            Severity.INFO,
            "tensorflow",
            f"TensorFlow {tf.version}'s build info records no CUDA version; its tested configuration stands in",
            (
                f"{tf.build_info_path}: {tf.reason}",
                f"tested build {needs.tested.tensorflow}: CUDA {needs.tested.cuda}, cuDNN {needs.tested.cudnn}",
                cite(needs.tested.source),
            ),
            "nothing to do; the checks below use the tested configuration",
        )
    elif tf.cuda_version and tf.cudart_name is None and needs.tested:
        yield make_finding(
            "tensorflow-build-unrecorded",
            Severity.INFO,
            "tensorflow",
            f"TensorFlow {tf.version}'s build info records only CUDA {tf.cuda_version_raw!r}; the tested configuration "
            f"gives CUDA {needs.tested.cuda}",
            (f"{tf.build_info_path}", cite(needs.tested.source)),
            "nothing to do; the checks below use the tested configuration",
        )
    yield from _tensorflow_library(env, needs, "cudart")
    yield from _tensorflow_library(env, needs, "cudnn")
    yield from _tensorflow_cudnn_version(env, needs)
    yield from _tensorflow_kernels(env)
    yield from _tensorflow_wheels(env)


def _pinned_cudnn(env: Environment, cudnn: Cudnn) -> str | None:
    """The requirement that puts back the cuDNN wheel tensorflow[and-cuda] pins, where the copy TensorFlow gets is
    that wheel's (checked against every framework's demand on it); None otherwise."""
    pins = tf_facts.and_cuda_pins(env.tensorflow.version or "")
    wheel = owning_distribution(env, cudnn)
    if pins is None or wheel is None or canonical_name(wheel.name) != canonical_name(pins.cudnn_package):
        return None
    remedy = pip_fix(env, canonical_name(wheel.name), pins.cudnn, cudnn=True)
    return remedy.requirement if remedy.resolves else None


def _gpu_build_fix(env: Environment) -> tuple[str, str | None]:
    """The GPU build of the same release in place of the CPU-only one: ``tensorflow-cpu`` (or ``tensorflow`` on a
    platform without GPU wheels) removed first, since both install the one ``tensorflow`` package folder; the
    requirement where the ``[and-cuda]`` extra installs on this Python."""
    tf = env.tensorflow
    remove = f"pip uninstall -y {tf.distribution} && " if tf.distribution and tf.distribution != "tensorflow" else ""
    remedy = tf_facts.and_cuda_remedy(tf.version or "", env.host.python) if env.host.system == "Linux" else None
    if remedy is not None and remedy.uses_extra:
        return f"{remove}{remedy.command} (the GPU build of the same release, with its nvidia wheels)", (
            f"tensorflow[and-cuda]=={tf.version}"
        )
    if remedy is not None:
        wheels = remedy.command.removeprefix("pip install ")
        return (
            f"{remove}pip install 'tensorflow=={tf.version}' {wheels} (the extra does not install on this Python)",
            None,
        )
    return f"{remove}pip install 'tensorflow[and-cuda]' (Linux; TensorFlow has no GPU wheels for native Windows)", None


def _install_hint(env: Environment, needs: TensorFlowNeeds, kind: str) -> str:
    """What to install: the tensorflow[and-cuda] extra where it installs on this Python, its nvidia pins one by
    one where it does not (TensorFlow 2.14's tensorrt pin has no wheel for Python 3.11), else the library itself."""
    tf = env.tensorflow
    remedy = tf_facts.and_cuda_remedy(tf.version or "", env.host.python) if env.host.system == "Linux" else None
    if remedy is not None:
        if remedy.uses_extra:
            return f"{remedy.command} (it installs the matching nvidia wheels)"
        skipped = ", ".join(remedy.left_out)
        return (
            f"{remedy.command} (the nvidia wheels of tensorflow[and-cuda]=={tf.version}; the extra itself does not "
            f"install on Python {env.host.python}" + (f": {skipped} has no wheel there)" if skipped else ")")
        )
    if kind == "cudnn":
        cuda = needs.cuda or "?"
        return (
            f"install cuDNN {needs.cudnn_compiled or '?'} for CUDA {cuda} and put its library folder on the loader path"
        )
    return f"install the CUDA {needs.cuda or '?'} runtime and put its library folder on the loader path"


def _tensorflow_library(env: Environment, needs: TensorFlowNeeds, kind: str) -> Iterator[Finding]:
    name = needs.cudart if kind == "cudart" else needs.cudnn
    if name is None:
        return
    resolution = resolution_of(env, name)
    if winning_candidate(resolution) is not None:
        if resolution is not None and resolution.context == "tensorflow":
            yield from _tensorflow_shadowing(env, needs, resolution)
        return
    copies: list[CudaRuntime | Cudnn] = list(env.cuda_runtimes if kind == "cudart" else env.cudnns)
    evidence = [f"{needs.owner} loads {name}"]
    unseen = [c for c in (resolution.candidates if resolution else ()) if c.loader_rank is None]
    for candidate in unseen:
        evidence.append(
            f"{name} exists at {candidate.path} (via {phrases.via(candidate.via)}), where the loader never looks"
        )
    for copy in copies:
        evidence.append(
            (runtime_evidence(copy) if isinstance(copy, CudaRuntime) else cudnn_evidence(copy)) + f": not {name}"
        )
    if needs.tested:
        evidence.append(cite(needs.tested.source))
    label = "CUDA runtime" if kind == "cudart" else "cuDNN"
    if unseen:
        folder = folder_of(unseen[0].path)
        fix = (
            f"add {folder} to PATH, or call os.add_dll_directory({folder!r}) before TensorFlow is imported"
            if env.host.system == "Windows"
            else f"add {folder} to LD_LIBRARY_PATH"
        )
    else:
        fix = _install_hint(env, needs, kind)
    yield make_finding(
        f"tensorflow-{kind}-not-found",
        Severity.ERROR,
        "tensorflow",
        f"{needs.owner} loads {name}, and the loader finds no copy of it: no {label} for TensorFlow",
        evidence,
        fix,
    )


def _tensorflow_shadowing(env: Environment, needs: TensorFlowNeeds, resolution: Resolution) -> Iterator[Finding]:
    winner = winning_candidate(resolution)
    if winner is None or Via.LD_LIBRARY_PATH not in winner.via:
        return
    wheel = next((c for c in resolution.candidates if Via.RUNPATH in c.via and c.real_path != winner.real_path), None)
    if wheel is None:
        return
    copies = list(env.cudnns) + list(env.cuda_runtimes)
    won, lost = copy_of(copies, winner), copy_of(copies, wheel)
    won_v = (won.version if won else None) or "(version unknown)"
    lost_v = (lost.version if lost else None) or "(version unknown)"
    yield make_finding(
        "tensorflow-library-shadowed",
        Severity.WARNING,
        "loader",
        f"{resolution.name} {won_v} from LD_LIBRARY_PATH wins over the {lost_v} wheel beside TensorFlow",
        (
            f"loaded: {winner.path} (via {phrases.via(winner.via)})",
            f"shadowed: {wheel.path} (via {phrases.via(wheel.via)})",
            "the loader searches LD_LIBRARY_PATH before TensorFlow's RUNPATH (ld.so(8)); pytorch/pytorch#80637",
        ),
        f"remove {folder_of(winner.path)} from LD_LIBRARY_PATH for this environment",
        (winner.path,),  # the copy TensorFlow gets: what its cuDNN findings follow from (model.FOLLOWS)
    )


def _tensorflow_cudnn_version(env: Environment, needs: TensorFlowNeeds) -> Iterator[Finding]:
    if not needs.cudnn or not needs.cudnn_compiled:
        return
    cudnn = copy_of(env.cudnns, winning_candidate(resolution_of(env, needs.cudnn)))
    if (
        not isinstance(cudnn, Cudnn)
        or parse_version(cudnn.version) is None
        or parse_version(needs.cudnn_compiled) is None
    ):
        return
    assert cudnn.version is not None
    if not tf_facts.accepts_cudnn(needs.cudnn_compiled, cudnn.version):
        fix, requirement = _install_hint(env, needs, "cudnn"), _pinned_cudnn(env, cudnn)
        if requirement is not None:
            fix = f'pip install "{requirement}" (what tensorflow[and-cuda]=={env.tensorflow.version} pins)'
        resolution = resolution_of(env, needs.cudnn)
        winner = winning_candidate(resolution)
        if winner is not None and Via.LD_LIBRARY_PATH in winner.via and resolution is not None:
            # The wheel beside TensorFlow is there, shadowed: installing it again changes nothing.
            wheels = [c for c in resolution.candidates if Via.RUNPATH in c.via and c.real_path != winner.real_path]
            accepted = [
                c
                for c in wheels
                if (copy := copy_of(env.cudnns, c)) is not None
                and copy.version
                and tf_facts.accepts_cudnn(needs.cudnn_compiled, copy.version)
            ]
            if accepted:
                fix = (
                    f"remove {folder_of(winner.path)} from LD_LIBRARY_PATH for this environment: the cuDNN wheel "
                    f"beside TensorFlow ({accepted[0].path}) fits, and LD_LIBRARY_PATH is searched before it"
                )
                requirement = None
        yield make_finding(
            "tensorflow-cudnn-too-old",
            Severity.ERROR,
            "tensorflow",
            f"{needs.owner} needs cuDNN {needs.cudnn_compiled} or a newer {major(needs.cudnn_compiled)}.x; "
            f"the loader gives it {cudnn.version}",
            (
                cudnn_evidence(cudnn),
                f"TensorFlow will log 'Loaded runtime CuDNN library: {cudnn.version} but source was compiled with: "
                f"{needs.cudnn_compiled}'",
                cite("tf-cudnn-rule"),
            ),
            fix,
            (cudnn.path,),
            requirement,
        )


def _tensorflow_kernels(env: Environment) -> Iterator[Finding]:
    tf = env.tensorflow
    if not tf.compute_capabilities:
        return
    listed = ", ".join(tf.compute_capabilities)
    for gpu in gpus_with_capability(env):
        found = runs_on(tf.compute_capabilities, gpu.compute_capability or "")
        if found is None:
            yield make_finding(
                "tensorflow-no-kernels-for-gpu",
                Severity.ERROR,
                "tensorflow",
                f"TensorFlow {tf.version} has no kernels for {gpu_text(gpu)}",
                (f"{tf.build_info_path}: cuda_compute_capabilities = {listed}",),
                "use a TensorFlow release built for this GPU's architecture, or build TensorFlow from source for it",
                gpus=(gpu.index,),
            )
        elif found == "ptx":
            yield make_finding(
                "tensorflow-ptx-only",
                Severity.INFO,
                "tensorflow",
                f"TensorFlow {tf.version} runs on {gpu_text(gpu)} only through PTX JIT (slow first start)",
                (f"{tf.build_info_path}: cuda_compute_capabilities = {listed}",),
                "expect minutes of JIT compilation on first use; set CUDA_CACHE_MAXSIZE so the cache keeps it",
                gpus=(gpu.index,),
            )


def _tensorflow_wheels(env: Environment) -> Iterator[Finding]:
    """The nvidia wheels beside TensorFlow against its ``[and-cuda]`` pins, by the installed distributions'
    own versions (nvidia-cudnn-cu12 9.3.0.75): the library reports only three parts (9.3.0)."""
    tf = env.tensorflow
    pins = tf_facts.and_cuda_pins(tf.version or "")
    if pins is None or not tf.location:
        return
    site = folder_of(tf.location)
    for package, spec in ((pins.cudnn_package, pins.cudnn), (pins.runtime_package, pins.runtime)):
        installed = next(
            (d for d in env.distributions if _same_name(d.name, package) and _same_folder(d.location, site)), None
        )
        if installed is None or tf_facts.in_pins(spec, installed.version):
            continue
        remedy = pip_fix(env, package, spec, cudnn=package.startswith("nvidia-cudnn"))
        yield make_finding(
            "tensorflow-wheel-pins",
            Severity.WARNING,
            "tensorflow",
            f"{installed.name} {installed.version} is installed beside TensorFlow {tf.version}; tensorflow[and-cuda] "
            f"requires {package}{spec}",
            (f"{installed.name} {installed.version} in {installed.location}", cite(pins.source)),
            f"pip install '{remedy.requirement}'"
            if remedy.resolves
            else f"pip install '{remedy.requirement}' conflicts with what other frameworks here need: "
            f"{blocking_text(remedy)}; give TensorFlow a virtual environment of its own",
            requirement=remedy.requirement if remedy.resolves else None,
        )


def _same_name(a: str, b: str) -> bool:
    """Distribution names compare after PEP 503 normalisation: nvidia_cudnn_cu12 is nvidia-cudnn-cu12."""
    return canonical_name(a) == canonical_name(b)


def _same_folder(a: str, b: str) -> bool:
    return a.rstrip("/\\") == b.rstrip("/\\")
