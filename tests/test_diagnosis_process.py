"""Frameworks that share one process (pytest_cudnn/diagnosis/process.py): table tests on built environments."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_cudnn.compat.sources import SOURCES
from pytest_cudnn.diagnosis import CODES, diagnose
from pytest_cudnn.diagnosis.process import imports, order_facts, process_findings
from pytest_cudnn.environment import BuildFact, Environment, FrameworkBuild, LoadedLibrary, State, Via, load_snapshot

from .envbuilder import SITE, EnvBuilder, rpath_load

TORCH_CUDNN = f"{SITE}/nvidia/cudnn/lib/libcudnn.so.9"
JAX_CUDNN = f"{SITE}/user/nvidia/cudnn/lib/libcudnn.so.9"
JAX_PLUGIN = f"{SITE}/jax_plugins/xla_cuda12/xla_cuda_plugin.so"
TF_FRAMEWORK = f"{SITE}/tensorflow/libtensorflow_framework.so.2"
TF_CUDART = f"{SITE}/nvidia/cuda_runtime/lib/libcudart.so.12"
CUSOLVER = f"{SITE}/nvidia/cusolver/lib/libcusolver.so.11"
TORCH_PRELOAD = "torch's preload of libcusolver.so.*[0-9] (first sys.path entry with nvidia/cusolver/lib or cu*/lib)"


def tensorflow(loads: tuple[LoadedLibrary, ...], version: str = "2.21.0") -> FrameworkBuild:
    location = f"{SITE}/tensorflow"
    info = f"{location}/python/platform/build_info.py"
    return FrameworkBuild(
        "tensorflow",
        State.FOUND,
        None,
        "tensorflow",
        version,
        location,
        True,
        BuildFact("12.5.1", info, "cuda_version"),
        BuildFact("9", info, "cudnn_version"),
        (),
        (),
        loads,
    )


def tf_needs_cusolver(*, torch_preloads: bool = True) -> Environment:
    """TensorFlow 2.21 finds its runtime but not libcusolver.so.11 (outside its RUNPATH); torch 2.14 preloads the
    first nvidia/cusolver/lib on sys.path, which is TensorFlow's wheel (unused by torch itself)."""
    b = EnvBuilder().with_driver(version="580.65.06", cuda_version_raw=13000)
    b.runtime(TF_CUDART, 12050, (Via.PIP_WHEEL,), rank=None, driver_raw=13000)
    cusolver = LoadedLibrary(
        "libcusolver.so.11", TF_FRAMEWORK, "dlopen", True, None, None, (f"{SITE}/nvidia/cudnn/lib",), (CUSOLVER,)
    )
    b.frameworks.append(tensorflow((rpath_load(TF_CUDART, TF_FRAMEWORK, "dlopen"), cusolver)))
    torch_loads = [rpath_load(f"{SITE}/nvidia/cu13/lib/libcudart.so.13")]
    if torch_preloads:
        torch_loads.append(LoadedLibrary("libcusolver.so.11", None, "preload", False, CUSOLVER, TORCH_PRELOAD))
    return b.with_torch(version="2.14.1+cu130", cuda="13.0", loads=tuple(torch_loads)).build()


def torch_and_jax(torch_built: str = "9.26.0", torch_has: str = "9.26.0", jax_has: str = "9.8.0") -> Environment:
    """torch (its cuDNN through its DT_RPATH) and JAX (its own cuDNN preloaded by absolute path from a user site)."""
    b = EnvBuilder().with_driver(version="580.65.06", cuda_version_raw=13000)
    b.cudnn(TORCH_CUDNN, torch_has, 13000, (Via.PIP_WHEEL,), rank=None)
    b.cudnn(JAX_CUDNN, jax_has, 12080, (Via.PIP_WHEEL,), rank=None)
    for index, version in enumerate((torch_has, jax_has)):
        major, minor, patch = (int(part) for part in version.split("."))
        b.change(index, version_raw=major * 10000 + minor * 100 + patch)
    b.with_torch(cudnn=torch_built, loads=(rpath_load(TORCH_CUDNN),))
    jax_load = LoadedLibrary("libcudnn.so.9", None, "preload", True, JAX_CUDNN, "JAX's preload of nvidia.cudnn")
    return b.with_jax(cudnn="9.8.0", loads=(jax_load,)).build()


def torch_and_jax_same_copy() -> Environment:
    b = EnvBuilder().with_driver(version="580.65.06", cuda_version_raw=13000)
    b.cudnn(TORCH_CUDNN, "9.26.0", 13000, (Via.PIP_WHEEL,), rank=None)
    b.with_torch(cudnn="9.26.0", loads=(rpath_load(TORCH_CUDNN),))
    return b.with_jax(cudnn="9.8.0", loads=(rpath_load(TORCH_CUDNN, JAX_PLUGIN, "dlopen"),)).build()


def codes(env: Environment) -> list[str]:
    return [f.code for f in process_findings(env)]


def test_the_new_codes_are_registered_and_their_source_is_listed() -> None:
    assert {"framework-needs-import-order", "framework-import-order-conflict"} <= set(CODES)
    assert "_dl_map_object" in SOURCES["glibc-already-loaded"]


# Which copy each name resolves to, in a given order ---------------------------------------------------------------


def test_tensorflow_alone_misses_cusolver_and_after_torch_gets_torchs_preloaded_copy() -> None:
    env = tf_needs_cusolver()
    (alone,) = imports(env, ["tensorflow"])
    assert alone.missing == ("libcusolver.so.11",)
    assert not alone.loads_all
    torch, tf = imports(env, ["torch", "tensorflow"])
    assert torch.loads_all
    assert torch.before == ()
    assert tf.before == ("torch",)
    assert tf.loads_all
    cusolver = next(library for library in tf.libraries if library.name == "libcusolver.so.11")
    assert (cusolver.alone, cusolver.path, cusolver.given_by) == (None, CUSOLVER, "torch")
    runtime = next(library for library in tf.libraries if library.name == "libcudart.so.12")
    assert runtime.given_by is None
    assert runtime.path == TF_CUDART
    # The other order: TensorFlow first still misses it (torch maps it only afterwards).
    assert [turn.loads_all for turn in imports(env, ["tensorflow", "torch"])] == [False, True]


def test_an_order_naming_frameworks_not_installed_passes_them_over() -> None:
    env = tf_needs_cusolver()
    assert [turn.framework for turn in imports(env, ["cupy", "torch", "torch", "tensorflow"])] == [
        "torch",
        "tensorflow",
    ]


def test_a_later_framework_gets_the_earlier_frameworks_cudnn_and_its_rule_judges_that_copy() -> None:
    env = torch_and_jax()
    jax, torch = imports(env, ["jax", "torch"])
    assert jax.loads_all
    assert not torch.loads_all
    (refusal,) = torch.refusals
    assert (refusal.name, refusal.path, refusal.version, refusal.given_by) == (
        "libcudnn.so.9",
        JAX_CUDNN,
        "9.8.0",
        "jax",
    )
    assert refusal.problem.startswith("PyTorch 2.15.0+cu132 refuses it: compiled with cuDNN 9.26.0")
    assert refusal.source == "torch-cudnn-rule"
    # torch first: JAX gets torch's 9.26.0, which XLA accepts (same major, a minor not older than 9.8).
    torch_first = imports(env, ["torch", "jax"])
    assert [turn.loads_all for turn in torch_first] == [True, True]
    assert torch_first[1].libraries[0].given_by == "torch"


def test_jax_built_with_cudnn_9_8_refuses_torchs_9_1_when_torch_is_imported_first() -> None:
    """compat-audit D1: XLA inside JAX refuses a loaded cuDNN whose minor is older than its build's (jax-ml/jax#16901),
    so JAX (built with 9.8) imported after torch 2.4-2.6 (its wheel 9.1.0.70) cannot use torch's copy."""
    env = torch_and_jax(torch_built="9.1.0", torch_has="9.1.0", jax_has="9.8.0")
    torch, jax = imports(env, ["torch", "jax"])
    assert torch.loads_all
    (refusal,) = jax.refusals
    assert (refusal.path, refusal.version, refusal.given_by, refusal.source) == (
        TORCH_CUDNN,
        "9.1.0",
        "torch",
        "jax-xla-cudnn-rule",
    )
    assert "built with cuDNN 9.8.0" in refusal.problem
    assert facts(env)["jax"] == ((), ("torch",))
    (conflict,) = process_findings(env)
    assert conflict.summary.startswith("JAX 0.10.2 imported after PyTorch 2.15.0+cu132 gets its copy of libcudnn.so.9")
    assert any(SOURCES["jax-xla-cudnn-rule"] in line for line in conflict.evidence), conflict.evidence


def test_jax_alone_loading_an_older_cudnn_minor_is_a_mismatch() -> None:
    """JAX (built with 9.8) whose own preload finds cuDNN 9.5.1 (torch 2.7's pin over the same nvidia/cudnn/lib)."""
    b = EnvBuilder().with_driver(version="580.65.06", cuda_version_raw=13000)
    b.cudnn(TORCH_CUDNN, "9.5.1", 12080, (Via.PIP_WHEEL,), rank=None)
    b.change(0, version_raw=90501)
    jax_load = LoadedLibrary("libcudnn.so.9", None, "preload", True, TORCH_CUDNN, "JAX's preload of nvidia.cudnn")
    env = b.with_jax(cudnn="9.8.0", loads=(jax_load,)).build()
    (found,) = [f for f in diagnose(env) if f.code == "framework-cudnn-mismatch"]
    assert found.summary.startswith(f"JAX 0.10.2 cannot use cuDNN 9.5.1 from {TORCH_CUDNN}")
    assert any(SOURCES["jax-xla-cudnn-rule"] in line for line in found.evidence)


# Per framework: which order works, which breaks --------------------------------------------------------------------

Facts = dict[str, tuple[tuple[str, ...], tuple[str, ...]]]


def facts(env: Environment) -> Facts:
    return {fact.framework: (fact.works_after, fact.breaks_after) for fact in order_facts(env)}


FACTS: list[tuple[str, Callable[[], Environment], Facts]] = [
    ("tf-needs-torch", tf_needs_cusolver, {"tensorflow": (("torch",), ()), "torch": ((), ())}),
    (
        "tf-alone-torch-maps-nothing",
        lambda: tf_needs_cusolver(torch_preloads=False),
        {"tensorflow": ((), ()), "torch": ((), ())},
    ),
    ("torch-breaks-after-jax", torch_and_jax, {"torch": ((), ("jax",)), "jax": ((), ())}),
    ("same-copy", torch_and_jax_same_copy, {"torch": ((), ()), "jax": ((), ())}),
    (
        "older-copy-accepted",
        lambda: torch_and_jax(torch_built="9.8.0", torch_has="9.8.0", jax_has="9.8.0"),
        {"torch": ((), ()), "jax": ((), ())},
    ),
]


@pytest.mark.parametrize(("make", "expected"), [case[1:] for case in FACTS], ids=[case[0] for case in FACTS])
def test_order_facts(make: Callable[[], Environment], expected: Facts) -> None:
    assert facts(make()) == expected


# Findings ------------------------------------------------------------------------------------------------------------


def test_the_doctor_says_tensorflow_works_only_after_torch_and_the_real_fix() -> None:
    env = tf_needs_cusolver()
    (found,) = process_findings(env)
    assert found.code == "framework-needs-import-order"
    assert found.severity.value == "warning"
    assert found.summary == (
        "TensorFlow 2.21.0 gets every library it needs only when PyTorch 2.14.1+cu130 is imported before it in the "
        "same process: alone it cannot load libcusolver.so.11"
    )
    evidence = "\n".join(found.evidence)
    assert f"after PyTorch 2.14.1+cu130 it gets {CUSOLVER}, which PyTorch mapped first ({TORCH_PRELOAD})" in evidence
    assert "order that works: import torch, then import tensorflow" in evidence
    assert SOURCES["glibc-already-loaded"] in evidence
    assert found.fix.startswith(f"add {CUSOLVER.rsplit('/', 1)[0]} to LD_LIBRARY_PATH")
    assert "Until then, as a workaround: import torch before import tensorflow in every test process" in found.fix
    assert found.subjects == (f"{SITE}/tensorflow",)
    # Wired into the diagnosis, beside the error that TensorFlow alone cannot load it.
    all_codes = [f.code for f in diagnose(env)]
    assert "framework-needs-import-order" in all_codes
    assert "framework-library-missing" in all_codes


def test_the_doctor_says_torch_breaks_after_jax_and_which_order_works() -> None:
    env = torch_and_jax()
    found = list(process_findings(env))
    assert [f.code for f in found] == ["framework-import-order-conflict"]
    (conflict,) = found
    assert conflict.summary == (
        "PyTorch 2.15.0+cu132 imported after JAX 0.10.2 gets its copy of libcudnn.so.9 (version 9.8.0): "
        "PyTorch 2.15.0+cu132 refuses it: compiled with cuDNN 9.26.0"
    )
    assert f"alone: {TORCH_CUDNN} (version 9.26.0)" in conflict.evidence
    assert f"after JAX 0.10.2: {JAX_CUDNN} (version 9.8.0), mapped first by JAX (JAX's preload of nvidia.cudnn)" in (
        conflict.evidence
    )
    assert "order that works: import torch, then import jax (both get copies they accept)" in conflict.evidence
    assert conflict.fix.startswith("import torch before import jax in every test process")
    assert "framework-import-order-conflict" in [f.code for f in diagnose(env)]


def test_when_neither_order_works_for_both_the_doctor_says_so() -> None:
    # torch built with 9.10 refuses JAX's 9.8.0; JAX refuses torch's 9.10.0 (a combination its check refuses).
    env = torch_and_jax(torch_built="9.10.0", torch_has="9.10.0", jax_has="9.8.0")
    found = process_findings(env)
    assert {f.code for f in found} == {"framework-import-order-conflict"}
    by_summary = {f.summary.split(" imported after ")[0]: f for f in found}
    assert set(by_summary) == {"PyTorch 2.15.0+cu132", "JAX 0.10.2"}
    torch = by_summary["PyTorch 2.15.0+cu132"]
    assert any(
        line.startswith("no order works for both: import torch first, JAX 0.10.2 then fails") for line in torch.evidence
    )
    assert torch.fix.startswith("install one copy of libcudnn.so.9 both accept")


@pytest.mark.parametrize(
    "make",
    [torch_and_jax_same_copy, lambda: tf_needs_cusolver(torch_preloads=False), lambda: EnvBuilder.healthy().build()],
    ids=["same-copy", "nobody-maps-it", "no-framework"],
)
def test_nothing_order_dependent_nothing_said(make: Callable[[], Environment]) -> None:
    assert codes(make()) == []


# The lent H100 (tests/data/real-gpu): torch and JAX worked in both orders ---------------------------------------------


def test_on_the_h100_snapshot_torch_and_jax_work_in_both_orders_as_measured() -> None:
    """h100-facts.json: torch then JAX and JAX then torch both ran ("ok": true); each maps the wheels' copies. The
    model gives every framework the same copies in both orders (one set of wheels), and the doctor says nothing."""
    root = Path(__file__).parent / "data" / "real-gpu"
    env = load_snapshot(root / "h100-snapshot.json")
    measured = json.loads((root / "h100-facts.json").read_text())
    ran = {tuple(o["order"]): [step["ok"] for step in o["steps"]] for o in measured["orders"]}
    assert ran[("torch", "jax")] == ran[("jax", "torch")] == [True, True]
    for order in (["torch", "jax"], ["jax", "torch"]):
        turns = imports(env, order)
        assert [turn.framework for turn in turns] == order
        assert all(len(turn.libraries) >= 2 for turn in turns)  # the CUDA runtime and cuDNN at least
        assert all(turn.loads_all for turn in turns)
        assert all(library.path == library.alone for turn in turns for library in turn.libraries)
    assert codes(env) == []


def test_in_every_order_of_three_frameworks_a_name_is_served_by_the_first_framework_that_mapped_it() -> None:
    """The mixed example (torch, JAX and TensorFlow, one cuDNN on LD_LIBRARY_PATH): for each of the 6 orders, a
    library a framework gets from an earlier one is that earlier one's first copy of the name, and one it gets
    itself is its own search's."""
    env = load_snapshot(Path(__file__).parent.parent / "examples" / "snapshots" / "mixed-torch-jax-tf.json")
    builds = {b.name: b for b in env.frameworks if b.loads}
    assert set(builds) == {"torch", "jax", "tensorflow"}
    for order in itertools.permutations(builds):
        turns = imports(env, order)
        assert [turn.framework for turn in turns] == list(order)
        for turn in turns:
            assert turn.before == order[: order.index(turn.framework)]
            for library in turn.libraries:
                if library.given_by is None:
                    assert library.path == library.alone
                    continue
                assert library.given_by in turn.before
                mapper = builds[library.given_by]
                first = next(load for load in mapper.loads if load.name == library.name and load.path)
                assert library.path == first.path
                earlier = turn.before[: turn.before.index(library.given_by)]
                assert not any(load.name == library.name and load.path for b in earlier for load in builds[b].loads)
