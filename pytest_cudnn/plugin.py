"""The pytest entry point (``-p no:cudnn`` disables it). Hooks and fixtures only; the work is elsewhere.

Settings and their precedence (lowest first): the ``require_gpu`` / ``gpu_probe_timeout`` ini keys, the
``PYTEST_CUDNN_REQUIRE_GPU`` environment variable, the command line (``--require-gpu``, ``--no-require-gpu``,
``--gpu-probe-timeout``). Nothing is probed for ``--help``, ``--markers`` or ``--collect-only``; otherwise the
environment is probed (or replayed with ``--gpu-env``) once per run, when the header is written.
"""

from __future__ import annotations

import json
import os
from collections.abc import Generator, Iterator
from typing import Any

import pytest
from packaging.specifiers import SpecifierSet

from .diagnosis import Finding, Verdict, diagnose, selected_cudnn, selected_runtime, verdict, visible_gpus
from .environment import Environment, InvalidSnapshot, load_snapshot
from .gpu import CudnnError, CudnnHandle, GpuDevice, create_cudnn_handle
from .markers import MARKERS, InvalidMarker, Outcome, Requirement, judge, parse_marker
from .report import header_lines, markdown_summary
from .serde import to_json

__all__ = ["CudnnHandle", "GpuDevice"]

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}
ENV_REQUIRE_GPU = "PYTEST_CUDNN_REQUIRE_GPU"


class _Run:
    """Everything one pytest run knows about the GPU stack; lives in ``config.stash``."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.require_gpu = _require_gpu(config)
        self.timeout = _timeout(config)
        self.snapshot = config.getoption("cudnn_env")
        self.replayed: Environment | None = None
        if self.snapshot:
            try:
                self.replayed = load_snapshot(self.snapshot)
            except InvalidSnapshot as error:
                raise pytest.UsageError(f"--gpu-env: {error}") from None
        self._env: Environment | None = None
        self._findings: list[Finding] = []
        self.tests: dict[str, dict[str, Any]] = {}
        self.skips: dict[str, list[str]] = {}

    @property
    def probed(self) -> bool:
        return self._env is not None

    @property
    def env(self) -> Environment:
        if self._env is None:
            if self.replayed is not None:
                self._env = self.replayed
            else:
                workerinput = getattr(self.config, "workerinput", None)
                if isinstance(workerinput, dict) and "cudnn_environment" in workerinput:
                    self._env = Environment.from_json(workerinput["cudnn_environment"], "the xdist controller")
                else:
                    from .probe import ProbeOptions, probe_environment

                    self._env = probe_environment(ProbeOptions(job_timeout=self.timeout))
            self._findings = diagnose(self._env)
        return self._env

    @property
    def findings(self) -> list[Finding]:
        _ = self.env
        return self._findings

    @property
    def verdict(self) -> Verdict:
        return verdict(self.findings)

    def device(self) -> GpuDevice | None:
        gpus = visible_gpus(self.env)
        if not gpus:
            return None
        return GpuDevice.from_probe(gpus[0], 0, replayed=self.replayed is not None)

    def refuse(self, nodeid: str, outcome: Outcome, item: pytest.Item | None = None) -> None:
        """An environment-caused skip, or a failure under --require-gpu."""
        self.skips.setdefault(outcome.cause, []).append(outcome.message)
        self.tests.setdefault(nodeid, {})["reason"] = outcome.message
        if self.require_gpu:
            pytest.fail(f"{outcome.message} [--require-gpu]", pytrace=False)
        if item is not None:
            # A skip mark, evaluated by pytest's own skipping plugin right after this hook, reports the test's
            # location rather than this file's.
            item.add_marker(pytest.mark.skip(reason=outcome.message))
            return
        pytest.skip(outcome.message)


RUN = pytest.StashKey[_Run]()


def _require_gpu(config: pytest.Config) -> bool:
    cli = config.getoption("cudnn_require_gpu")
    if cli is not None:
        return bool(cli)
    raw = os.environ.get(ENV_REQUIRE_GPU)
    if raw is not None:
        value = raw.strip().lower()
        if value in _TRUE:
            return True
        if value in _FALSE:
            return False
        raise pytest.UsageError(f"{ENV_REQUIRE_GPU}={raw!r}: expected 1/0, true/false, yes/no or on/off")
    return bool(config.getini("require_gpu"))


def _timeout(config: pytest.Config) -> float:
    cli = config.getoption("cudnn_timeout")
    raw, source = (cli, "--gpu-probe-timeout") if cli is not None else (config.getini("gpu_probe_timeout"), "ini")
    try:
        value = float(raw)
    except (TypeError, ValueError):
        value = -1.0
    if not 0 < value <= 3600:
        where = "--gpu-probe-timeout" if source != "ini" else "the gpu_probe_timeout ini key"
        raise pytest.UsageError(f"{where}: {raw!r} is not a number of seconds between 0 and 3600")
    return value


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
    parser.addini("require_gpu", type="bool", default=False, help="as --require-gpu (a CI GPU runner's switch)")
    parser.addini("gpu_probe_timeout", default="10", help="per-library probe timeout in seconds")


def pytest_configure(config: pytest.Config) -> None:
    for text in MARKERS.values():
        config.addinivalue_line("markers", text)
    config.stash[RUN] = _Run(config)


def pytest_report_header(config: pytest.Config) -> list[str]:
    run = config.stash[RUN]
    if config.option.collectonly:
        return []
    env = run.env
    return header_lines(
        env,
        run.findings,
        run.verdict,
        runtime=selected_runtime(env),
        cudnn=selected_cudnn(env),
        verbose=config.option.verbose > 0,
        source=run.snapshot,
    )


def _requirements(item: pytest.Item) -> Iterator[Requirement]:
    for name in MARKERS:
        for mark in item.iter_markers(name):
            try:
                yield parse_marker(name, mark.args, mark.kwargs)
            except InvalidMarker as error:
                shown = ", ".join([*map(repr, mark.args), *(f"{k}={v!r}" for k, v in mark.kwargs.items())])
                pytest.fail(f"{item.nodeid}: @pytest.mark.{name}({shown}): {error}", pytrace=False)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    requirements = list(_requirements(item))
    if not requirements:
        return
    run = item.config.stash[RUN]
    run.tests.setdefault(item.nodeid, {})["requirements"] = [r.describe() for r in requirements]
    device = run.device()
    gpu = next((g for g in visible_gpus(run.env) if device and g.index == device.index), None)
    for requirement in requirements:
        outcome = judge(requirement, run.env, run.findings, gpu)
        if not outcome.ok:
            run.refuse(item.nodeid, outcome, item)
            return


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    report = yield
    run = item.config.stash[RUN]
    if item.nodeid in run.tests and (report.when == "call" or report.outcome != "passed"):
        run.tests[item.nodeid]["outcome"] = report.outcome
    return report


@pytest.fixture
def gpu(request: pytest.FixtureRequest) -> GpuDevice:
    """The GPU this test runs on, with its facts; skips (fails under --require-gpu) when there is none."""
    run = request.config.stash[RUN]
    device = run.device()
    if device is None:
        run.refuse(request.node.nodeid, judge(Requirement("requires_gpu"), run.env, run.findings))
        raise AssertionError("unreachable")  # pragma: no cover - refuse() skips or fails
    return device


def _handle(request: pytest.FixtureRequest) -> Iterator[CudnnHandle]:
    run = request.config.stash[RUN]
    env = run.env
    need = Requirement("requires_cudnn")
    outcome = judge(need, env, run.findings)
    cudnn = selected_cudnn(env)
    device = run.device()
    if not outcome.ok or cudnn is None or device is None:
        run.refuse(request.node.nodeid, outcome)
        return
    if cudnn.create_status not in (None, 0):
        last = f" ({cudnn.last_error})" if cudnn.last_error else ""
        run.refuse(
            request.node.nodeid,
            Outcome(
                False,
                f"cudnnCreate returned {cudnn.create_status} {cudnn.create_error}{last} when probed "
                f"through {cudnn.path}",
                "cudnn-create-failed",
            ),
        )
        return
    # The device is chosen through a runtime of the CUDA major this cuDNN was built for, never another one.
    major = (cudnn.cudart_version or "").partition(".")[0]
    runtime = selected_runtime(env, SpecifierSet(f"=={major}.*")) if major.isdigit() else None
    runtime_path = runtime.path if runtime and (runtime.version or "").partition(".")[0] == major else None
    try:
        handle = create_cudnn_handle(cudnn.path, cudnn.version, runtime_path, device.cuda_index)
    except (CudnnError, OSError) as error:
        run.refuse(request.node.nodeid, Outcome(False, f"cannot create a cuDNN handle: {error}", "cudnn-create-failed"))
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


@pytest.fixture(scope="session", autouse=True)
def _cudnn_junit_properties(request: pytest.FixtureRequest) -> None:
    """Key versions as JUnit XML testsuite properties, when --junitxml is on."""
    if not request.config.getoption("xmlpath", None):
        return
    record = request.getfixturevalue("record_testsuite_property")
    run = request.config.stash[RUN]
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


def _skip_groups(run: _Run) -> list[tuple[str, int, str]]:
    return sorted(((cause, len(messages), messages[0]) for cause, messages in run.skips.items()), key=lambda g: -g[1])


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    run = config.stash[RUN]
    groups = _skip_groups(run)
    if groups:
        word = "failures" if run.require_gpu else "skips"
        terminalreporter.section(f"pytest-cudnn: environment {word} by cause", sep="-")
        for cause, count, message in groups:
            terminalreporter.line(f"{count:>4} x {cause}: {message}")
    if run.require_gpu and run.probed and not run.verdict.ok:
        terminalreporter.line(f"pytest-cudnn: --require-gpu: {run.verdict.summary}", red=True)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    run = config.stash.get(RUN, None)
    if run is None or config.option.collectonly or hasattr(config, "workerinput"):
        return
    if run.require_gpu and not run.verdict.ok:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    report_path = config.getoption("cudnn_report")
    if report_path:
        document = {
            "environment": run.env.to_json(),
            "findings": [to_json(f) for f in run.findings],
            "verdict": to_json(run.verdict),
            "require_gpu": run.require_gpu,
            "tests": [{"nodeid": nodeid, **facts} for nodeid, facts in run.tests.items()],
        }
        with open(report_path, "w", encoding="utf-8") as handle:
            json.dump(document, handle, indent=2)
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        with open(summary, "a", encoding="utf-8") as handle:
            handle.write(markdown_summary(run.env, run.findings, run.verdict, _skip_groups(run)))
