"""Rules about each framework as it will run: the copies it loads, judged by its own rules.

Per framework (PyTorch, JAX; TensorFlow's version rules live in :mod:`.tensorflow`): a CPU-only build; the driver
against the CUDA runtime it loads (else against the CUDA it was built for: the runtime it loads is at least that);
its cuDNN rule against the cuDNN it loads; every library it cannot do without found; the GPUs against the kernels
it carries. Across frameworks: two that load different copies of one name, of which a process gets one.
"""

from __future__ import annotations

import posixpath
from collections.abc import Collection, Iterator, Sequence
from typing import TypeVar

from .. import phrases
from .._base.text import listing
from .._base.versions import canonical_name, major_of, specifier_set
from ..compat import cuda as cuda_facts
from ..compat import tensorflow as tf_facts
from ..compat.libraries import provider
from ..environment import OBJECT_MISSING, CudaRuntime, Cudnn, Environment, FrameworkBuild, LoadedLibrary, State
from ..frameworks import framework
from ..frameworks.base import own_rules
from .forward import user_mode_covers
from .kernels import runs_on
from .model import Finding, Severity, cite, folder_of, make_finding, parse_version
from .remedies import blocking_text, owning_distribution, pip_fix
from .stack import any_gpu_framework, gpu_frameworks, gpu_text, gpus_with_capability, load_copy, tensorflow_needs


def _own_rules(build: FrameworkBuild) -> bool:
    """TensorFlow's CPU build, driver, cuDNN and kernels are judged by the TensorFlow rules, from its build info."""
    entry = framework(build.name)
    return entry is not None and entry.own_rules


def _kernels_in_fatbin(build: FrameworkBuild) -> bool:
    """Whether its own fatbins hold its kernels (JAX's plugin carries few: XLA compiles most at run time)."""
    entry = framework(build.name)
    return entry is not None and entry.kernels_in_fatbin


def framework_rules(env: Environment) -> Iterator[Finding]:
    builds = [b for b in env.frameworks if b.state is State.FOUND]
    any_gpu = any_gpu_framework(env)
    for build in builds:
        if build.is_cuda_build is False:
            if not _own_rules(build):
                yield _cpu_only(env, build, any_gpu)
            continue
        if not _own_rules(build):
            # First: on this driver the build runs whatever else is mended, so its fix comes before theirs (CuPy
            # for CUDA 13 on driver 550 led with the NVRTC it could not load; installing it left CuPy unable to run).
            yield from _driver(env, build)
        yield from _not_importable(build)
        yield from _missing(env, build)
        if _own_rules(build):
            continue
        yield from _cudnn(env, build)
        yield from _below_floor(env, build)
        if _kernels_in_fatbin(build):
            yield from _kernels(env, build)
    yield from _conflicts(env)


def subjects(build: FrameworkBuild, *copies: str | None) -> tuple[str, ...]:
    """What a framework's finding is about: its package folder, and ``copies`` that the finding says cannot run
    for anyone (a copy one framework refuses may serve another)."""
    return tuple(dict.fromkeys(p for p in (build.location, *copies) if p))


def uses(build: FrameworkBuild) -> set[str]:
    """The package folder and every copy ``build`` loads and uses: findings about these concern it."""
    return {p for p in (build.location, *(load.path for load in build.loads if load.required)) if p}


def label(build: FrameworkBuild) -> str:
    return f"{phrases.framework(build.name)} {build.version or '(version unknown)'}"


def copies_text(env: Environment, build: FrameworkBuild, kind: type[CudaRuntime] | type[Cudnn]) -> str:
    """'wheel, DT_RPATH': where the runtime (or cuDNN) a framework loads lives, and which rule found it."""
    for load in build.loads:
        if load.path is None or not load.required or not isinstance(load_copy(env, load), kind):
            continue
        rule = "preload" if load.how == "preload" else (load.found_by or "").split(" of ")[0]
        return ", ".join(word for word in (_where(load), rule) if word)
    return ""


def how_found(load: LoadedLibrary) -> str:
    """'wheel, through DT_RPATH of libtorch_cuda.so': where the copy lives and which rule found it."""
    rule = (load.found_by or "not found").replace(load.requester or "\0", (load.requester or "").rpartition("/")[2])
    return f"{_where(load)}, {'through ' if load.found_by and load.found_by.startswith('DT_') else ''}{rule}"


def _where(load: LoadedLibrary) -> str:
    """'wheel' for a copy in an nvidia/*/lib folder of a pip wheel, else 'system'."""
    return "wheel" if load.path and "/nvidia/" in load.path else "system"


def _cpu_only(env: Environment, build: FrameworkBuild, any_gpu: bool) -> Finding:
    # With no GPU framework at all, a CPU-only build means nothing here will use the GPU: an error of its own.
    return make_finding(
        "framework-cpu-only",
        Severity.WARNING if any_gpu else Severity.ERROR,
        "framework",
        f"{label(build)} ({build.distribution}) is a CPU-only build: it will not use the GPU",
        (f"{build.location}: no CUDA build ({build.reason or 'its files name no CUDA'})",),
        _install_hint(env, build),
        subjects(build),
    )


def _install_hint(env: Environment, build: FrameworkBuild) -> str:
    """How to get a CUDA build that runs here (a plain install may bring a CUDA 13 build the driver or the GPUs
    cannot run: :func:`.releases.install`). A CPU-only build with a local version ("2.5.1+cpu", from a CPU-only
    index) is removed first: with it installed, ``pip install torch`` is satisfied and changes nothing."""
    from .releases import install  # here: only a fix that says what to install pays for the release tables

    entry = framework(build.name)
    hint = (
        install(env, build.name)
        or (entry.install_hint if entry else None)
        or f"install a CUDA build of {phrases.framework(build.name)}"
    )
    if build.version and "+" in build.version and build.distribution:
        return f"pip uninstall -y {build.distribution} (the {build.version} build is CPU-only), then {hint}"
    return hint


def _import_objects(build: FrameworkBuild) -> set[str]:
    """The paths of the objects ``import <name>`` loads (the registry's ``import_objects``)."""
    entry = framework(build.name)
    location = build.location or ""
    return {posixpath.join(location, name) for name in (entry.import_objects if entry else ())}


def reinstall_fix(build: FrameworkBuild, *, deps: bool) -> str:
    """pip's words that put a framework's own files (and, with ``deps``, the wheels it pins) back."""
    wanted = f"{build.distribution}=={build.version}" if build.distribution and build.version else build.distribution
    if not wanted:
        return f"reinstall {phrases.framework(build.name)}"
    return f"reinstall {build.distribution}: pip install --force-reinstall{'' if deps else ' --no-deps'} {wanted}"


def _not_importable(build: FrameworkBuild) -> Iterator[Finding]:
    """Its own objects that `import <name>` loads, not there: the import itself fails."""
    own = _import_objects(build)
    for item in build.objects:
        if item.path not in own or item.reason != OBJECT_MISSING:
            continue
        yield make_finding(
            "framework-import-object-missing",
            Severity.ERROR,
            "framework",
            f"{label(build)} cannot be imported: its {posixpath.basename(item.path)} is missing",
            (
                f"{item.path}: {item.reason}",
                f"`import {build.name}` loads it first; its install ({build.distribution}) is broken or half removed",
                cite("framework-import-objects"),
            ),
            reinstall_fix(build, deps=False),
            subjects(build),
        )


def _missing(env: Environment, build: FrameworkBuild) -> Iterator[Finding]:
    """Each library the framework cannot load; those with one fix (ONNX Runtime without its preload: five
    libraries, one ``preload_dlls()``; CuPy without the CUDA libraries its ``[ctk]`` extra installs) are one
    finding naming them all: one cause, one error."""
    entry = framework(build.name)
    imported = _import_objects(build)
    grouped: dict[tuple[str, str | None, str], list[LoadedLibrary]] = {}
    for load in build.loads:
        if load.path is not None or not load.required:
            continue
        if load.how == "DT_NEEDED" and load.requester in imported:
            yield _import_library_missing(build, load, _wheel_requirement(env, build, load))
            continue
        own = entry.unloadable(env, build, load) if entry is not None and entry.unloadable is not None else None
        requirement = None if own is not None else _wheel_requirement(env, build, load)
        if own is not None:
            fix = own.fix
        elif requirement is None and entry is not None and entry.missing_fix is not None:
            fix = _ONE_FIX  # the framework's one fix for all of them, worded once they are known
        else:
            fix = _requirement_fix(requirement, load) or missing_fix(build, load)
        grouped.setdefault((fix, requirement, own.said if own else ""), []).append(load)
    for (grouped_by, requirement, said), loads in grouped.items():
        one_fix = entry.missing_fix if entry is not None and grouped_by is _ONE_FIX else None
        fix = one_fix(build, loads) if one_fix is not None else grouped_by
        names = listing([load.name for load in loads], 12, separator=", ")
        many = len(loads) > 1
        yield make_finding(
            "framework-library-missing",
            Severity.ERROR,
            "framework",
            f"{label(build)} cannot use the GPU: it cannot load {names}{said}",
            tuple(
                line
                for load in loads
                for line in (
                    f"{load.name + ': ' if many else ''}{load.how} by "
                    f"{load.requester or (entry.preloader if entry else None) or 'its Python preload'}",
                    f"{load.name + ': ' if many else ''}searched: {_searched_text(load)}",
                    f"installed where its search never looks: {', '.join(load.shadowed)}" if load.shadowed else "",
                )
            ),
            fix,
            subjects(build),
            requirement,
        )


def _import_library_missing(build: FrameworkBuild, load: LoadedLibrary, requirement: str | None) -> Finding:
    """A library in the DT_NEEDED of an object the import loads, found nowhere: the import fails with it."""
    requester = posixpath.basename(load.requester or "")
    return make_finding(
        "framework-import-library-missing",
        Severity.ERROR,
        "framework",
        f"{label(build)} cannot be imported: its {requester} needs {load.name}, which the loader cannot find",
        (
            f"DT_NEEDED of {load.requester}, which `import {build.name}` loads",
            f"searched: {_searched_text(load)}",
            f"installed where its search never looks: {', '.join(load.shadowed)}" if load.shadowed else "",
            cite("framework-import-objects"),
        ),
        f"{_requirement_fix(requirement, load) or missing_fix(build, load)}; or {reinstall_fix(build, deps=True)} "
        "(it brings back the wheels it pins)",
        subjects(build),
        requirement,
    )


def _searched_text(load: LoadedLibrary) -> str:
    more = f" and {len(load.searched) - 8} more" if len(load.searched) > 8 else ""
    return (", ".join(load.searched[:8]) + more) or "nothing"


def _requirement_fix(requirement: str | None, load: LoadedLibrary) -> str:
    """The fix that installs ``requirement`` (the one the finding carries), "" without one."""
    if requirement is None:
        return ""
    return f'pip install "{requirement}", or add the folder that holds {load.name} to LD_LIBRARY_PATH'


def _wheel_requirement(env: Environment, build: FrameworkBuild, load: LoadedLibrary) -> str | None:
    """The wheel that ships ``load``'s very name into a folder the framework's own search looks in: installing it
    resolves the finding (checked against every framework's demand on it). None otherwise: the wheel ships another
    name, or puts it where the search never looks."""
    wheel = provider(load.name, cuda_major(build))
    if wheel is None or wheel.package is None or not wheel.exact or not wheel.folder or not build.location:
        return None
    site = folder_of(build.location)
    if f"{site}/{wheel.folder}".rstrip("/") not in (folder.rstrip("/") for folder in load.searched):
        return None
    through = _through_meta_pin(build, wheel.package)
    if through is not None:
        return through
    remedy = pip_fix(env, wheel.package, (wheel.requirement or "").removeprefix(wheel.package))
    return remedy.requirement if remedy.resolves else None


def _through_meta_pin(build: FrameworkBuild, package: str) -> str | None:
    """Where the framework pins the wheel through cuda-toolkit (torch 2.11+: ``cuda-toolkit[cudart,...]==X``) at a
    version the tables do not know, the framework's own pin, one extra of it: ``cuda-toolkit[cudart]==X``. A bare
    ``nvidia-cuda-runtime`` would install the newest (13.5 on 2026-11-29) against the pin (compat audit D3)."""
    from ..compat.torch import CUDA_TOOLKIT_CUDART, CUDA_TOOLKIT_EXTRA

    extra = CUDA_TOOLKIT_EXTRA.get(canonical_name(package))
    for pin in build.pins:
        if extra is None or canonical_name(pin.package) != "cuda-toolkit" or not pin.specifier.startswith("=="):
            continue
        listed = pin.requirement.partition("[")[2].partition("]")[0]
        tabled = pin.specifier.removeprefix("==") in {toolkit for toolkit, _, _ in CUDA_TOOLKIT_CUDART}
        if extra in {part.strip() for part in listed.split(",")} and not tabled:
            return f"cuda-toolkit[{extra}]{pin.specifier}"
    return None


def missing_fix(build: FrameworkBuild, load: LoadedLibrary) -> str:
    """What makes ``build``'s own search find ``load``, a library it found nowhere."""
    entry = framework(build.name)
    if entry is not None and entry.missing_fix is not None:
        return entry.missing_fix(build, [load])
    wheel = provider(load.name, cuda_major(build))
    if load.shadowed:
        return (
            f"add {folder_of(load.shadowed[0])} to LD_LIBRARY_PATH (its search never looks there), or install "
            f"a {phrases.framework(build.name)} release whose search does"
        )
    if wheel and wheel.requirement:
        unsearched = _unsearched_wheel_folder(build, load, wheel.folder) if wheel.exact else None
        if unsearched is not None:
            # The wheel puts it where the framework's own search never looks (TensorFlow 2.21's RUNPATH has no
            # nvidia/cusolver/lib): installing it alone changes nothing, so the fix says both steps.
            return (
                f"pip install {wheel.requirement}, then add {unsearched} to LD_LIBRARY_PATH "
                f"({phrases.framework(build.name)}'s search never looks there)"
            )
        return f"pip install {wheel.requirement}, or add the folder that holds {load.name} to LD_LIBRARY_PATH"
    return f"install {load.name}, or add the folder that holds it to LD_LIBRARY_PATH"


def _unsearched_wheel_folder(build: FrameworkBuild, load: LoadedLibrary, folder: str | None) -> str | None:
    """The folder the wheel installs ``load`` into, beside the framework, where its search does not look (the
    folders it searched are known); None where it looks there, or where that cannot be told."""
    if not folder or not build.location or not load.searched:
        return None
    wheel = posixpath.normpath(f"{folder_of(build.location)}/{folder}")
    return None if wheel in {posixpath.normpath(step) for step in load.searched} else wheel


_ONE_FIX = "the framework's one fix"  # the grouping key of the libraries its entry's missing_fix covers


def cuda_major(build: FrameworkBuild) -> int | None:
    return major_of(build.cuda.value if build.cuda else None)


_Copy = TypeVar("_Copy", CudaRuntime, Cudnn)


def _loaded(env: Environment, build: FrameworkBuild, kind: type[_Copy]) -> tuple[_Copy | None, LoadedLibrary | None]:
    """The copy of ``kind`` that ``build`` loads and uses, and how its search found it."""
    for load in (load for load in build.loads if load.required):
        copy = load_copy(env, load)
        if isinstance(copy, kind):
            return copy, load
    return None, None


def _driver(env: Environment, build: FrameworkBuild) -> Iterator[Finding]:
    driver = env.driver
    runtime, load = _loaded(env, build, CudaRuntime)
    if runtime is not None and load is not None and runtime.version:
        cuda, what = runtime.version, f"it loads CUDA runtime {runtime.version} from {load.path} ({how_found(load)})"
        read = phrases.copy(runtime)
    elif build.cuda is not None:
        cuda, what = build.cuda.value, f"it is built for CUDA {build.cuda.value}"
        read = f"built for CUDA {build.cuda.value} ({build.cuda.how}, {build.cuda.source})"
    else:
        return
    floor = cuda_facts.minimum_driver(cuda, env.host.system)
    if floor is None or user_mode_covers(env, cuda):  # forward compatibility: the forward rules judge it
        return
    need = cuda_facts.driver_tuple(floor[0])
    if driver.state is State.FOUND and driver.version:
        have = cuda_facts.driver_tuple(driver.version)
        if have is None or need is None or have >= need:
            return
        said, evidence = (
            f"the driver is {driver.version}",
            f"driver {driver.version} is below {floor[0]}, {floor[1].rule}",
        )
    elif runtime is not None and runtime.device_count_status == 35 and runtime.driver_version_raw:
        # No NVML answer, but the runtime itself says the driver is insufficient (driver version 0 is no driver
        # at all: no-driver says that).
        said = evidence = f"cudaGetDeviceCount says 35 ({runtime.device_count_error or 'insufficient driver'})"
    else:
        return
    yield make_finding(
        "framework-driver-too-old",
        Severity.ERROR,
        "framework",
        f"{label(build)} cannot run here: {what}, which needs driver {floor[0]} or newer; {said}",
        (f"{label(build)} at {build.location}: {read}", evidence, cite(floor[1].source)),
        f"install a driver >= {floor[0]}, or {_older(env, build)}",
        subjects(build, runtime.path if runtime is not None and load is not None else None),
    )


def _older(env: Environment, build: FrameworkBuild) -> str:
    """The build for an older CUDA that runs here: the release bound where the tables know it."""
    from .releases import install  # here: only a framework the driver is too old for pays for the release tables

    return install(env, build.name) or f"a {phrases.framework(build.name)} build for an older CUDA"


def _cudnn(env: Environment, build: FrameworkBuild) -> Iterator[Finding]:
    cudnn, load = _loaded(env, build, Cudnn)
    if cudnn is None or load is None or not cudnn.version:
        return
    refusal = cudnn_refusal(env, build, cudnn)
    skipped = _skipped_refusal(env, build, cudnn) if refusal is None else None
    if skipped is not None:
        setting, problem, source = skipped
        yield make_finding(
            "framework-check-skipped",
            Severity.WARNING,
            "framework",
            f"{label(build)} runs with cuDNN {cudnn.version} from {load.path} only because {setting} switches "
            f"its own check off (the check says: {problem})",
            (phrases.copy(cudnn), f"{setting} is set", cite(source)),
            f"unset {setting.partition('=')[0]} and give {phrases.framework(build.name)} the libraries its check "
            "accepts: what the check guards against can still fail or give incorrect results",
            subjects(build),
        )
    if refusal is None:
        return
    problem, source = refusal
    fix, requirement = _cudnn_fix(env, build, cudnn, load)
    yield make_finding(
        "framework-cudnn-mismatch",
        Severity.ERROR,
        "framework",
        f"{label(build)} cannot use cuDNN {cudnn.version} from {load.path} ({how_found(load)}): {problem}",
        (
            phrases.copy(cudnn),
            f"built with cuDNN {build.cudnn.value} ({build.cudnn.how}, {build.cudnn.source})" if build.cudnn else "",
            cite(source),
        ),
        fix,
        subjects(build),
        requirement,
    )


def _cudnn_fix(env: Environment, build: FrameworkBuild, cudnn: Cudnn, load: LoadedLibrary) -> tuple[str, str | None]:
    """The cuDNN wheel the framework gets, reinstalled at the release its pin names (checked against every
    framework's demands on it), with that requirement; else the copy that wins removed from the search."""
    away = f"remove the copy that wins from {folder_of(load.path or '')}"
    wheel = owning_distribution(env, cudnn)
    pin = next(
        (p for p in build.pins if wheel is not None and canonical_name(p.package) == canonical_name(wheel.name)), None
    )
    if wheel is None or pin is None or not pin.specifier:
        return f"install the cuDNN {phrases.framework(build.name)} was built for (see its pins), or {away}", None
    if cudnn.version and wheel.version.startswith(cudnn.version) and _meets(wheel.version, pin.specifier):
        # It loads the very release it pins and still refuses it (PyTorch 2.11's cuDNN 9.19 below compute
        # capability 7.5): pip would find the requirement met and change nothing.
        return (
            f"{label(build)} loads the cuDNN it pins ({pin.requirement}) and refuses it here, so reinstalling it "
            f"changes nothing: use a {phrases.framework(build.name)} release that pins a cuDNN it accepts on these "
            "GPUs",
            None,
        )
    remedy = pip_fix(env, canonical_name(wheel.name), pin.specifier, cudnn=True)
    if remedy.resolves:
        return f'pip install "{remedy.requirement}" (what {label(build)} pins)', remedy.requirement
    return (
        f"{label(build)} pins {remedy.requirement}, and no release of it meets what the other frameworks here need: "
        f"{blocking_text(remedy)}; give {phrases.framework(build.name)} a virtual environment of its own",
        None,
    )


def _meets(version: str, specifier: str) -> bool:
    """Whether the installed ``version`` meets ``specifier`` (a text no one can read meets nothing)."""
    try:
        return specifier_set(specifier).contains(version, prereleases=True)
    except ValueError:  # InvalidSpecifier, InvalidVersion
        return False


def cudnn_refusal(env: Environment, build: FrameworkBuild, cudnn: Cudnn) -> tuple[str, str] | None:
    """Why ``build`` refuses the cuDNN copy ``cudnn`` by its own rule, and the rule's source key; None when it
    accepts it, or when no rule or no version says."""
    if not cudnn.version:
        return None
    capabilities = [cc for gpu in gpus_with_capability(env) if (cc := parse_version(gpu.compute_capability))]
    lowest = min(capabilities, default=None)
    if own_rules(build.name):
        # TensorFlow's compiled cuDNN as precise as known (build info gives the major; the tested table the minor).
        tf_needs = tensorflow_needs(env)
        compiled = tf_needs.cudnn_compiled if tf_needs else None
        if compiled is None or parse_version(compiled) is None or parse_version(cudnn.version) is None:
            return None
        if tf_facts.accepts_cudnn(compiled, cudnn.version):
            return None
        return f"TensorFlow needs cuDNN {compiled} or a newer minor of that major", "tf-cudnn-rule"
    entry = framework(build.name)
    if entry is None or entry.cudnn_problem is None:
        return None
    refused = entry.cudnn_problem(build, cudnn, lowest, len(env.driver.gpus), check_skipped(env, build) is not None)
    return (refused.problem, refused.source) if refused is not None else None


def check_skipped(env: Environment, build: FrameworkBuild) -> str | None:
    """The setting that switches ``build``'s own version check off here ("JAX_SKIP_CUDA_CONSTRAINTS_CHECK=1"), as
    recorded; None where its entry names no such variable or the value leaves the check on."""
    entry = framework(build.name)
    skip = entry.skip_check if entry is not None else None
    value = env.variables.get(skip.variable) if skip is not None else None
    return f"{skip.variable}={value}" if skip is not None and value is not None and skip.skips(value) else None


def _skipped_refusal(env: Environment, build: FrameworkBuild, cudnn: Cudnn) -> tuple[str, str, str] | None:
    """What the framework's own check would refuse in ``cudnn`` if the variable did not switch it off: (the
    setting, the problem, its source); None where nothing is switched off or the check would pass anyway."""
    setting = check_skipped(env, build)
    entry = framework(build.name)
    if setting is None or entry is None or entry.cudnn_problem is None or not cudnn.version:
        return None
    capabilities = [cc for gpu in gpus_with_capability(env) if (cc := parse_version(gpu.compute_capability))]
    checked = entry.cudnn_problem(build, cudnn, min(capabilities, default=None), len(env.driver.gpus), False)
    return (setting, checked.problem, checked.source) if checked is not None else None


def gpu_code(build: FrameworkBuild) -> tuple[list[str], str]:
    """The GPU code a framework's build says is its own, and where that was read: the arch list its build records
    (PyTorch's, as torch.cuda.get_arch_list() gives it: "torch-arch-list"), else every target in its objects'
    fatbins (which for PyTorch also hold the sm_90a-style code a few kernels are built for)."""
    if build.arch_list is not None:
        return build.arch_list.value.split(), f"{build.arch_list.source} ({build.arch_list.how})"
    return [t for item in build.objects for t in (*item.sass, *item.ptx)], "; ".join(o.path for o in build.objects)


def _kernels(env: Environment, build: FrameworkBuild) -> Iterator[Finding]:
    targets, where = gpu_code(build)
    if not targets:
        return  # nothing read: nothing to say
    listed = ", ".join(targets)
    for gpu in gpus_with_capability(env):
        found = runs_on(targets, gpu.compute_capability or "")
        if found is None:
            fix, requirement, source = _kernels_fix(env, build, gpu.compute_capability or "")
            yield make_finding(
                "framework-no-kernels-for-gpu",
                Severity.ERROR,
                "framework",
                f"{label(build)} has no kernels for {gpu_text(gpu)}: no SASS for it and no PTX",
                (f"{where}: GPU code {listed}", source),
                fix,
                subjects(build),
                requirement,
                gpus=(gpu.index,),
            )
        elif found == "ptx" and (jit := _jit_refused(env, build)) is not None:
            yield make_finding(
                "framework-ptx-newer-than-driver",
                Severity.ERROR,
                "framework",
                f"{label(build)} has only PTX for {gpu_text(gpu)}, made by CUDA {jit[0]}, and the driver's JIT "
                f"compiles PTX only up to CUDA {jit[1]}",
                (
                    f"{where}: GPU code {listed}",
                    f"{label(build)} was built with CUDA {jit[0]}; the driver supports CUDA up to {jit[1]} ({jit[2]})",
                    "minor-version compatibility lets the CUDA runtime load, but PTX from a newer toolkit fails "
                    "with cudaErrorUnsupportedPtxVersion (222)",
                    cite("cuda-ptx-jit"),
                ),
                f"install a driver that supports CUDA {jit[0]} (nvidia-smi's 'CUDA Version' at least {jit[0]}), "
                f"or a {phrases.framework(build.name)} build with SASS for compute capability {gpu.compute_capability}",
                subjects(build),
                gpus=(gpu.index,),
            )
        elif found == "ptx":
            yield make_finding(
                "framework-ptx-only",
                Severity.INFO,
                "framework",
                f"{label(build)} runs on {gpu_text(gpu)} only through PTX JIT (slow first start)",
                (f"{where}: GPU code {listed}",),
                "expect minutes of JIT compilation on first use; set CUDA_CACHE_MAXSIZE so the cache keeps it",
                subjects(build),
                gpus=(gpu.index,),
            )


def _jit_refused(env: Environment, build: FrameworkBuild) -> tuple[str, str, str] | None:
    """(the CUDA ``build`` was made with, the newest the driver supports, where that was read) where the driver is
    older than that toolkit: its PTX JIT cannot compile the PTX (NVIDIA's minor-version compatibility guide,
    "Applications using PTX will see runtime issues": "cuda-ptx-jit")."""
    built = parse_version(build.cuda.value if build.cuda else None)
    libcuda = env.cuda_driver
    driver, where = (
        (libcuda.version, "cuDriverGetVersion")
        if libcuda.state is State.FOUND and libcuda.version
        else (env.driver.cuda_version, "NVML")
    )
    supported = parse_version(driver)
    if built is None or supported is None or built.release[:2] <= supported.release[:2]:
        return None
    return ".".join(map(str, built.release[:2])), ".".join(map(str, supported.release[:2])), where


def _kernels_fix(env: Environment, build: FrameworkBuild, capability: str) -> tuple[str, str | None, str]:
    """The requirement that installs the newest published build whose GPU code runs on a GPU of ``capability``
    (PyTorch 2.11 on a V100: ``torch<2.11``), where the framework's entry tables it (``kept_for_gpu``) and the
    release installed is past it, checked against every framework's pins on it; else words and no requirement. The
    fix, the requirement, and the table's source cited."""
    words = f"use a {phrases.framework(build.name)} build whose architectures include this GPU's"
    entry = framework(build.name)
    kept = entry.kept_for_gpu(capability, runs_on) if entry is not None and entry.kept_for_gpu is not None else None
    installed = parse_version(build.version)
    if kept is None or installed is None or specifier_set(kept.specifier).contains(installed, prereleases=True):
        return words, None, ""
    remedy = pip_fix(env, kept.package, kept.specifier)
    if remedy.resolves:
        return f'pip install "{remedy.requirement}" ({kept.why})', remedy.requirement, cite(kept.source)
    return (
        f"{words} ({kept.why}); no {kept.package} release {kept.specifier} meets what the frameworks here need: "
        f"{blocking_text(remedy)}",
        None,
        cite(kept.source),
    )


def _below_floor(env: Environment, build: FrameworkBuild) -> Iterator[Finding]:
    """A GPU older than the oldest its build supports by its own documentation (JAX for CUDA 13 on a P100)."""
    entry = framework(build.name)
    floor = entry.gpu_floor(build) if entry is not None and entry.gpu_floor is not None else None
    lowest = parse_version(floor.capability) if floor is not None else None
    if floor is None or lowest is None:
        return
    for gpu in gpus_with_capability(env):
        capability = parse_version(gpu.compute_capability)
        if capability is None or capability >= lowest:
            continue
        yield make_finding(
            "framework-gpu-below-floor",
            Severity.ERROR,
            "framework",
            f"{label(build)} for CUDA {floor.cuda} does not support {gpu_text(gpu)}: it supports compute "
            f"capability {floor.capability} and newer",
            (cite(floor.source),),
            floor.fix
            if floor.fix and capability >= (parse_version(floor.fix_from) or capability)
            else f"no {phrases.framework(build.name)} build supports this GPU: run it on a newer one",
            subjects(build),
            gpus=(gpu.index,),
        )


def _conflicts(env: Environment) -> Iterator[Finding]:
    """Two frameworks that load one name from different files: in one process the first imported serves both."""
    builds = [b for b in gpu_frameworks(env) if b.loads]
    for i, first in enumerate(builds):
        for second in builds[i + 1 :]:
            # The copies each uses (a copy mapped but never asked for by name serves nobody).
            theirs = {load.name: load for load in second.loads if load.path and load.required}
            for load in (load for load in first.loads if load.required):
                other = theirs.get(load.name)
                if load.path is None or other is None or other.path == load.path:
                    continue
                yield make_finding(
                    "framework-copies-differ",
                    Severity.WARNING,
                    "framework",
                    f"{label(first)} and {label(second)} load different copies of {load.name}: in one process, "
                    "the one imported first hands its copy to the other",
                    (
                        f"{label(first)}: {_copy_text(env, load)}",
                        f"{label(second)}: {_copy_text(env, other)}",
                        "the first copy of a name loaded into a process serves every later request for it; e.g. "
                        "jax-ml/jax#18032: 'Found cuDNN version 8700, but JAX was built against version 8800' "
                        "after torch was imported first",
                    ),
                    "install one set of nvidia wheels both accept, or do not import both in one test process",
                    (*subjects(first), *subjects(second)),
                )


def _copy_text(env: Environment, load: LoadedLibrary) -> str:
    copy = load_copy(env, load)
    version = f" (version {copy.version})" if copy is not None and copy.version else ""
    return f"{load.path}{version}, {how_found(load)}"


# What the verdict means for one framework ---------------------------------------------------------------------

# Components whose errors stop every framework: no driver, no GPU, no visible device.
_HOST_WIDE = ("driver", "gpu", "environment")


def concerns(build: FrameworkBuild, finding: Finding, copies: Collection[str] = (), read: bool = True) -> bool:
    """Whether ``finding`` is about ``build``: its folder or a copy it loads (its loads, or ``copies``: those the
    judgement found for it another way), TensorFlow's own rules for TensorFlow, or the host every framework runs on.
    ``read``: whether its own search was read; where it was not, the stack's findings about the copies it would get
    stand for it, and so does a missing CUDA runtime."""
    if finding.frameworks:
        return build.name in finding.frameworks
    if finding.component == "library":
        return False  # a library of the catalog stops only the frameworks its findings name (diagnosis/libraries.py)
    if own_rules(finding.component):  # the rules of a framework judged by its own: about it alone
        return finding.component == build.name
    if finding.component == "loader" and read and not _own_rules(build):
        # Which copy wins a plain dlopen or TensorFlow's search: this framework's own search is in its loads.
        return False
    if set(finding.subjects) & (uses(build) | set(copies)):
        return True
    if not read and not finding.subjects and finding.component == "cuda-runtime":
        return True  # no CUDA runtime anywhere, and nothing read says this framework brings its own
    return finding.component in _HOST_WIDE and not finding.subjects


def blocking_finding(
    build: FrameworkBuild, findings: Sequence[Finding], copies: Collection[str] = (), read: bool = True
) -> Finding | None:
    """The first error that stops ``build`` from running GPU work here (``copies``, ``read``: see :func:`concerns`):
    one about it or its copies first; where its own search was not read, "no CUDA runtime anywhere" only after."""
    errors = [f for f in findings if f.severity is Severity.ERROR]
    return next((f for f in errors if concerns(build, f, copies)), None) or next(
        (f for f in errors if concerns(build, f, copies, read)), None
    )
