"""The report document (pytest_cudnn/document.py, issue 30): one typed shape for its writers (doctor --json,
--gpu-report, the xdist hosts) and its reader (the fleet); its JSON Schema generated from it, and checked by a second
implementation (jsonschema) against documents the real writers made."""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from pytest_cudnn._run.hosts import Host, host_entry
from pytest_cudnn.diagnosis import judge_environment
from pytest_cudnn.document import (
    READS,
    REPORT_SCHEMA,
    CopyInUse,
    DeviceEntry,
    FrameworkEntry,
    Report,
    ReportRefused,
    json_schema,
    read_report,
    report_json,
)
from pytest_cudnn.document import (
    TestEntry as Entry,
)
from pytest_cudnn.environment import Environment
from pytest_cudnn.report import doctor_json, doctor_report

from .envbuilder import EnvBuilder
from .test_nccl import jax_with_cublas, nccl_copy, torch_host

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((ROOT / "docs" / "reference" / "report.schema.json").read_text(encoding="utf-8"))
GOLDEN = sorted((ROOT / "tests" / "golden" / "doctor").glob("*.json"))
ENVIRONMENTS: dict[str, Callable[[], Environment]] = {
    "healthy": EnvBuilder.healthy().build,
    "no driver": EnvBuilder.healthy().without_driver().build,
    "torch with NCCL": lambda: torch_host(nccl_copy("2.29.3", "12.9")),
    "jax with cuBLAS": lambda: jax_with_cublas("12.9.3", "12.1.3"),
}


@functools.cache
def validator() -> Draft202012Validator:
    """Made once: checking the schema and building its validator is most of each test's time."""
    Draft202012Validator.check_schema(SCHEMA)
    return Draft202012Validator(SCHEMA)


def errors(data: Any) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator().iter_errors(data)]


def test_the_committed_schema_is_a_valid_schema_made_from_the_classes() -> None:
    Draft202012Validator.check_schema(SCHEMA)
    assert json_schema() == SCHEMA  # docs/generate.py writes it; test_docs keeps the file current too
    assert SCHEMA["required"] == ["schema", "schema_version", "environment", "findings", "verdict", "frameworks"]


@pytest.mark.parametrize("path", GOLDEN, ids=[path.stem for path in GOLDEN])
def test_every_committed_doctor_json_is_valid_and_reads_back(path: Path) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    assert errors(data) == []
    report = read_report(data)
    assert report_json(report) == data  # written by the classes: read and written again, the same document


@pytest.mark.parametrize("name", ENVIRONMENTS)
def test_the_doctors_document_round_trips_through_its_classes(name: str) -> None:
    diagnosis = judge_environment(ENVIRONMENTS[name]())
    data = json.loads(json.dumps(doctor_json(diagnosis)))
    assert errors(data) == []
    assert read_report(data) == doctor_report(diagnosis)


def test_a_frameworks_libraries_are_in_its_entry_and_omitted_where_it_has_none() -> None:
    data = doctor_json(judge_environment(jax_with_cublas("12.9.3", "12.9.3")))
    [jax] = [entry for entry in data["frameworks"] if entry["name"] == "jax"]
    assert jax["libraries"] == {
        "cublas": {"version": "12.9.3", "path": "/venv/lib/python3.11/site-packages/nvidia/cublas/lib/libcublas.so.12"},
        "cublaslt": {
            "version": "12.9.3",
            "path": "/venv/lib/python3.11/site-packages/nvidia/cublas/lib/libcublasLt.so.12",
        },
    }
    assert "cause" not in jax  # it can run: no cause, as the document has always been written
    [tensorflow] = doctor_json(judge_environment(EnvBuilder.healthy().build()))["frameworks"]
    assert set(tensorflow) == {"name", "version", "ok", "summary"}


def test_a_run_report_with_hosts_and_tests_is_valid_and_reads_back() -> None:
    env = EnvBuilder.healthy().build()
    diagnosis = judge_environment(env)
    host = Host("socket=10.0.0.2:8888", ("gw1",), "socket=10.0.0.2:8888")
    report = dataclasses.replace(
        doctor_report(diagnosis),
        require_gpu=True,
        xdist={"gw0": (0,)},
        xdist_devices={"gw0": (DeviceEntry("GPU 0", "GPU-1"),)},
        hosts=(host_entry(host, diagnosis, None, None), host_entry(host, None, None, "could not connect")),
        tests=(
            Entry("t.py::a", ("requires cuDNN >=9",), 0, "gw0", "used", "GPU 0: a context", outcome="passed"),
            Entry("t.py::b", reason="requires cuDNN >=10; found ...", cause="cudnn-version", outcome="skipped"),
        ),
        finished=True,
    )
    data = json.loads(json.dumps(report_json(report)))
    assert errors(data) == []
    assert "xdist_note" not in data  # none: left out
    assert read_report(data) == report


def test_a_version_1_report_reads_through_the_same_reader() -> None:
    """Version 1: no schema, no in_use; its first writers called a finding's fix ``remedy``."""
    data = doctor_json(judge_environment(EnvBuilder.healthy().without_driver().build()))
    del data["schema"], data["in_use"]
    data["schema_version"] = 1
    for finding in data["findings"]:
        finding["remedy"] = finding.pop("fix")
        del finding["component"]
    report = read_report(data)
    assert (report.schema, report.schema_version, report.in_use) == (REPORT_SCHEMA, 1, None)
    assert report.findings[0].fix  # the remedy, read as the fix
    assert READS == (1, 2)


def test_keys_a_newer_writer_adds_are_dropped_but_not_in_the_environment() -> None:
    data = doctor_json(judge_environment(EnvBuilder.healthy().build()))
    data["frameworks"][0]["speed"] = "fast"
    data["findings"] = [{"code": "c", "severity": "info", "summary": "s", "component": "x", "evidence": [],
                         "fix": "f", "subjects": [], "novel": 1}]  # fmt: skip
    data["in_use"]["cuda_runtime"]["checksum"] = "x"
    data["brand_new"] = {"anything": True}
    report = read_report(data)
    assert report.frameworks[0] == FrameworkEntry("tensorflow", "2.18.0", True, "can run GPU work here")
    assert report.in_use is not None
    assert isinstance(report.in_use.cuda_runtime, CopyInUse)
    data["environment"]["new_field"] = 1
    with pytest.raises(ReportRefused, match=r"^environment\.<top>: unknown field 'new_field'$|unknown field"):
        read_report(data)


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        (lambda d: d.update(schema_version=3), "schema_version: 3, newer than this pytest-cudnn reads (1 to 2)"),
        (lambda d: d.update(schema_version="2"), "schema_version: expected a whole number from 1, got '2'"),
        (lambda d: d["verdict"].update(ok="yes"), "verdict.ok: expected true or false, got 'yes'"),
        (lambda d: d.pop("frameworks"), "frameworks: missing"),
        (lambda d: d["environment"]["driver"].update(version="new"), "environment.driver.version: expected"),
    ],
)
def test_a_bad_report_is_refused_naming_the_key(edit: Any, said: str) -> None:
    data = doctor_json(judge_environment(EnvBuilder.healthy().build()))
    edit(data)
    with pytest.raises(ReportRefused) as refused:
        read_report(data)
    assert str(refused.value).startswith(said)


def test_the_reports_keys_are_spelt_in_one_module() -> None:
    """Issue 30: the document's keys as string literals appear in pytest_cudnn/document.py and nowhere else in the
    product (the writers and the fleet use its classes and constants)."""
    keys = {item.name for cls in (Report, FrameworkEntry, Entry) for item in dataclasses.fields(cls)}
    # Words the product uses for other things too (a header's label, a snapshot's own key, a setting's name).
    common = {"name", "version", "ok", "summary", "cause", "reason", "host", "schema", "schema_version", "environment",
              "findings", "verdict", "frameworks", "gpu", "hosts", "tests", "xdist", "worker", "nodeid", "outcome",
              "requirements", "libraries"}  # fmt: skip
    distinctive = sorted(keys - common)
    found: dict[str, list[str]] = {}
    for path in sorted((ROOT / "pytest_cudnn").rglob("*.py")):
        if path.name == "document.py":
            continue
        text = path.read_text(encoding="utf-8")
        for key in distinctive:
            if re.search(rf"[\"']{key}[\"']", text):
                found.setdefault(key, []).append(str(path.relative_to(ROOT)))
    # Parsed settings and the test-facts records are the run's own names for the same values, not the document's.
    settings = ["pytest_cudnn/_run/settings.py", "pytest_cudnn/fleet/compare.py", "pytest_cudnn/plugin.py"]
    records = ["pytest_cudnn/_run/records.py"]
    allowed = {"require_gpu": settings, "gpu_use": records, "gpu_used": records}
    assert {key: paths for key, paths in found.items() if paths != allowed.get(key)} == {}
    assert "in_use" in distinctive
    assert "xdist_devices" in distinctive
