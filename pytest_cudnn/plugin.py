"""The pytest entry point (``-p no:cudnn`` disables it). Hooks and fixtures only; the work is elsewhere.

Settings and their precedence (lowest first): ini keys (``require_gpu``, ``gpu_probe_timeout``,
``gpus_per_worker``, ``gpu_assign``), the ``PYTEST_CUDNN_REQUIRE_GPU`` environment variable, the command line.
Nothing is probed for ``--help``, ``--markers`` or ``--collect-only``; otherwise the environment is probed (or
replayed with ``--gpu-env``) once per run, by the xdist controller when there is one, and handed to the workers.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from packaging.specifiers import SpecifierSet

from .diagnosis import selected_cudnn, selected_runtime, visible_gpus
from .gpu import CudnnError, CudnnHandle, GpuDevice, create_cudnn_handle
from .markers import MARKERS, InvalidMarker, Outcome, Requirement, judge, parse_marker
from .report import header_lines, markdown_summary
from .serde import to_json
from .session import ENV_REQUIRE_GPU, RECORD, run_of

__all__ = ["CudnnHandle", "GpuDevice"]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("cudnn", "pytest-cudnn: the GPU stack as a requirement")
    group.addoption(
        "--require-gpu",
        action="store_true",
        default=None,
        dest="cudnn_require_gpu",
        help="turn every environment-caused skip into a failure, and fail the run when the GPU stack has "
        f"error-level findings (ini require_gpu, environment {ENV_REQUIRE_GPU}=1)",
    )
    group.addoption(
        "--no-require-gpu", action="store_false", dest="cudnn_require_gpu", help="override require_gpu from ini or env"
    )
    group.addoption("--gpu-env", metavar="FILE", dest="cudnn_env", help="replay a pytest-cudnn snapshot for this run")
    group.addoption("--gpu-report", metavar="PATH", dest="cudnn_report", help="write a JSON report of the GPU stack")
    group.addoption(
        "--gpu-probe-timeout", metavar="SECONDS", dest="cudnn_timeout", help="per-library probe timeout (default 10)"
    )
    group.addoption(
        "--gpus-per-worker", metavar="N", dest="cudnn_per_worker", help="GPUs given to each xdist worker (default 1)"
    )
    group.addoption(
        "--no-gpu-assign",
        action="store_false",
        default=None,
        dest="cudnn_assign",
        help="leave CUDA_VISIBLE_DEVICES of xdist workers alone",
    )
    group.addoption(
        "--gpu-workers",
        action="store_true",
        default=False,
        dest="cudnn_workers",
        help="with -n auto, start one xdist worker per visible GPU (or per --gpus-per-worker GPUs)",
    )
    parser.addini("require_gpu", type="bool", default=False, help="as --require-gpu (a CI GPU runner's switch)")
    parser.addini("gpu_probe_timeout", default="10", help="per-library probe timeout in seconds")
    parser.addini("gpus_per_worker", default="1", help="GPUs given to each xdist worker")
    parser.addini("gpu_assign", type="bool", default=True, help="give each xdist worker its own GPU(s)")


def pytest_configure(config: pytest.Config) -> None:
    for text in MARKERS.values():
        config.addinivalue_line("markers", text)
    run_of(config)
    if config.getoption("xmlpath", None):
        config.pluginmanager.register(_JUnitProperties(), "cudnn-junit-properties")


def pytest_report_header(config: pytest.Config) -> list[str]:
    if config.option.collectonly:
        return []
    run = run_of(config)
    env = run.env
    lines = header_lines(
        env,
        run.findings,
        run.verdict,
        runtime=selected_runtime(env),
        cudnn=selected_cudnn(env),
        verbose=config.option.verbose > 0,
        source=run.snapshot,
    )
    workers = _xdist_workers(config)
    if workers:
        plan = run.plan(workers)
        shown = ", ".join(
            f"{worker} -> " + "+".join(f"GPU {gpu.index}" for gpu in plan[worker])
            for worker in workers
            if worker in plan
        )
        lines.append(f"pytest-cudnn: xdist workers: {shown or 'no GPU assignment'}")
    return lines


def _xdist_workers(config: pytest.Config) -> list[str]:
    specs = getattr(config.option, "tx", None) or []
    if getattr(config.option, "dist", "no") == "no" or not specs or hasattr(config, "workerinput"):
        return []
    return [f"gw{index}" for index in range(len(specs))]


# pytest-xdist: one probe in the controller, one GPU per worker, worker count from GPUs.
@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    if not config.getoption("cudnn_workers"):
        return None
    return run_of(config).auto_workers()


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_setupnodes(config: pytest.Config, specs: Sequence[Any]) -> None:
    """Set each worker's CUDA_VISIBLE_DEVICES in its process environment (execnet's ``env:``), before the worker
    starts: before its conftests and test modules are imported and long before any framework initialises CUDA."""
    run = run_of(config)
    plan = run.plan([f"gw{index}" for index in range(len(specs))])
    if not plan:
        return
    for index, spec in enumerate(specs):
        spec.env.update(run.worker_variables(f"gw{index}"))


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    run = run_of(node.config)
    worker = node.workerinput["workerid"]
    node.workerinput["cudnn_environment"] = run.env.to_json()
    visible = run.worker_variables(worker).get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        node.workerinput["cudnn_visible"] = visible


# Requirements ---------------------------------------------------------------------------------------


def _requirements(item: pytest.Item) -> Iterator[Requirement]:
    for mark in item.iter_markers():
        if mark.name not in MARKERS:
            continue
        try:
            yield _parse(mark.name, mark.args, tuple(sorted(mark.kwargs.items())))
        except InvalidMarker as error:
            shown = ", ".join([*map(repr, mark.args), *(f"{k}={v!r}" for k, v in mark.kwargs.items())])
            pytest.fail(f"{item.nodeid}: @pytest.mark.{mark.name}({shown}): {error}", pytrace=False)


@functools.lru_cache(maxsize=4096)
def _parse(name: str, args: tuple[Any, ...], kwargs: tuple[tuple[str, Any], ...]) -> Requirement:
    """Markers repeat across a suite (module marks, parametrized tests): each distinct one is parsed once."""
    return parse_marker(name, args, dict(kwargs))


def _requirements_of(item: pytest.Item) -> list[Requirement]:
    try:
        return list(_requirements(item))
    except TypeError:  # an unhashable marker argument: parse it uncached, with the same errors
        found = []
        for mark in item.iter_markers():
            if mark.name in MARKERS:
                try:
                    found.append(parse_marker(mark.name, mark.args, mark.kwargs))
                except InvalidMarker as error:
                    pytest.fail(f"{item.nodeid}: @pytest.mark.{mark.name}: {error}", pytrace=False)
        return found


def _facts(item: pytest.Item, **facts: Any) -> None:
    worker = getattr(item.config, "workerinput", {}).get("workerid") if hasattr(item.config, "workerinput") else None
    if worker:
        facts["worker"] = worker
    item.user_properties.append((RECORD, facts))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    requirements = _requirements_of(item)
    if not requirements:
        return
    run = run_of(item.config)
    device = run.device()
    judged = [run.judge(requirement) for requirement in requirements]
    _facts(item, requirements=[text for _, text in judged], gpu=device.index if device else None)
    for outcome, _ in judged:
        if not outcome.ok:
            run.refuse(item, outcome)
            return


# Fixtures ------------------------------------------------------------------------------------------


@pytest.fixture
def gpu(request: pytest.FixtureRequest) -> GpuDevice:
    """The GPU this test runs on, with its facts; skips (fails under --require-gpu) when there is none."""
    run = run_of(request.config)
    device = run.device()
    if device is None:
        run.refuse(request.node, judge(Requirement("requires_gpu"), run.env, run.findings), in_fixture=True)
        raise AssertionError("unreachable")  # pragma: no cover - refuse() skips or fails
    _facts(request.node, gpu=device.index)
    return device


def _handle(request: pytest.FixtureRequest) -> Iterator[CudnnHandle]:
    run = run_of(request.config)
    env = run.env
    outcome = judge(Requirement("requires_cudnn"), env, run.findings)
    cudnn = selected_cudnn(env)
    device = run.device()
    node = request.node
    if not outcome.ok or cudnn is None or device is None:
        run.refuse(node, outcome, in_fixture=True)
        return
    if cudnn.create_status not in (None, 0):
        last = f" ({cudnn.last_error})" if cudnn.last_error else ""
        message = (
            f"cudnnCreate returned {cudnn.create_status} {cudnn.create_error}{last} when probed through {cudnn.path}"
        )
        run.refuse(node, Outcome(False, message, "cudnn-create-failed"), in_fixture=True)
        return
    # The device is chosen through a runtime of the CUDA major this cuDNN was built for, never another one.
    major = (cudnn.cudart_version or "").partition(".")[0]
    runtime = selected_runtime(env, SpecifierSet(f"=={major}.*")) if major.isdigit() else None
    runtime_path = runtime.path if runtime and (runtime.version or "").partition(".")[0] == major else None
    try:
        handle = create_cudnn_handle(cudnn.path, cudnn.version, runtime_path, device.cuda_index)
    except (CudnnError, OSError) as error:
        # A status means cuDNN answered; without one the library could not even be loaded (or is not here).
        cause = "cudnn-create-failed" if getattr(error, "status", None) is not None else "cudnn-not-loadable"
        run.refuse(node, Outcome(False, f"cannot create a cuDNN handle: {error}", cause), in_fixture=True)
        return
    try:
        yield handle
    finally:
        handle.destroy()


@pytest.fixture
def cudnn_handle(request: pytest.FixtureRequest) -> Iterator[CudnnHandle]:
    """A real cudnnHandle_t through the cuDNN the probe vouched for, on this test's GPU; destroyed afterwards."""
    yield from _handle(request)


@pytest.fixture(scope="session")
def cudnn_handle_session(request: pytest.FixtureRequest) -> Iterator[CudnnHandle]:
    """As ``cudnn_handle``, one handle for the whole session."""
    yield from _handle(request)


class _JUnitProperties:
    """Registered only with --junitxml: an autouse fixture costs every test its fixture resolution."""

    @pytest.fixture(scope="session", autouse=True)
    def _cudnn_junit_properties(self, request: pytest.FixtureRequest) -> None:
        """Key versions as JUnit XML testsuite properties."""
        record = request.getfixturevalue("record_testsuite_property")
        run = run_of(request.config)
        env = run.env
        runtime, cudnn = selected_runtime(env), selected_cudnn(env)
        properties = {
            "gpu.driver": env.driver.version,
            "gpu.count": str(len(visible_gpus(env))),
            "gpu.cuda_runtime": runtime.version if runtime else None,
            "gpu.cudnn": cudnn.version if cudnn else None,
            "gpu.tensorflow": env.tensorflow.version,
            "gpu.verdict": run.verdict.summary,
        }
        for name, value in properties.items():
            if value is not None:
                record(name, value)


# Summary and reports --------------------------------------------------------------------------------


class _Recorder:
    """Collects each test's GPU facts where the reports arrive (the xdist controller, or this process)."""

    def __init__(self, config: pytest.Config) -> None:
        self.run = run_of(config)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.user_properties:
            self.run.record(report)


@pytest.hookimpl(trylast=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    config = session.config
    if not hasattr(config, "workerinput"):
        config.pluginmanager.register(_Recorder(config), "cudnn-recorder")


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    run = run_of(config)
    groups = run.skip_groups()
    if groups:
        word = "failures" if run.require_gpu else "skips"
        terminalreporter.section(f"pytest-cudnn: environment {word} by cause", sep="-")
        for cause, count, message in groups:
            terminalreporter.line(f"{count:>4} x {cause}: {message}")
    if run.require_gpu and run.probed and not run.verdict.ok:
        terminalreporter.line(f"pytest-cudnn: --require-gpu: {run.verdict.summary}", red=True)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    if config.option.collectonly or hasattr(config, "workerinput"):
        return
    run = run_of(config)
    if run.require_gpu and not run.verdict.ok:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    report_path = config.getoption("cudnn_report")
    if report_path:
        document = {
            "environment": run.env.to_json(),
            "findings": [to_json(f) for f in run.findings],
            "verdict": to_json(run.verdict),
            "require_gpu": run.require_gpu,
            "xdist": {worker: [gpu.index for gpu in gpus] for worker, gpus in run.assignment.items()},
            "tests": [{"nodeid": nodeid, **facts} for nodeid, facts in run.tests.items()],
        }
        with open(report_path, "w", encoding="utf-8") as handle:
            json.dump(document, handle, indent=2)
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        with open(summary, "a", encoding="utf-8") as handle:
            handle.write(markdown_summary(run.env, run.findings, run.verdict, run.skip_groups()))
