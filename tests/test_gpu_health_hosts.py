"""Each GPU's state on simulated hosts (issue 32): the stand-in NVML answers the state calls as nvml.h documents
them, the real probe reads them in its child, and the doctor says what makes tests fail or flaky. Each case failed
on the code before, which read none of it and called every such host healthy."""

from __future__ import annotations

from typing import Any

import pytest

from .simhost import SimGpu, SimHost

pytestmark = pytest.mark.e2e


def h100(index: int, **state: Any) -> SimGpu:
    return SimGpu(
        "NVIDIA H100 80GB HBM3",
        f"GPU-{index:08d}-0000-0000-0000-000000000000",
        f"00000000:{0x18 + index:02X}:00.0",
        (9, 0),
        **state,
    )


def doctor(host: SimHost, gpus: list[SimGpu], **driver: Any) -> tuple[int, dict[str, Any]]:
    host.add_driver(gpus, version="580.95.05", cuda_version=13000, **driver)
    host.add_stack("usr/local/cuda-13.0/lib64", 13000)
    return host.doctor_json()


def findings(report: dict[str, Any], code: str) -> list[dict[str, Any]]:
    return [finding for finding in report["findings"] if finding["code"] == code]


def test_uncorrectable_ecc_errors_on_gpu_1_of_2_name_gpu_1(host: SimHost) -> None:
    code, report = doctor(host, [h100(0), h100(1, ecc_volatile=2, ecc_aggregate=7)])
    health = report["environment"]["driver"]["gpus"][1]["health"]
    assert (health["ecc_uncorrected_volatile"], health["ecc_uncorrected_aggregate"]) == (2, 7)
    [ecc] = findings(report, "gpu-ecc-uncorrectable")
    assert ecc["gpus"] == [1]
    assert ecc["summary"].startswith("GPU 1 has had 2 uncorrectable ECC errors since the driver loaded")
    # GPU 0 can still be trusted with work: a warning, the run goes on (--gpu-health and healthy=True decide).
    assert (ecc["severity"], code) == ("warning", 0)
    assert "GPUs without such a fault: 0" in ecc["evidence"]
    [line] = [text for text in host.run("doctor").stdout.splitlines() if text[2:].startswith("GPU 1 ")]
    assert line.endswith("(see [gpu-ecc-uncorrectable] above)")


def test_uncorrectable_ecc_errors_on_the_only_gpu_stop_gpu_work(host: SimHost) -> None:
    code, report = doctor(host, [h100(0, ecc_volatile=1)])
    assert (findings(report, "gpu-ecc-uncorrectable")[0]["severity"], code) == ("error", 1)
    assert report["verdict"]["summary"].startswith("cannot run GPU work: GPU 0 has had 1 uncorrectable ECC error")


def test_row_remapping_pending_asks_for_a_gpu_reset(host: SimHost) -> None:
    code, report = doctor(host, [h100(0, remap_pending=1)])
    assert code == 1  # its only GPU
    [pending] = findings(report, "gpu-memory-repair-pending")
    assert pending["fix"].startswith("reset GPU 0 (nvidia-smi -r -i 0")


@pytest.mark.parametrize(
    ("reasons", "expected"),
    [(0x41, []), (0x40, ["gpu-throttled"]), (0x4, ["gpu-throttled"])],
    ids=["idle", "hardware-thermal-under-load", "power-cap-under-load"],
)
def test_clocks_held_down_count_only_under_load(host: SimHost, reasons: int, expected: list[str]) -> None:
    code, report = doctor(host, [h100(0, clocks_reasons=reasons)])
    assert [f["code"] for f in report["findings"] if f["code"] == "gpu-throttled"] == expected
    assert code == 0  # a warning at most
    if expected:
        assert findings(report, "gpu-throttled")[0]["severity"] == "warning"


def test_a_pcie_link_trained_at_x1_is_a_warning(host: SimHost) -> None:
    _, report = doctor(host, [h100(0, pcie=(5, 5, 1, 16))])
    [link] = findings(report, "gpu-pcie-degraded")
    assert "PCIe Gen5 x1, of Gen5 x16" in link["summary"]


def test_exclusive_process_and_prohibited_compute_modes(host: SimHost) -> None:
    code, report = doctor(host, [h100(0, compute_mode=3), h100(1, compute_mode=2)])
    assert code == 0  # GPU 0 takes work (one process at a time): GPU 1's fault is a warning beside it
    assert findings(report, "gpu-exclusive-process")[0]["gpus"] == [0]
    assert findings(report, "gpu-compute-prohibited")[0]["severity"] == "warning"
    assert findings(report, "gpu-compute-prohibited")[0]["fix"] == "sudo nvidia-smi -c DEFAULT -i 1"


@pytest.mark.parametrize(("p2p", "said"), [(1, True), (0, False)], ids=["without-p2p", "with-p2p"])
def test_two_gpus_without_peer_access_are_named(host: SimHost, p2p: int, said: bool) -> None:
    _, report = doctor(host, [h100(0), h100(1)], pairs={(0, 1): (30, p2p, p2p, 5)})
    assert report["environment"]["driver"]["pairs"] == [
        {"first": 0, "second": 1, "topology": 30, "p2p_read": p2p, "p2p_write": p2p, "p2p_nvlink": 5}
    ]
    assert bool(findings(report, "gpu-no-peer-access")) is said


def test_sixteen_gpus_have_every_pair_read(host: SimHost) -> None:
    _, report = doctor(host, [h100(index, nvlinks=18) for index in range(16)])
    driver = report["environment"]["driver"]
    assert len(driver["gpus"]) == 16
    assert [(pair["first"], pair["second"]) for pair in driver["pairs"]] == [
        (first, second) for first in range(16) for second in range(first + 1, 16)
    ]
    assert {pair["p2p_nvlink"] for pair in driver["pairs"]} == {0}  # NVLink on every GPU: OK
    assert {gpu["health"]["nvlinks_active"] for gpu in driver["gpus"]} == {18}
    assert not [f for f in report["findings"] if f["code"].startswith("gpu-")]


# The session policy and the marker (issue 32, item 3) ----------------------------------------------------------

HEALTH_SUITE = {
    "test_health.py": """
        import os
        import pytest

        @pytest.mark.requires_gpu(healthy=True)
        def test_on_a_healthy_gpu(gpu):
            with open(os.environ["RESULTS"], "a") as out:
                out.write(f"{os.environ.get('PYTEST_XDIST_WORKER', 'main')} {gpu.index}\\n")
    """,
}


def ecc_on_gpu_1(host: SimHost) -> None:
    host.add_driver([h100(0), h100(1, ecc_volatile=2)], version="580.95.05", cuda_version=13000)
    host.add_stack("usr/local/cuda-13.0/lib64", 13000)


def test_gpu_health_fail_stops_the_run_before_its_tests_naming_gpu_1(host: SimHost) -> None:
    ecc_on_gpu_1(host)
    results = host.root / "results.txt"
    done = host.pytest("--gpu-health=fail", files=HEALTH_SUITE, extra_env={"RESULTS": str(results)})
    assert done.returncode == 1, done.stdout + done.stderr
    assert not results.exists()  # no test ran
    said = [text for text in (done.stdout + done.stderr).splitlines() if "--gpu-health=fail" in text]
    assert said, done.stdout + done.stderr
    assert "GPU 1" in said[0]
    assert "2 uncorrectable ECC errors since the driver loaded" in said[0]
    assert "GPU 0" not in said[0]


@pytest.mark.parametrize(
    ("how", "environ"),
    [(("-o", "gpu_health=fail"), {}), ((), {"PYTEST_CUDNN_GPU_HEALTH": "fail"})],
    ids=["ini", "environment"],
)
def test_gpu_health_is_set_by_ini_and_environment_too(
    host: SimHost, how: tuple[str, ...], environ: dict[str, str]
) -> None:
    ecc_on_gpu_1(host)
    extra = {"RESULTS": str(host.root / "results.txt"), **environ}
    done = host.pytest(*how, files=HEALTH_SUITE, extra_env=extra)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "--gpu-health=fail: " in done.stdout + done.stderr


def test_a_bad_gpu_health_value_names_where_it_came_from(host: SimHost) -> None:
    ecc_on_gpu_1(host)
    done = host.pytest(files=HEALTH_SUITE, extra_env={"PYTEST_CUDNN_GPU_HEALTH": "strict"})
    assert done.returncode == 4
    assert "PYTEST_CUDNN_GPU_HEALTH='strict': expected off, warn or fail" in done.stderr


def test_by_default_the_header_says_it_and_healthy_tests_skip_on_gpu_1_under_xdist(host: SimHost) -> None:
    ecc_on_gpu_1(host)
    results = host.root / "results.txt"
    # --dist each: the test runs once on each worker, the one given GPU 0 and the one given GPU 1.
    done = host.pytest(
        "-p", "xdist", "-n", "2", "--dist", "each", files=HEALTH_SUITE, extra_env={"RESULTS": str(results)}
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "pytest-cudnn: unhealthy GPU 1" in output
    [ran] = results.read_text().splitlines()  # once: on the worker given GPU 0
    assert ran.split()[1] == "0"
    assert "1 passed, 1 skipped" in output
    assert "requires 1 GPU, healthy; found GPU 1" in output


def test_gpu_health_off_says_nothing_in_the_header(host: SimHost) -> None:
    ecc_on_gpu_1(host)
    done = host.pytest("--gpu-health=off", files=HEALTH_SUITE, extra_env={"RESULTS": str(host.root / "r.txt")})
    assert "unhealthy" not in done.stdout


# pytest-xdist and a GPU that takes one process (issue 32, item 3) ----------------------------------------------

WORKER_SUITE = {
    "test_workers.py": """
        import os
        import pytest

        @pytest.mark.parametrize("n", range(6))
        def test_on_my_gpu(gpu, n):
            with open(os.environ["RESULTS"], "a") as out:
                out.write(f"{os.environ['PYTEST_XDIST_WORKER']} {gpu.index}\\n")
    """,
}


def workers_run(host: SimHost, workers: int) -> tuple[dict[str, set[int]], str]:
    results = host.root / "results.txt"
    results.unlink(missing_ok=True)
    done = host.pytest(
        "-p", "xdist", "-n", str(workers), "--dist", "each", files=WORKER_SUITE, extra_env={"RESULTS": str(results)}
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    seen: dict[str, set[int]] = {}
    for entry in results.read_text().splitlines() if results.exists() else ():
        worker, index = entry.split()
        seen.setdefault(worker, set()).add(int(index))
    return seen, output


def test_an_exclusive_process_gpu_is_never_given_to_two_workers(host: SimHost) -> None:
    host.add_driver([h100(0, compute_mode=3), h100(1)], version="580.95.05", cuda_version=13000)
    host.add_stack("usr/local/cuda-13.0/lib64", 13000)
    seen, output = workers_run(host, 3)
    # Round-robin would give gw2 GPU 0 again, beside gw0: the second process on it would fail.
    assert seen == {"gw0": {0}, "gw1": {1}, "gw2": {1}}, output


def test_a_worker_left_without_a_gpu_that_takes_it_skips_its_gpu_tests(host: SimHost) -> None:
    host.add_driver([h100(0, compute_mode=3)], version="580.95.05", cuda_version=13000)
    host.add_stack("usr/local/cuda-13.0/lib64", 13000)
    seen, output = workers_run(host, 2)
    assert seen == {"gw0": {0}}, output
    assert "gw1: no GPU, GPU 0 in compute mode EXCLUSIVE_PROCESS and held by another worker" in output
    assert "6 passed, 6 skipped" in output


PAIR_SUITE = {
    "test_pairs.py": """
        import os
        import pytest

        @pytest.mark.requires_gpu(count=2, peer_access=True)
        def test_peer_copy(gpu):
            with open(os.environ["RESULTS"], "a") as out:
                out.write(f"{os.environ['PYTEST_XDIST_WORKER']} {os.environ['CUDA_VISIBLE_DEVICES']}\\n")
    """,
}


def test_xdist_keeps_gpus_that_reach_each_other_together(host: SimHost) -> None:
    # Four GPUs where only 0-2 and 1-3 have P2P (two bridged pairs): round-robin would give gw0 GPUs 0 and 1, which
    # cannot reach each other, and the peer-access test would skip on both workers.
    gpus = [h100(index) for index in range(4)]
    closed, bridged = (30, 1, 1, 5), (10, 0, 0, 5)
    pairs = {(0, 1): closed, (0, 2): bridged, (0, 3): closed, (1, 2): closed, (1, 3): bridged, (2, 3): closed}
    host.add_driver(gpus, version="580.95.05", cuda_version=13000, pairs=pairs)
    host.add_stack("usr/local/cuda-13.0/lib64", 13000)
    results = host.root / "results.txt"
    done = host.pytest(
        "-p", "xdist", "-n", "2", "--dist", "each", "--gpus-per-worker", "2",
        files=PAIR_SUITE, extra_env={"RESULTS": str(results)},
    )  # fmt: skip
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "2 passed" in output, output
    given = dict(entry.split() for entry in results.read_text().splitlines())
    assert given == {"gw0": f"{gpus[0].uuid},{gpus[2].uuid}", "gw1": f"{gpus[1].uuid},{gpus[3].uuid}"}


def test_workers_told_to_share_an_exclusive_gpu_are_warned_and_a_gate_stops_them(host: SimHost) -> None:
    # --no-gpu-assign: every worker sees GPU 0, which takes one process at a time.
    host.add_driver([h100(0, compute_mode=3)], version="580.95.05", cuda_version=13000)
    host.add_stack("usr/local/cuda-13.0/lib64", 13000)
    extra = {"RESULTS": str(host.root / "results.txt")}
    warned = host.pytest("-p", "xdist", "-n", "2", "--no-gpu-assign", files=WORKER_SUITE, extra_env=extra)
    assert "2 xdist workers share it (--no-gpu-assign): all but the first to use it fail" in warned.stdout
    gated = host.pytest(
        "-p", "xdist", "-n", "2", "--no-gpu-assign", "--gpu-health=fail", files=WORKER_SUITE, extra_env=extra
    )
    assert gated.returncode == 1
    assert "--gpu-health=fail: GPU 0" in gated.stdout + gated.stderr


def test_a_gpu_without_ecc_or_nvlink_is_not_supported_there_not_failing(host: SimHost) -> None:
    # A GeForce: NVML answers NOT_SUPPORTED for ECC, page retirement, row remapping and NVLink; none is an error.
    geforce = SimGpu(
        "NVIDIA GeForce RTX 4090", "GPU-40900000-0000-0000-0000-000000000000", "00000000:01:00.0", (8, 9),
        mig_mode=-1, ecc=-1, persistence=0,
    )  # fmt: skip
    _, report = doctor(host, [geforce])
    [gpu] = report["environment"]["driver"]["gpus"]
    assert gpu["error"] is None
    health = gpu["health"]
    assert (health["ecc"], health["ecc_uncorrected_volatile"], health["nvlinks_active"]) == (None, None, None)
    assert set(health["unsupported"]) == {
        "ecc",
        "ecc_uncorrected_volatile",
        "ecc_uncorrected_aggregate",
        "retired_pages_pending",
        "remapped_rows",
        "nvlinks_active",
    }
    assert [f["code"] for f in report["findings"] if f["code"].startswith("gpu-")] == ["gpu-persistence-off"]
