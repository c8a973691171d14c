"""MIG and live memory end to end on simulated hosts: the stand-in NVML lists MIG devices (tests/simhost.py), the
doctor and the plugin run in child processes, and the stand-in's state file changes free memory and compute
processes while a run goes on."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from pytest_cudnn.environment import Environment, load_snapshot

from .envbuilder import EnvBuilder, gpu, mig
from .simhost import SimGpu, SimHost, SimMig

GiB = 1024**3
BIG = SimMig("MIG-aaaaaaaa-1111-1111-1111-111111111111", "NVIDIA H100 80GB HBM3 MIG 3g.40gb", 1, 2, 0, 3, 3, 60)
SMALL = SimMig("MIG-aaaaaaaa-2222-2222-2222-222222222222", "NVIDIA H100 80GB HBM3 MIG 1g.10gb", 4, 9, 0, 1, 1, 16)
H100 = SimGpu(
    "NVIDIA H100 80GB HBM3",
    "GPU-aaaaaaaa-0000-0000-0000-000000000000",
    "00000000:18:00.0",
    (9, 0),
    80 * GiB,
    79 * GiB,
    mig_mode=1,
    mig=(
        SimMig(**{**BIG.__dict__, "memory_total": 40 * GiB, "memory_free": 39 * GiB}),
        SimMig(**{**SMALL.__dict__, "memory_total": 10 * GiB, "memory_free": 9 * GiB}),
    ),
)
A100 = SimGpu(mig_mode=0)  # MIG-capable, MIG off: a whole GPU


@pytest.fixture
def mig_host(host: SimHost) -> SimHost:
    host.add_driver([H100, A100], version="550.54.15", cuda_version=12040)
    host.add_cudart(host.folder("opt/cuda/lib64"), 12040)
    host.ld_library_path.append(str(host.root / "opt/cuda/lib64"))
    return host


def test_the_doctor_lists_each_mig_device_with_its_own_memory_and_ids(mig_host: SimHost) -> None:
    _, report = mig_host.doctor_json()
    h100, a100 = report["environment"]["driver"]["gpus"]
    assert (h100["mig_mode"], a100["mig_mode"], a100["mig"]) == (True, False, [])
    assert [
        (m["index"], m["uuid"], m["gpu_instance_id"], m["compute_instance_id"], m["gpu_slices"], m["memory_free"])
        for m in h100["mig"]
    ] == [(1, BIG.uuid, 2, 0, 3, 39 * GiB), (4, SMALL.uuid, 9, 0, 1, 9 * GiB)]
    codes = [finding["code"] for finding in report["findings"]]
    assert "mig-devices-unused" in codes
    text = mig_host.run("doctor", "-v").stdout
    assert "MIG enabled: 2 MIG device(s)" in text
    assert "MIG 4 NVIDIA H100 80GB HBM3 MIG 1g.10gb, GPU instance 9, compute instance 0, 16 SMs, 9.0 GiB free" in text


SUITE = {
    "test_mig.py": """
        import json, os
        import pytest

        @pytest.mark.parametrize("n", range(3))
        def test_where(gpu, n):
            record = {
                "worker": os.environ.get("PYTEST_XDIST_WORKER", "main"),
                "visible": os.environ.get("CUDA_VISIBLE_DEVICES"),
                "name": gpu.name,
                "uuid": gpu.uuid,
                "parent": gpu.parent_uuid,
                "label": gpu.label,
                "total": gpu.memory_total,
                "free": gpu.memory_free,
            }
            with open(os.environ["RESULTS"], "a") as out:
                out.write(json.dumps(record) + "\\n")

        @pytest.mark.requires_gpu(memory="20GiB")
        def test_big():
            pass
    """,
}


def test_each_xdist_worker_gets_one_mig_device_and_is_judged_against_it(mig_host: SimHost, tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    completed = mig_host.pytest(
        "-p", "xdist", "-n", "3", "--dist", "each", "-rs", files=SUITE, extra_env={"RESULTS": str(results)}
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "xdist workers: gw0 -> GPU 0 MIG 1, gw1 -> GPU 0 MIG 4, gw2 -> GPU 1" in completed.stdout
    seen = {}
    for line in results.read_text().splitlines():
        record = json.loads(line)
        seen[record.pop("worker")] = record
    assert seen["gw0"] == {
        "visible": BIG.uuid,
        "name": BIG.name,
        "uuid": BIG.uuid,
        "parent": H100.uuid,
        "label": "GPU 0 MIG 1",
        "total": 40 * GiB,
        "free": 39 * GiB,  # read live through the MIG device's own NVML handle
    }
    assert (seen["gw1"]["uuid"], seen["gw1"]["free"]) == (SMALL.uuid, 9 * GiB)
    assert (seen["gw2"]["visible"], seen["gw2"]["parent"], seen["gw2"]["free"]) == (A100.uuid, None, 39 * GiB)
    # 20 GiB free: the 3g.40gb device and the whole A100 have it, the 1g.10gb device does not.
    assert completed.stdout.count("SKIPPED") == 1
    assert "requires 1 GPU, 20GiB free; found GPU 0 MIG 4 NVIDIA H100 80GB HBM3 MIG 1g.10gb" in completed.stdout, (
        completed.stdout
    )


LIVE = {
    "test_live.py": """
        import os
        import pytest

        def test_a_hog_takes_the_memory(gpu):
            # Another process takes 30 GiB of this device after the session-start probe saw 39 GiB free.
            with open(os.environ["SIMHOST_NVML_STATE"], "w") as state:
                state.write(f"free {gpu.uuid} {9 * 2**30}\\n")
                state.write(f"proc {gpu.uuid} 4242 {30 * 2**30} trainer.py\\n")
                state.write(f"proc {gpu.uuid} 77 {18446744073709551615} other\\n")

        @pytest.mark.requires_gpu(memory="10GiB")
        def test_b_needs_ten_gib():
            pass

        @pytest.mark.requires_gpu(memory="8GiB")
        def test_c_needs_eight_gib(gpu):
            assert [(h.pid, h.name) for h in gpu.holders()] == [(4242, "trainer.py"), (77, "other")]
            assert gpu.memory_free == 9 * 2**30
    """,
}


@pytest.mark.parametrize("visible", [None, BIG.uuid])
def test_memory_is_judged_at_setup_and_the_holders_are_named(
    mig_host: SimHost, tmp_path: Path, visible: str | None
) -> None:
    extra = {"SIMHOST_NVML_STATE": str(tmp_path / "nvml-state")}
    if visible:
        extra["CUDA_VISIBLE_DEVICES"] = visible  # a MIG device: its own memory and processes
    else:
        mig_host.add_driver([A100], version="550.54.15", cuda_version=12040)  # a whole GPU
    completed = mig_host.pytest("-p", "no:randomly", "-rs", files=LIVE, extra_env=extra)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "2 passed, 1 skipped" in completed.stdout
    assert (
        "requires 1 GPU, 10GiB free; found GPU 0 MIG 1 NVIDIA H100 80GB HBM3 MIG 3g.40gb (compute capability "
        "9.0, Hopper, 9.0 GiB free) at test setup; held now by pid 4242 trainer.py (30.0 GiB), pid 77 other "
        "(memory not reported)"
        if visible
        else "(compute capability 8.0, Ampere, 9.0 GiB free) at test setup; held now by pid 4242 trainer.py"
    ) in completed.stdout, completed.stdout


def test_a_replayed_snapshot_judges_memory_as_recorded_and_reads_nothing_live(mig_host: SimHost) -> None:
    snapshot = mig_host.root / "snap.json"
    assert mig_host.run("snapshot", "-o", str(snapshot)).returncode == 0
    state = mig_host.root / "nvml-state"
    state.write_text(f"free {BIG.uuid} 0\n")  # would fail the marker if it were read
    completed = mig_host.pytest(
        "--gpu-env",
        str(snapshot),
        files={
            "test_replay.py": "import pytest\n\n@pytest.mark.requires_gpu(memory='10GiB')\ndef test_b():\n    pass\n"
        },
        extra_env={"SIMHOST_NVML_STATE": str(state)},
    )
    assert "1 passed" in completed.stdout, completed.stdout + completed.stderr


# Values pytest-cudnn sets for xdist workers (issue 19, N10) ---------------------------------------------------

GPU_TEST = "import pytest\n\n@pytest.mark.requires_gpu(memory='1GiB')\ndef test_g():\n    pass\n"


def _replay(pytester: pytest.Pytester, env: Environment, *args: str) -> pytest.RunResult:
    path = pytester.path / "env.json"
    path.write_text(env.dumps())
    pytester.makepyfile(test_g=GPU_TEST)
    return pytester.runpytest("-p", "xdist", "-n", "2", "--dist", "each", "-rs", f"--gpu-env={path}", *args)


@pytest.mark.usefixtures("no_probing")
def test_a_skip_never_tells_the_user_to_change_a_value_pytest_cudnn_set(pytester: pytest.Pytester) -> None:
    # GPU 0's UUID is a prefix of GPU 1's: the value pytest-cudnn gives gw0 names both GPUs, so it names neither.
    first = gpu(0, uuid="GPU-a2c4e6f8-1b3d-4f5a-8c7e-9d0b1a2c3e4f")
    second = gpu(1, uuid=f"{first.uuid}-2")
    result = _replay(pytester, EnvBuilder.healthy().with_gpus(first, second).build())
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(
        [
            "*xdist workers: gw0 -> GPU 0, gw1 -> GPU 1*",
            "SKIPPED *CUDA_VISIBLE_DEVICES leaves no GPU visible to CUDA (pytest-cudnn set it for xdist worker gw0, "
            "to give the worker its own device); fix: run with --no-gpu-assign, which leaves each worker the run's "
            "own CUDA_VISIBLE_DEVICES, and report *",
        ]
    )
    assert "set CUDA_VISIBLE_DEVICES to" not in result.stdout.str()


@pytest.mark.usefixtures("no_probing")
def test_a_mig_device_without_a_uuid_is_not_handed_to_a_worker(pytester: pytest.Pytester) -> None:
    # Only its UUID names a MIG device in CUDA_VISIBLE_DEVICES: a worker given one would be given an empty value.
    nameless = dataclasses.replace(mig(0), uuid=None)
    split = dataclasses.replace(gpu(0, name="NVIDIA H100 80GB HBM3", cc="9.0"), mig_mode=True, mig=(nameless, mig(1)))
    result = _replay(pytester, EnvBuilder.healthy().with_gpus(split).build())
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*xdist workers: gw0 -> GPU 0 MIG 1, gw1 -> GPU 0 MIG 1*"])


@pytest.mark.usefixtures("no_probing")
def test_two_mig_devices_of_one_uuid_are_refused_before_any_worker_starts(pytester: pytest.Pytester) -> None:
    twins = (mig(0), dataclasses.replace(mig(1), uuid=mig(0).uuid))
    split = dataclasses.replace(gpu(0, name="NVIDIA H100 80GB HBM3", cc="9.0"), mig_mode=True, mig=twins)
    result = _replay(pytester, EnvBuilder.healthy().with_gpus(split).build())
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [f"*--gpu-env: *env.json: driver.gpus[[]0[]].mig[[]1[]].uuid: '{mig(0).uuid}' is also at*"]
    )


def test_a_probe_never_writes_a_snapshot_its_own_loader_refuses(host: SimHost) -> None:
    # NVML saying more is free than a device holds: the probe records free memory as unknown, not the contradiction.
    overfull = SimMig(**{**BIG.__dict__, "memory_total": 10 * GiB, "memory_free": 11 * GiB})
    host.add_driver(
        [SimGpu(memory_total=24 * GiB, memory_free=39 * GiB), SimGpu(**{**H100.__dict__, "mig": (overfull,)})],
        version="550.54.15",
        cuda_version=12040,
    )
    snapshot = host.root / "snap.json"
    assert host.run("snapshot", "-o", str(snapshot)).returncode == 0
    whole, split = load_snapshot(snapshot).driver.gpus
    assert (whole.memory_total, whole.memory_free) == (24 * GiB, None)
    assert (split.mig[0].memory_total, split.mig[0].memory_free) == (10 * GiB, None)
