"""Cause first (issue 23): a finding that follows from another says so (``because``), comes right after it, and the
verdict names the cause; the links come from the rule that knows them or from diagnosis.model.FOLLOWS."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_cudnn.diagnosis import judge_environment
from pytest_cudnn.diagnosis.model import CODES, FOLLOWS, Finding, Severity, make_finding, verdict
from pytest_cudnn.diagnosis.rules import cause_first
from pytest_cudnn.environment import Via, load_snapshot

from .envbuilder import EnvBuilder, gpu, rpath_load

SNAPSHOTS = Path(__file__).resolve().parent.parent / "examples" / "snapshots"
E, W = Severity.ERROR, Severity.WARNING


def _f(code: str, severity: Severity = E, subjects: tuple[str, ...] = (), because: str | None = None) -> Finding:
    return make_finding(code, severity, "framework", f"{code} {subjects}", (), "fix", subjects, because=because)


def test_the_table_names_known_codes_and_makes_no_loop() -> None:
    for effect, causes in FOLLOWS.items():
        assert effect in CODES
        for cause, how in causes:
            assert cause in CODES
            assert how in {"host", "error", "subject"}
    # No code is, through the table, a cause of itself.
    for start in FOLLOWS:
        frontier, seen = [start], set()
        while frontier:
            for cause, _ in FOLLOWS.get(frontier.pop(), ()):
                assert cause != start, f"{start} follows from itself"
                if cause not in seen:
                    seen.add(cause)
                    frontier.append(cause)


def _said(findings: list[Finding]) -> list[tuple[str, tuple[str, ...], str | None]]:
    return [(f.code, f.subjects, f.because) for f in findings]


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        # A link that holds when its cause is an error: the effect moves right after its cause, listed first.
        (
            [_f("no-cuda-runtime"), _f("cudnn-incomplete"), _f("framework-cpu-only", E)],
            [("framework-cpu-only", (), None), ("no-cuda-runtime", (), "framework-cpu-only"),
             ("cudnn-incomplete", (), None)],
        ),
        # As a warning a CPU-only build sits beside a GPU framework: it is not why that one finds no runtime.
        (
            [_f("no-cuda-runtime"), _f("cudnn-incomplete"), _f("framework-cpu-only", W)],
            [("no-cuda-runtime", (), None), ("cudnn-incomplete", (), None), ("framework-cpu-only", (), None)],
        ),
        # A subject link joins the effect to the cause about the same framework, not to another of the same code.
        (
            [_f("framework-copies-differ", W, ("/torch", "/tf")),
             _f("framework-copies-differ", W, ("/jax", "/tf")),
             _f("framework-import-order-conflict", W, ("/jax",)),
             _f("framework-import-order-conflict", W, ("/torch",))],
            [("framework-copies-differ", ("/torch", "/tf"), None),
             ("framework-import-order-conflict", ("/torch",), "framework-copies-differ"),
             ("framework-copies-differ", ("/jax", "/tf"), None),
             ("framework-import-order-conflict", ("/jax",), "framework-copies-differ")],
        ),
        # No shared subject: no link.
        (
            [_f("tensorflow-library-shadowed", W, ("/opt/a/libcudnn.so.9",)),
             _f("tensorflow-cudnn-too-old", E, ("/wheel/libcudnn.so.9",))],
            [("tensorflow-cudnn-too-old", ("/wheel/libcudnn.so.9",), None),
             ("tensorflow-library-shadowed", ("/opt/a/libcudnn.so.9",), None)],
        ),
        # A warning that an error follows from ranks with the error: both before the other errors' warnings.
        (
            [_f("framework-library-missing", E, ("/tf",)), _f("gpu-memory-low", W),
             _f("tensorflow-library-shadowed", W, ("/opt/a/libcudnn.so.9",)),
             _f("tensorflow-cudnn-too-old", E, ("/opt/a/libcudnn.so.9",))],
            [("framework-library-missing", ("/tf",), None),
             ("tensorflow-library-shadowed", ("/opt/a/libcudnn.so.9",), None),
             ("tensorflow-cudnn-too-old", ("/opt/a/libcudnn.so.9",), "tensorflow-library-shadowed"),
             ("gpu-memory-low", (), None)],
        ),
        # A rule's own link stands; one naming a finding not raised here is dropped.
        (
            [_f("cudnn-create-failed", because="mig-no-devices"), _f("mig-no-devices")],
            [("mig-no-devices", (), None), ("cudnn-create-failed", (), "mig-no-devices")],
        ),
        (
            [_f("cudnn-create-failed", because="no-gpu")],
            [("cudnn-create-failed", (), None)],
        ),
        # A loop of rule links (no rule makes one) is cut, and nothing is lost.
        (
            [_f("no-gpu", because="mig-no-devices"), _f("mig-no-devices", because="no-gpu")],
            [("no-gpu", (), None), ("mig-no-devices", (), "no-gpu")],
        ),
    ],
)  # fmt: skip
def test_cause_first_links_and_orders(
    given: list[Finding], expected: list[tuple[str, tuple[str, ...], str | None]]
) -> None:
    assert _said(cause_first(given)) == expected


def test_the_verdict_names_the_root_cause() -> None:
    findings = cause_first(
        [_f("tensorflow-cudnn-too-old", E, ("/opt/a",)), _f("tensorflow-library-shadowed", W, ("/opt/a",))]
    )
    assert verdict(findings).summary == (
        "cannot run GPU work: tensorflow-cudnn-too-old ('/opt/a',), because tensorflow-library-shadowed ('/opt/a',)"
    )
    # An error that is its own cause is named alone.
    assert (
        verdict(cause_first([_f("no-driver"), _f("gpu-memory-low", W)])).summary == "cannot run GPU work: no-driver ()"
    )


def test_the_mixed_host_says_why_tensorflow_gets_an_old_cudnn() -> None:
    diagnosis = judge_environment(load_snapshot(str(SNAPSHOTS / "mixed-torch-jax-tf.json")))
    codes = [(f.code, f.because) for f in diagnosis.findings]
    shadowed = codes.index(("tensorflow-library-shadowed", None))
    assert codes[shadowed + 1] == ("tensorflow-cudnn-too-old", "tensorflow-library-shadowed")
    assert ("framework-needs-import-order", "framework-library-missing") in codes
    assert diagnosis.verdict.summary.startswith("cannot run GPU work: TensorFlow 2.21.0")
    assert ", because libcudnn.so.9 9.1.0 from LD_LIBRARY_PATH wins over the 9.10.2 wheel beside TensorFlow" in (
        diagnosis.verdict.summary
    )


def _cases() -> list[list[Finding]]:
    return [
        [_f("framework-copies-differ", W, ("/torch", "/tf")), _f("framework-copies-differ", W, ("/jax", "/tf")),
         _f("framework-import-order-conflict", W, ("/jax",)), _f("framework-import-order-conflict", W, ("/torch",))],
        [_f("no-cuda-runtime"), _f("framework-cpu-only", E), _f("tensorflow-cpu-only", E)],
        [_f("cudnn-create-failed", because="mig-no-devices"), _f("mig-no-devices"), _f("no-gpu")],
    ]  # fmt: skip


@pytest.mark.parametrize("given", _cases())
def test_a_second_pass_keeps_every_link_and_the_order(given: list[Finding]) -> None:
    # The pytest session judges the findings diagnose() made (judge_environment(env, findings)), which orders them
    # again: each link must survive, to the same finding, or the header and the doctor disagree.
    once = cause_first(given)
    assert cause_first(once) == once


@pytest.mark.parametrize("snapshot", sorted(SNAPSHOTS.glob("*.json")), ids=lambda path: path.stem)
def test_the_session_and_the_doctor_list_the_findings_alike(snapshot: Path) -> None:
    from pytest_cudnn.diagnosis import diagnose

    env = load_snapshot(str(snapshot))
    made = diagnose(env)
    assert list(judge_environment(env, tuple(made)).findings) == made
    assert list(judge_environment(env).findings) == made


def test_the_verdict_counts_as_every_other_count_does() -> None:
    errors = [_f("no-driver")] + [_f("cudnn-incomplete", E, (f"/opt/{n}/libcudnn.so.8",)) for n in range(1_200)]
    assert verdict(errors).summary.endswith("(and 1,200 more errors)")
    warnings = [_f("gpu-memory-low", W, (f"/g{n}",)) for n in range(1_001)]
    assert verdict(warnings).summary == "the GPU stack holds together (1,001 warnings)"


def test_one_finding_said_of_two_gpus_names_both() -> None:
    # A known-bad cuDNN on two alike GPUs: one finding (the same words), about both GPUs, so that the default view
    # marks each of them; it was about the first alone.
    import dataclasses

    from tests.envbuilder import EnvBuilder, gpu

    b = EnvBuilder.healthy().with_gpus(gpu(0, name="Some GPU", cc="6.1"), gpu(1, name="Some GPU", cc="6.1"))
    b.change(1, version="8.9.1", cudart_version_raw=12020, cudart_version="12.2")
    assert b.tensorflow is not None
    b.tensorflow = dataclasses.replace(b.tensorflow, compute_capabilities=("sm_50", "sm_60", "sm_70", "compute_90"))
    known_bad = [f for f in judge_environment(b.build()).findings if f.code == "cudnn-known-bad"]
    assert [f.gpus for f in known_bad] == [(0, 1)]


def test_a_cudnn_handle_that_fails_on_a_driver_too_old_for_torch_follows_from_the_driver() -> None:
    # Real-wheels report, "Causes": torch on driver 550 gave cudnn-create-failed as a second error of its own, with
    # a debug-logging fix, and the cuDNN marker cited it; its cause is the driver.
    site = "/venv/lib/python3.11/site-packages"
    runtime, cudnn = f"{site}/nvidia/cu13/lib/libcudart.so.13", f"{site}/nvidia/cudnn/lib/libcudnn.so.9"
    b = EnvBuilder().with_driver(version="550.54.15", cuda_version_raw=12040).with_gpus(gpu())
    b.runtime(runtime, 13020, (Via.PIP_WHEEL,), rank=None, driver_raw=12040, status=35)
    b.cudnn(cudnn, "9.26.0", 13020, (Via.PIP_WHEEL,), rank=None, create_status=1001)
    env = b.with_torch(cudnn="9.26.0", loads=(rpath_load(runtime), rpath_load(cudnn))).build()
    findings = list(judge_environment(env).findings)
    codes = [f.code for f in findings]
    assert "framework-driver-too-old" in codes, codes
    created = next(f for f in findings if f.code == "cudnn-create-failed")
    assert created.because == "framework-driver-too-old"
    assert codes.index("framework-driver-too-old") < codes.index("cudnn-create-failed")
    assert judge_environment(env).verdict.summary.startswith("cannot run GPU work: PyTorch 2.15.0+cu132 cannot run")
