"""What the stack uses: the framework's copies, else what a plain dlopen reaches; which copies a test gets."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeVar

from packaging.version import Version

from .. import phrases
from ..compat import tensorflow as tf_facts
from ..devices import CudaDevice, VisibleDevices, parse_visible_devices
from ..environment import (
    Candidate,
    CudaRuntime,
    Cudnn,
    Environment,
    FrameworkBuild,
    Gpu,
    LoadedLibrary,
    Resolution,
    State,
    TensorFlow,
    Via,
)
from ..frameworks.base import own_rules

if TYPE_CHECKING:
    from packaging.specifiers import SpecifierSet

from .model import (
    LOADER_VIAS,
    major,
    parse_version,
)

# What the stack uses -------------------------------------------------------------------------------


@dataclass(frozen=True)
class TensorFlowNeeds:
    cudart: str | None
    cudnn: str | None
    cuda: str | None  # the CUDA it was built for (build info, else the tested table)
    cudnn_compiled: str | None  # the cuDNN it was compiled with, as precise as known
    tested: tf_facts.TestedBuild | None
    owner: str  # "TensorFlow 2.3.1 (built for CUDA 10.1, cuDNN 7.6)"


def tensorflow_needs(env: Environment) -> TensorFlowNeeds | None:
    tf = env.tensorflow
    if tf.state is not State.FOUND or tf.is_cuda_build is False or tf.version is None:
        return None
    tested = tf_facts.tested_build(tf.version, env.host.system)
    cuda = tf.cuda_version or (tested.cuda if tested else None)
    # The tested table gives the compiled minor (7.6) where build info gives only the major (7).
    compiled = tf.cudnn_version
    if tested and (compiled is None or major(tested.cudnn) == major(compiled)):
        compiled = tested.cudnn if compiled is None or "." not in compiled else compiled
    cudart, cudnn = tf.cudart_name, tf.cudnn_name
    if (cudart is None or cudnn is None) and tested:
        derived = tf_facts.library_names(env.host.system, tested.cuda, tested.cudnn)
        cudart, cudnn = cudart or derived[0], cudnn or derived[1]
    return TensorFlowNeeds(cudart, cudnn, cuda, compiled, tested, _owner(tf.version, tf, cuda, compiled))


def _owner(version: str, tf: TensorFlow, cuda: str | None, compiled: str | None) -> str:
    """'TensorFlow 2.18.0 (built for CUDA 12.5.1 and cuDNN 9; tested with cuDNN 9.3)': what the build info says
    is a build fact; what only the docs' tested configuration adds is said as such."""
    built = [
        f"CUDA {tf.cuda_version}" if tf.cuda_version else "",
        f"cuDNN {tf.cudnn_version}" if tf.cudnn_version else "",
    ]
    tested = [
        f"CUDA {cuda}" if cuda and cuda != tf.cuda_version else "",
        f"cuDNN {compiled}" if compiled and compiled != tf.cudnn_version else "",
    ]
    said = [
        f"built for {' and '.join(p for p in built if p)}" if any(built) else "",
        f"tested with {' and '.join(p for p in tested if p)}" if any(tested) else "",
    ]
    detail = "; ".join(part for part in said if part)
    return f"TensorFlow {version}" + (f" ({detail})" if detail else "")


def resolution_of(env: Environment, name: str) -> Resolution | None:
    return env.resolution(name, "tensorflow") or env.resolution(name, "process")


def winning_candidate(resolution: Resolution | None) -> Candidate | None:
    if resolution is None:
        return None
    path = resolution.loaded or resolution.predicted
    return next((c for c in resolution.candidates if c.path == path), None) if path else None


Copy = CudaRuntime | Cudnn


def copy_of(copies: Iterable[Copy], candidate: Candidate | None) -> Copy | None:
    if candidate is None:
        return None
    return next(
        (c for c in copies if c.path == candidate.path or (c.real_path and c.real_path == candidate.real_path)), None
    )


def loader_visible(vias: Iterable[Via]) -> bool:
    return any(v in LOADER_VIAS for v in vias)


# What each framework loads ------------------------------------------------------------------------


def gpu_frameworks(env: Environment) -> list[FrameworkBuild]:
    """The frameworks whose files say they use CUDA (or do not say they do not), found and read."""
    return [b for b in env.frameworks if b.state is not State.ABSENT and b.is_cuda_build is not False]


def any_gpu_framework(env: Environment) -> bool:
    """Whether some installed framework is a GPU build (TensorFlow counted from its own model too)."""
    tf = env.tensorflow
    return bool(gpu_frameworks(env)) or (tf.state is State.FOUND and tf.is_cuda_build is not False)


class _Probed(Protocol):
    """A probed copy of any kind: where it is, and the names it answers to."""

    @property
    def path(self) -> str: ...

    @property
    def names(self) -> tuple[str, ...]: ...


P = TypeVar("P", bound=_Probed)


def probed_for(copies: Iterable[P], load: LoadedLibrary) -> P | None:
    """Of ``copies``, the one a framework's load gets: the same file, by any of the names it answers to."""
    if load.path is None:
        return None
    folder, _, name = load.path.rpartition("/")
    return next(
        (c for c in copies if c.path == load.path or (c.path.rpartition("/")[0] == folder and name in c.names)), None
    )


def load_copy(env: Environment, load: LoadedLibrary) -> Copy | None:
    """The probed CUDA runtime or cuDNN a framework's load gets."""
    copies: list[Copy] = [*env.cuda_runtimes, *env.cudnns]
    return probed_for(copies, load)


def framework_copies(env: Environment, build: FrameworkBuild) -> list[Copy]:
    """The CUDA runtime and cuDNN copies ``build`` loads and uses, as probed (a preloaded copy it never asks
    for, such as torch's preload of a CUDA 12 runtime beside its CUDA 13 one, is mapped but unused)."""
    found: list[Copy] = []
    for load in (load for load in build.loads if load.required):
        copy = load_copy(env, load)
        if copy is not None and copy not in found:
            found.append(copy)
    return found


def loaded_by(env: Environment, copy: Copy, names: Collection[str] | None = None) -> list[FrameworkBuild]:
    """The frameworks (among ``names``; every one found by default) that load ``copy``."""
    return [b for b in gpu_frameworks(env) if (names is None or b.name in names) and copy in framework_copies(env, b)]


def judged_by_framework(env: Environment) -> bool:
    """Whether a framework other than TensorFlow says which copies it loads: then those are the copies in use."""
    return any(b.loads for b in gpu_frameworks(env) if not own_rules(b.name))


def stack_runtime(env: Environment) -> CudaRuntime | None:
    """The CUDA runtime the stack uses: the one TensorFlow's loader picks. None without a framework."""
    needs = tensorflow_needs(env)
    if needs and needs.cudart:
        found = copy_of(env.cuda_runtimes, winning_candidate(resolution_of(env, needs.cudart)))
        return found if isinstance(found, CudaRuntime) else None
    return None


def runtimes_in_use(env: Environment) -> tuple[list[CudaRuntime], bool]:
    """The runtimes to judge, and whether the stack is known to use them.

    With a framework: its runtime. Without: every runtime the loader can see; the host can run GPU work if any of
    them can, so each failing one is an error only when they all fail.
    """
    stack = stack_runtime(env)
    if judged_by_framework(env):
        loaded = [
            c
            for b in gpu_frameworks(env)
            if not own_rules(b.name)
            for c in framework_copies(env, b)
            if isinstance(c, CudaRuntime)
        ]
        return list(dict.fromkeys([*([stack] if stack else []), *loaded])), True
    if stack is not None:
        return [stack], True
    if tensorflow_needs(env) is not None:
        return [], True
    # Without a framework, the runtimes a program can load: the loader's, and the pip wheels' (a pip-only host).
    return [r for r in env.cuda_runtimes if r.version and (loader_visible(r.via) or Via.PIP_WHEEL in r.via)], False


def stack_cudnns(env: Environment) -> list[Cudnn]:
    needs = tensorflow_needs(env)
    if needs and needs.cudnn:
        found = copy_of(env.cudnns, winning_candidate(resolution_of(env, needs.cudnn)))
        return [found] if isinstance(found, Cudnn) else []
    return [c for c in env.cudnns if loader_visible(c.via)]


def visible_gpus(env: Environment) -> tuple[CudaDevice, ...]:
    """The devices CUDA will see, in CUDA's numbering, MIG devices included (devices.py says which)."""
    return visible_devices(env).devices


def assignable_devices(env: Environment) -> tuple[CudaDevice, ...]:
    """The devices this run may hand to xdist workers, one CUDA_VISIBLE_DEVICES each: every device the outer
    CUDA_VISIBLE_DEVICES names (all when unset), each MIG device of a partitioned GPU on its own. A MIG device
    whose UUID NVML did not give is left out: only its UUID can name it (the MIG-<GPU-UUID>/<GI>/<CI> form is for
    drivers before R470, which list no MIG device), and a worker given it would be given an empty value, which
    hides every device."""
    return tuple(device for device in visible_devices(env).named if device.mig is None or device.uuid)


def visible_devices(env: Environment) -> VisibleDevices:
    """The one reading of CUDA_VISIBLE_DEVICES that the doctor's findings and the markers' judgements both use.
    The last environment's reading is kept: the diagnosis asks for it in several rules, and the plugin in every
    memory-marked test's setup, and each reading walks every GPU. Kept by identity (the environment is frozen;
    holding it keeps its id from being reused), one at a time (a run judges one environment per host)."""
    last = _LAST_VISIBLE[0] if _LAST_VISIBLE else None  # read once: another thread may replace it meanwhile
    if last is not None and last[0] is env:
        return last[1]
    visible = parse_visible_devices(env.variables.get("CUDA_VISIBLE_DEVICES"), env.driver.gpus, env.driver.version)
    _LAST_VISIBLE[:] = [(env, visible)]
    return visible


_LAST_VISIBLE: list[tuple[Environment, VisibleDevices]] = []


def no_device_cause(env: Environment, visible: VisibleDevices) -> str | None:
    """The code of the one finding that says why CUDA sees no device at all (None when it sees one): the doctor
    raises exactly this finding, and a test that needs a GPU skips quoting it, so the two cannot disagree."""
    if visible.devices:
        return None
    if not env.driver.gpus:  # the driver lists none: whatever the variable names, that is the reason
        return "no-gpu"
    if visible.unlisted_mig:
        return "cuda-visible-devices-mig"
    if visible.names_a_gpu:  # every GPU named (or, unset, present) has MIG enabled and no MIG device
        return "mig-no-devices"
    return "cuda-visible-devices-hides-all"


def loader_copies(env: Environment) -> tuple[CudaRuntime | None, Cudnn | None]:
    """The CUDA runtime and cuDNN the stack uses (TensorFlow's search where TensorFlow is there), else those a plain
    dlopen gives (the newest winning copy of each): what a framework whose own search was not read (Windows, an older
    snapshot) is judged by."""
    runtime = stack_runtime(env) or _pick(loader_winners(env, env.cuda_runtimes), None)
    cudnn = stack_cudnn(env) or _pick(loader_winners(env, env.cudnns), None)
    return (
        runtime if isinstance(runtime, CudaRuntime) else None,
        cudnn if isinstance(cudnn, Cudnn) else None,
    )


def loader_winners(env: Environment, copies: Sequence[Copy]) -> list[Copy]:
    """Copies that win the plain-dlopen search for their own soname."""
    winners: list[Copy] = []
    for resolution in env.resolutions:
        if resolution.context != "process":
            continue
        found = copy_of(copies, winning_candidate(resolution))
        if found is not None and found not in winners:
            winners.append(found)
    return winners


def _pick(copies: Sequence[Copy], spec: SpecifierSet | None, avoid: Collection[str] = ()) -> Copy | None:
    """The newest copy matching ``spec``, preferring those that can run (not in ``avoid``); without a match, the
    newest of all, so that a failed requirement can say what there is."""

    def key(copy: Copy) -> tuple[bool, Version]:
        return copy.path not in avoid, parse_version(copy.version) or Version("0")

    matching = [c for c in copies if spec is None or (parse_version(c.version) is not None and key(c)[1] in spec)]
    return max(matching or copies, key=key, default=None)


def stack_cudnn(env: Environment) -> Cudnn | None:
    """The cuDNN the framework's loader picks. None without a framework, or when it finds none."""
    needs = tensorflow_needs(env)
    if needs is None or not needs.cudnn:
        return None
    found = copy_of(env.cudnns, winning_candidate(resolution_of(env, needs.cudnn)))
    return found if isinstance(found, Cudnn) else None


def loaded_copies(env: Environment, framework: str | None = None) -> list[Copy] | None:
    """The copies the frameworks load (only ``framework``'s when named); None when no framework says. Unnamed,
    TensorFlow's copies are those of its own stack rules (:func:`stack_cudnn`), not counted here."""
    builds = [
        b for b in gpu_frameworks(env) if b.loads and (b.name == framework if framework else not own_rules(b.name))
    ]
    if not builds:
        return None
    return list(dict.fromkeys(c for b in builds for c in framework_copies(env, b)))


def selected_cudnn(
    env: Environment, spec: SpecifierSet | None = None, avoid: Collection[str] = (), framework: str | None = None
) -> Cudnn | None:
    """The cuDNN a test gets: the one ``framework`` loads (any framework's, when none is named and frameworks
    say what they load), else TensorFlow's, else the newest loader-winning copy (matching ``spec`` if any
    does, one that can run before one that cannot: ``avoid`` holds the paths of copies that cannot)."""
    loaded = loaded_copies(env, framework)
    if loaded is not None:
        found = _pick([c for c in loaded if isinstance(c, Cudnn)], spec, avoid)
        return found if isinstance(found, Cudnn) else None
    needs = tensorflow_needs(env)
    # When TensorFlow's own cuDNN is missing, the copies a plain dlopen finds are what there is to report.
    copies = (stack_cudnns(env) if needs and needs.cudnn else []) or loader_winners(env, env.cudnns)
    found = _pick(copies, spec, avoid)
    return found if isinstance(found, Cudnn) else None


def selected_runtime(
    env: Environment, spec: SpecifierSet | None = None, avoid: Collection[str] = (), framework: str | None = None
) -> CudaRuntime | None:
    """The CUDA runtime a test gets: the one the framework loads, else TensorFlow's, else the newest
    loader-winning copy (as selected_cudnn)."""
    loaded = loaded_copies(env, framework)
    if loaded is not None:
        found = _pick([c for c in loaded if isinstance(c, CudaRuntime)], spec, avoid)
        return found if isinstance(found, CudaRuntime) else None
    stack = stack_runtime(env)
    copies: list[Copy] = [stack] if stack else loader_winners(env, env.cuda_runtimes)
    found = _pick(copies, spec, avoid)
    return found if isinstance(found, CudaRuntime) else None


def gpus_with_capability(env: Environment) -> list[Gpu]:
    return [gpu for gpu in env.driver.gpus if parse_version(gpu.compute_capability) is not None]


def runtime_evidence(runtime: CudaRuntime) -> str:
    return phrases.copy(runtime)


def cudnn_evidence(cudnn: Cudnn) -> str:
    return phrases.copy(cudnn, *([f"built for CUDA {cudnn.cudart_version}"] if cudnn.cudart_version else []))


def gpu_text(gpu: Gpu) -> str:
    return phrases.gpu(gpu, free=False)


def copy_in_use(env: Environment, copy: Copy) -> bool:
    """Whether the stack uses this copy: the framework's own copy, or, without a framework, any copy a plain
    dlopen can reach. A failure of a copy in use stops GPU work; one of a copy nobody loads is a warning."""
    if loaded_by(env, copy):
        return True
    if judged_by_framework(env):
        if tensorflow_needs(env) is None:
            return False
        return copy is stack_runtime(env) if isinstance(copy, CudaRuntime) else copy in stack_cudnns(env)
    if isinstance(copy, CudaRuntime):
        stack = stack_runtime(env)
        if stack is not None or tensorflow_needs(env) is not None:
            return stack is not None and stack.path == copy.path
    else:
        needs = tensorflow_needs(env)
        if needs is not None and needs.cudnn:
            return any(c.path == copy.path for c in stack_cudnns(env))
    return loader_visible(copy.via)
