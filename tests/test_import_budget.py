"""What a run imports is a decision (issue 28): the plugin's modules are never handed to pytest's assertion rewriter,
and the doctor on a host without a framework imports a listed set of modules, read from ``python -X importtime``.

Counts and names only: no time is asserted (benchmarks/bench_warm_cold.py measures, docs/measured.md records).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import packaging
import pytest

import pytest_cudnn

pytestmark = pytest.mark.e2e

# The doctor on a host with no framework, no driver and no library: the probe, the diagnosis and the views. Adding a
# module here is a choice to pay for it on every run of every user; the ELF reader, the loader's model and the
# framework load rules are not here (only a host with a framework pays for them), nor the markers, the fixtures'
# live reads, the fleet, explain or redaction.
DOCTOR_WITHOUT_FRAMEWORKS = frozenset(
    {
        "pytest_cudnn", "pytest_cudnn.__main__", "pytest_cudnn._base", "pytest_cudnn.cli", "pytest_cudnn.compat",
        "pytest_cudnn.compat.catalog", "pytest_cudnn.compat.cuda",
        "pytest_cudnn.compat.cudnn", "pytest_cudnn.compat.cupy", "pytest_cudnn.compat.forward",
        "pytest_cudnn.compat.libraries", "pytest_cudnn.compat.sources", "pytest_cudnn.compat.tensorflow",
        "pytest_cudnn.devices", "pytest_cudnn.diagnosis", "pytest_cudnn.document", "pytest_cudnn.diagnosis.container",
        "pytest_cudnn.diagnosis.cudnn", "pytest_cudnn.diagnosis.driver", "pytest_cudnn.diagnosis.forward",
        "pytest_cudnn.diagnosis.frameworks", "pytest_cudnn.diagnosis.kernels", "pytest_cudnn.diagnosis.libraries",
        "pytest_cudnn.diagnosis.loader", "pytest_cudnn.diagnosis.platform", "pytest_cudnn.diagnosis.health",
        "pytest_cudnn.probe.platform",
        "pytest_cudnn.diagnosis.model", "pytest_cudnn.diagnosis.remedies", "pytest_cudnn.diagnosis.result",
        "pytest_cudnn.diagnosis.rules", "pytest_cudnn.diagnosis.runtime", "pytest_cudnn.diagnosis.stack",
        "pytest_cudnn.diagnosis.tensorflow", "pytest_cudnn.diagnosis.variables", "pytest_cudnn.diagnosis.wheels",
        "pytest_cudnn.environment", "pytest_cudnn.files", "pytest_cudnn.frameworks", "pytest_cudnn.frameworks.base",
        "pytest_cudnn.frameworks.cupy", "pytest_cudnn.frameworks.jax", "pytest_cudnn.frameworks.onnxruntime",
        "pytest_cudnn.frameworks.tensorflow", "pytest_cudnn.frameworks.torch", "pytest_cudnn.native",
        "pytest_cudnn.native.bounded", "pytest_cudnn.native.isolation", "pytest_cudnn.native.protocol",
        "pytest_cudnn.overview", "pytest_cudnn.phrases", "pytest_cudnn.probe", "pytest_cudnn.probe.answers",
        "pytest_cudnn.frameworks.cupy.reading", "pytest_cudnn.probe.discovery", "pytest_cudnn.probe.distributions",
        "pytest_cudnn.probe.facts", "pytest_cudnn.frameworks.jax.reading", "pytest_cudnn.probe.kernel",
        "pytest_cudnn.frameworks.tensorflow.reading", "pytest_cudnn.frameworks.torch.reading", "pytest_cudnn.probing",
        "pytest_cudnn.probing.host", "pytest_cudnn.report",
        "pytest_cudnn._base.serde", "pytest_cudnn.signatures", "pytest_cudnn._base.style", "pytest_cudnn._base.text",
        "pytest_cudnn._base.versions",
    }
)  # fmt: skip
ONLY_WITH_A_FRAMEWORK = ("pytest_cudnn.binaries", "pytest_cudnn._base.loader", "pytest_cudnn.probe.loads")


def _imported(stderr: str) -> set[str]:
    """The modules ``python -X importtime`` reports, by name."""
    names = set()
    for line in stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip())
    names.discard("package")  # the header line
    return names


def test_the_doctor_without_a_framework_imports_the_listed_modules_and_no_more(tmp_path: Path) -> None:
    # A Python path of pytest-cudnn and packaging alone (-S: no site-packages), whatever this venv holds.
    path = tmp_path / "path"
    path.mkdir()
    for package in (pytest_cudnn, packaging):
        (path / package.__name__).symlink_to(Path(str(package.__file__)).parent)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": str(path), "LD_LIBRARY_PATH": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-S", "-X", "importtime", "-m", "pytest_cudnn", "doctor"],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr[-2000:]
    ours = {name for name in _imported(done.stderr) if name.split(".")[0] == "pytest_cudnn"}
    assert ours, done.stderr[-2000:]
    assert not ours - DOCTOR_WITHOUT_FRAMEWORKS, sorted(ours - DOCTOR_WITHOUT_FRAMEWORKS)
    assert not [name for name in ours if name.startswith(ONLY_WITH_A_FRAMEWORK)]


def test_pytests_assertion_rewriter_never_compiles_the_plugins_modules(pytester: pytest.Pytester) -> None:
    # What pytest does for an installed plugin (every package of its distribution marked for rewriting), asked
    # through the public API before any of these modules is imported; the header then imports them.
    pytester.makeconftest(
        'import pytest\npytest.register_assert_rewrite("pytest_cudnn.probe", "pytest_cudnn.diagnosis",'
        ' "pytest_cudnn.report")\n'
    )
    pytester.makepyfile(
        """
        import importlib.machinery
        import sys

        def test_loaders():
            names = ("pytest_cudnn.probe", "pytest_cudnn.diagnosis", "pytest_cudnn.report")
            loaders = {name: type(sys.modules[name].__loader__).__name__ for name in names}
            assert loaders == dict.fromkeys(names, "SourceFileLoader")
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-W", "error")
    result.assert_outcomes(passed=1)
