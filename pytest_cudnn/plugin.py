"""The pytest entry point (``-p no:cudnn`` disables it). Hooks and fixtures only; the work is elsewhere.

Settings and their precedence (lowest first): ini keys (``require_gpu``, ``gpu_health``, ``gpu_probe_timeout``,
``gpus_per_worker``, ``gpu_assign``), the ``PYTEST_CUDNN_REQUIRE_GPU`` and ``PYTEST_CUDNN_GPU_HEALTH`` environment
variables, the command line.
Nothing is probed for ``--help``, ``--markers``, ``--collect-only``, ``--fixtures``, ``--fixtures-per-test``,
``--setup-plan`` or ``--cache-show``; otherwise the environment is probed (or replayed with ``--gpu-env``) once per
run, by the xdist controller when there is one (and once for each other machine its workers run on), and handed to
the workers. A run started inside another one in the same process (pytester) probes only when a test or an option
needs the environment, and until then imports nothing beyond this module's own (pytester drops what an inner run
imported, so every inner run would pay it again).
"""

from __future__ import annotations

import functools
import sys
import types
from collections.abc import Callable, Generator, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import pytest

from ._base.text import REPORT_WHOLE, line, summarised
from ._run import outputs
from ._run.session import REPORT_ATTRIBUTE, inspect_only, leave, run_of
from ._run.settings import ENV_CACHE, ENV_GPU_HEALTH, ENV_REQUIRE_GPU, GPU_HEALTH, typed
from .signatures import MARKERS, USES_GPU

if TYPE_CHECKING:  # imported where used: a run that uses no marker and no fixture never pays for them
    from ._run.gpu import CudnnHandle, GpuDevice
    from ._run.session import GpuRun
    from ._run.usage import UsageCheck
    from .markers import Requirement

__all__ = ["CudnnHandle", "GpuDevice"]


def __getattr__(name: str) -> Any:
    """``pytest_cudnn.plugin.GpuDevice`` and ``CudnnHandle``, the fixtures' types, imported when asked for."""
    if name in __all__:
        from . import gpu

        return getattr(gpu, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
    group.addoption(
        "--gpu-env",
        metavar="FILE",
        dest="cudnn_env",
        help="replay a pytest-cudnn snapshot for this run (--gpu-env=FILE)",
    )
    group.addoption(
        "--gpu-report",
        metavar="PATH",
        dest="cudnn_report",
        help="write a JSON report of the GPU stack (--gpu-report=PATH)",
    )
    group.addoption(
        "--gpu-probe-timeout",
        metavar="SECONDS",
        dest="cudnn_timeout",
        help="per-library probe timeout, and the bound on each NVML or cuDNN call the test process makes (default 10)",
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
    group.addoption(
        "--assert-gpu-used",
        action="store_true",
        default=None,
        dest="cudnn_assert_used",
        help="fail every test given the gpu fixture whose process holds no CUDA context on that GPU after the test, "
        "as @pytest.mark.uses_gpu does (ini assert_gpu_used)",
    )
    group.addoption(
        "--gpu-cache",
        choices=("on", "off"),
        default=None,
        dest="cudnn_cache",
        help="keep what the host's files say between runs, each fact under its file's identity; off reads every file "
        f"(default on; ini gpu_cache, environment {ENV_CACHE}=0)",
    )
    group.addoption(
        "--gpu-health",
        choices=GPU_HEALTH,
        default=None,
        dest="cudnn_gpu_health",
        help="a GPU whose state makes tests fail (uncorrectable ECC errors, memory repairs pending, compute mode "
        "PROHIBITED): fail stops the run before its tests, naming the GPU; warn says it in the header; off says "
        f"nothing (default warn; ini gpu_health, environment {ENV_GPU_HEALTH})",
    )
    parser.addini("require_gpu", type="bool", default=False, help="as --require-gpu (a CI GPU runner's switch)")
    parser.addini("gpu_health", default="warn", help="as --gpu-health: off, warn or fail")
    parser.addini("gpu_cache", type="bool", default=True, help="as --gpu-cache")
    # Typed where pytest can (8.4 added the "float" and "int" ini types): a number in native TOML ([tool.pytest]
    # gpu_probe_timeout = 30) is then taken, where a string option refuses it ("expects a string, got int"), and
    # pytest --help says the type. The settings check the range either way.
    parser.addini("gpu_probe_timeout", default="10", help="as --gpu-probe-timeout, in seconds", type=typed("float"))
    parser.addini("gpus_per_worker", default="1", help="GPUs given to each xdist worker", type=typed("int"))
    parser.addini("gpu_assign", type="bool", default=True, help="give each xdist worker its own GPU(s)")
    parser.addini("assert_gpu_used", type="bool", default=False, help="as --assert-gpu-used")


def pytest_configure(config: pytest.Config) -> None:
    for text in (*MARKERS.values(), USES_GPU):
        config.addinivalue_line("markers", text)
    run = run_of(config)
    run.records.facts_plugin = _Facts(run)
    run.start()
    if run.assert_gpu_used:
        _checking(run)
    # Properties go into the controller's XML only; in an xdist worker pytest's record_testsuite_property does
    # nothing, so the fixture would cost every worker for nothing.
    if config.getoption("xmlpath", None) and not hasattr(config, "workerinput"):
        config.pluginmanager.register(_junit_properties(), "cudnn-junit-properties")


@pytest.hookimpl(wrapper=True)
def pytest_unconfigure(config: pytest.Config) -> Generator[None, None, None]:
    try:
        return (yield)
    finally:
        leave(config)


def pytest_report_header(config: pytest.Config) -> list[str]:
    if inspect_only(config):
        return []
    return outputs.header(run_of(config), verbose=config.option.verbose > 0)


# pytest-xdist: one probe per host, by the controller, one GPU per worker, worker count from GPUs.
# tryfirst: the hook is firstresult, and xdist's own implementation (the CPU count) would otherwise answer first
# whenever xdist was registered before this plugin.
@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    if not config.getoption("cudnn_workers"):
        return None
    return run_of(config).xdist.auto_workers()


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_setupnodes(config: pytest.Config, specs: Sequence[Any]) -> None:
    """Set each worker's CUDA_VISIBLE_DEVICES in its process environment (execnet's ``env:``), before the worker
    starts: before its conftests and test modules are imported and long before any framework initialises CUDA.
    Remote hosts are probed here at the latest, before their workers start. Ids are xdist's, allocated by now."""
    run = run_of(config)
    for spec in specs:
        spec.env.update(run.xdist.worker_variables(str(spec.id)))


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """Hand the worker its own host's environment and devices."""
    node.workerinput.update(run_of(node.config).xdist.worker_input(node.workerinput["workerid"]))


_COLLECTED = pytest.StashKey[dict[str, int]]()  # xdist worker id -> the number of tests it collected


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node: Any, ids: Sequence[str]) -> None:
    """Counted to name a worker that collected nothing beside others (see hosts.collection_lines)."""
    node.config.stash.setdefault(_COLLECTED, {})[str(node.gateway.id)] = len(ids)


# Requirements ---------------------------------------------------------------------------------------


def _requirements(item: pytest.Item) -> Iterator[Requirement]:
    for mark in item.iter_markers():
        if mark.name not in MARKERS:
            continue
        try:
            requirement = _parse(mark.name, mark.args, tuple(sorted(mark.kwargs.items())))
        except ValueError as error:  # InvalidMarker (a ValueError), unimported here: this runs for every marked test
            problem = str(error)
        else:
            yield requirement
            continue
        # Failed outside the except block: raised inside it, the error would be printed twice (as the cause).
        shown = ", ".join([*map(repr, mark.args), *(f"{k}={v!r}" for k, v in mark.kwargs.items())])
        pytest.fail(f"{item.nodeid}: @pytest.mark.{mark.name}({shown}): {problem}", pytrace=False)


@functools.lru_cache(maxsize=4096)
def _parse(name: str, args: tuple[Any, ...], kwargs: tuple[tuple[str, Any], ...]) -> Requirement:
    """Markers repeat across a suite (module marks, parametrized tests): each distinct one is parsed once."""
    from .markers import parse_marker

    return parse_marker(name, args, dict(kwargs))


def _requirements_of(item: pytest.Item) -> list[Requirement]:
    try:
        return list(_requirements(item))
    except TypeError:  # an unhashable marker argument: parse it uncached, with the same errors
        pass
    from .markers import InvalidMarker, parse_marker

    found = []
    for mark in item.iter_markers():
        if mark.name in MARKERS:
            try:
                found.append(parse_marker(mark.name, mark.args, mark.kwargs))
            except InvalidMarker as error:
                problem = str(error)
            else:
                continue
            pytest.fail(f"{item.nodeid}: @pytest.mark.{mark.name}: {problem}", pytrace=False)
    return found


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    requirements = _requirements_of(item)
    marked = item.get_closest_marker("uses_gpu") is not None
    # --assert-gpu-used: registered the check at configure; only then is any unmarked test looked at.
    if marked or (_CHECKING in item.config.stash and "gpu" in getattr(item, "fixturenames", ()) and _switch(item)):
        _before(item, marked)
    if not requirements or getattr(item.config.option, "setupplan", False):  # --setup-plan runs nothing
        return
    run = run_of(item.config)
    device = run.device()
    judged = [run.judge(requirement) for requirement in requirements]
    if run.keeps_tests:
        run.records.note(item, requirements=[text for _, text in judged], gpu=device.index if device else None)
    for outcome, _ in judged:
        if not outcome.ok:
            run.records.refuse(item, outcome)
            return


# Whether the GPU was used (uses_gpu, --assert-gpu-used) -------------------------------------------------

_CHECKING: pytest.StashKey[UsageCheck] = pytest.StashKey()  # the call-phase check, registered once it is needed


def _checking(run: GpuRun) -> None:
    if _CHECKING not in run.config.stash:
        from ._run.usage import UsageCheck

        check = UsageCheck(run)
        run.config.stash[_CHECKING] = check
        run.config.pluginmanager.register(check, "cudnn-gpu-used")


def _switch(item: pytest.Item) -> bool:
    return run_of(item.config).assert_gpu_used


def _before(item: pytest.Item, marked: bool) -> None:
    """The state at the start of setup, before any fixture: what the test's process held before the test."""
    if getattr(item.config.option, "setupplan", False):
        return
    run = run_of(item.config)
    _checking(run)
    item.config.stash[_CHECKING].before(item, marked)


# Fixtures ------------------------------------------------------------------------------------------


@pytest.fixture
def gpu(request: pytest.FixtureRequest) -> GpuDevice:
    """The GPU this test runs on, with its facts; skips (fails under --require-gpu) when there is none."""
    from .markers import Requirement, judge

    run = run_of(request.config)
    device = run.device()
    if device is None:
        run.records.refuse_in_fixture(judge(Requirement("requires_gpu"), run.diagnosis))
    if run.keeps_tests and isinstance(request.node, pytest.Item):
        run.records.note(request.node, gpu=device.index)
    return device


@pytest.fixture
def cudnn_handle(request: pytest.FixtureRequest) -> Iterator[CudnnHandle]:
    """A real cudnnHandle_t through the cuDNN the probe vouched for, on this test's GPU; destroyed afterwards.
    It is the cuDNN the framework loads: the one named by the test's requires_cudnn(framework=...) marker, else
    the installed frameworks'. Under --gpu-env it skips: a snapshot's libraries are never loaded."""
    handle = run_of(request.config).open_handle("cudnn_handle", _framework_of(request.node))
    try:
        yield handle
    finally:
        handle.destroy()


def _framework_of(node: pytest.Item | pytest.Collector) -> str | None:
    """The framework a test's requires_cudnn marker names (validated at collection), if any."""
    mark = node.get_closest_marker("requires_cudnn")
    named = mark.kwargs.get("framework") if mark is not None else None
    return named if isinstance(named, str) else None


@pytest.fixture(scope="session")
def cudnn_handle_session(request: pytest.FixtureRequest) -> Iterator[CudnnHandle]:
    """As ``cudnn_handle``, one handle for the whole session."""
    handle = run_of(request.config).open_handle("cudnn_handle_session")
    try:
        yield handle
    finally:
        handle.destroy()


def _junit_properties() -> types.ModuleType:
    """The plugin that records the key versions as JUnit XML testsuite properties; registered only with
    --junitxml (an autouse fixture costs every test its fixture resolution). A module object, not a class
    instance: a fixture bound to an instance is deprecated (PytestRemovedIn10Warning from pytest 9.1), and one
    defined at this module's level would be registered for every run."""

    @pytest.fixture(scope="session", autouse=True)
    def cudnn_junit_properties(
        request: pytest.FixtureRequest, record_testsuite_property: Callable[[str, object], None]
    ) -> Iterator[None]:
        # Recorded at teardown (the last test's, before junitxml writes the file): after the properties the
        # suite records itself, which keep their places.
        yield
        for name, value in outputs.suite_properties(run_of(request.config)):
            record_testsuite_property(name, value)

    plugin = types.ModuleType(f"{__name__}.junit_properties")
    vars(plugin)["_cudnn_junit_properties"] = cudnn_junit_properties
    return plugin


# Summary and reports --------------------------------------------------------------------------------


class _Facts:
    """Carries each test's GPU facts on its reports, and gathers them where the reports arrive (the xdist
    controller, or this process). Registered on the first fact: a suite without GPU tests never pays for it."""

    def __init__(self, run: GpuRun) -> None:
        self.run = run
        self.gathers = run.worker is None  # an xdist worker only sends its reports on

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        error = call.excinfo.value if call.excinfo is not None else None
        self.run.records.relocate_skip(item, error, report)
        facts = self.run.records.facts_of(item, error)
        if facts:
            setattr(report, REPORT_ATTRIBUTE, facts)
        return report

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if self.gathers:
            self.run.records.record(report)


@pytest.hookimpl(trylast=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    config = session.config
    if config.getoption("dist", "no") != "no" and not hasattr(config, "workerinput"):
        run_of(config).records.activate()  # an xdist controller: the facts arrive on the workers' reports
    if not inspect_only(config) and not hasattr(config, "workerinput"):
        run = run_of(config)
        outputs.provisional(run)
        unhealthy = outputs.health_gate(run)
        if unhealthy:
            pytest.exit(unhealthy, returncode=pytest.ExitCode.TESTS_FAILED)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    run = run_of(config)
    groups = run.records.skip_groups()
    if groups:
        word = "failures" if run.require_gpu else "skips"
        terminalreporter.section(f"pytest-cudnn: environment {word} by cause", sep="-")
        for text in summarised(groups, _CAUSES, _cause_line, "causes", "--gpu-report lists every test"):
            terminalreporter.line(line(text))
    if run.require_gpu and run.probed and not run.verdict.ok:
        terminalreporter.line(line(f"pytest-cudnn: --require-gpu: {run.verdict.summary}"), red=True)
    if run.require_gpu and run.probed:
        hosts = summarised(run.xdist.broken_hosts(), _CAUSES, _broken_host, "hosts", REPORT_WHOLE, _BROKEN.format)
        for text in hosts:
            terminalreporter.line(line(text), red=True)
    not_used, unknown = run.records.gpu_use_counts()
    if not_used or unknown:
        terminalreporter.line(line(outputs.gpu_use_line(not_used, unknown, run.replaying)), red=bool(not_used))
    collected = config.stash.get(_COLLECTED, {})
    if collected:
        from ._run.hosts import collection_lines

        for text in collection_lines(collected, run.xdist.xdist_hosts()):
            terminalreporter.line(line(text), yellow=True)
    for problem in run.problems:
        terminalreporter.line(line(f"pytest-cudnn: ERROR: {problem}"), red=True, bold=True)


_CAUSES = 16  # causes of environment skips, and broken xdist hosts, in the terminal summary


def _cause_line(group: tuple[str, int, str]) -> list[str]:
    cause, count, message = group
    return [f"{count:>4} x {cause}: {message}"]


_BROKEN = "pytest-cudnn: --require-gpu: {}"


def _broken_host(broken: tuple[str, str]) -> list[str]:
    return [_BROKEN.format(f"xdist host {broken[0]}: {broken[1]}")]


def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    if inspect_only(config) or hasattr(config, "workerinput"):
        return
    run = run_of(config)
    outputs.finish(run, session)
    if run.problems and not config.pluginmanager.has_plugin("terminalreporter"):
        for problem in run.problems:  # no terminal summary to say it in (-p no:terminal)
            sys.stderr.write(f"pytest-cudnn: ERROR: {problem}\n")
