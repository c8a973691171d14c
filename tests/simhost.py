"""Simulated GPU hosts: small C stand-ins for the NVIDIA libraries, compiled with gcc during the test session.

A :class:`SimHost` is a folder tree that looks like a machine's GPU stack: a driver folder with
libnvidia-ml.so.1 and libcuda.so.1, CUDA runtimes and cuDNN copies wherever a test plants them, and a
site-packages with TensorFlow's files. :meth:`SimHost.run` starts ``python -m pytest_cudnn`` (or pytest) in a
child process whose loader path is set to those folders, so the product's real discovery, loading and
isolation code runs end to end. Nothing here is imported by the product: fakes live only in tests/.

The stand-ins follow the behaviour measured on the real libraries (docs/build-facts.md, "Stand-in fidelity"):
* NVML: pynvml loads only ``libnvidia-ml.so.1``; versioned entry points (_v2, _v3); error codes 9/12/18.
* libcudart: cudaDriverGetVersion gives 0 when no libcuda.so.1 loads; cudaGetDeviceCount then answers 35,
  and 100 when the driver has no device; the count is written only on success.
* cuDNN: versions encoded per major (7605, 8907, 90100); a split front library aborts on its first call when
  a sub-library is missing; cudnnCreate without a device fails with NOT_INITIALIZED (1 in 8, 1001 in 9).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import shlex
import shutil
import struct
import subprocess
import sys
import textwrap
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_cudnn.environment import Environment

CUDNN_SUBLIBRARIES = {
    8: ("ops_infer", "ops_train", "cnn_infer", "cnn_train", "adv_infer", "adv_train"),
    9: ("graph", "engines_precompiled", "engines_runtime_compiled", "heuristic", "ops", "cnn", "adv"),
}


# pytest in a child process, as the tests start it: without the cache (nothing written into the suites' folders)
# and without Hypothesis' plugin, which imports much of Hypothesis in every run's terminal summary, where pytest
# assertion-rewrites it (an entry-point plugin's whole distribution is rewritten) without keeping the result
# (PYTHONDONTWRITEBYTECODE, set for every child here): about 0.5 s of CPU in each pytest process, the xdist
# controller's and every worker's, of suites that have no Hypothesis test. Workers inherit both from the command line.
PYTEST = (sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:hypothesispytest")


_GCC_SHARED = ("gcc", "-shared", "-fPIC", "-O0")


class Compiler:
    """gcc with a cache keyed by source and flags: a stand-in compiled once serves every test."""

    def __init__(self, cache: Path) -> None:
        self.cache = cache
        cache.mkdir(parents=True, exist_ok=True)

    def shared_library(self, source: str, soname: str, destination: Path, libs: Sequence[str] = ("-ldl",)) -> Path:
        built = self.compile(soname, _GCC_SHARED, source, ".c", [f"-Wl,-soname,{soname}", *libs])
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, destination)
        return destination

    def compile(
        self, name: str, argv: Sequence[str], source: str, suffix: str = ".c", after: Sequence[str] = ()
    ) -> Path:
        """``argv`` (a compiler and its flags; -o and the source file are added, then ``after``: libraries to
        link) run on ``source`` once per session per input. The returned path lies in the cache, named ``name``:
        copy it where a test needs it. A build cut short is never taken for a finished one."""
        key = hashlib.sha256("\0".join((source, name, suffix, *argv, "--after--", *after)).encode()).hexdigest()[:16]
        built = self.cache / "compiled" / key / name
        built.parent.mkdir(parents=True, exist_ok=True)
        with self._building(built) as needed:
            if needed:
                source_file = built.parent / f"source{suffix}"
                source_file.write_text(source)
                partial = built.parent / f".{name}.partial"
                done = subprocess.run(
                    [*argv, "-o", str(partial), str(source_file), *after], capture_output=True, text=True, check=False
                )
                if done.returncode != 0:
                    raise RuntimeError(
                        f"{' '.join(argv)} failed on {name} ({source_file}):\n{done.stdout}{done.stderr}"
                    )
                partial.rename(built)
        return built

    @contextlib.contextmanager
    def _building(self, built: Path) -> Iterator[bool]:
        """Held while ``built`` is made, and says whether it still has to be: the pytest-xdist workers of a run
        share one cache (see the ``compiler`` fixture), and each file is built by one of them while the others
        wait (flock(2): released when the file is closed, even by a worker that dies)."""
        with open(built.with_name(f".{built.name}.lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            yield not built.exists()

    def build(self, source: str, name: str, flags: Sequence[str] = ()) -> Path:
        """A shared library built from ``source`` with extra gcc ``flags`` (soname, rpath, -L, -l), once per
        session (see :meth:`compile`)."""
        return self.compile(name, _GCC_SHARED, source, ".c", after=flags)

    def empty_library(self, soname: str, destination: Path) -> Path:
        """A library with nothing but its soname (and one symbol, so that it is a valid object)."""
        return self.shared_library(_empty_source(soname), soname, destination, libs=())

    def link_against(self, sonames: Sequence[str]) -> list[str]:
        """gcc flags that make a library need (DT_NEEDED) each of ``sonames``: empty stand-ins with those sonames,
        linked where the cache built them (each in a folder of its own, never copied: the xdist workers of a run
        share the cache, and a copy being written is half a library to another worker's link)."""
        if not sonames:
            return []
        flags = ["-Wl,--no-as-needed"]
        for soname in sonames:
            built = self.compile(soname, _GCC_SHARED, _empty_source(soname), ".c", [f"-Wl,-soname,{soname}"])
            flags += [f"-L{built.parent}", f"-l:{soname}"]
        return flags


def _empty_source(soname: str) -> str:
    """A library with nothing but one symbol, so that it is a valid object."""
    return f"int {_c_identifier(soname)}_present = 1;\n"


def _c_identifier(text: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in text)


def _c_string(text: str) -> str:
    return json.dumps(text)  # a JSON string literal is a valid C string literal for ASCII text


@dataclass(frozen=True)
class SimMig:
    """One MIG device of a partitioned stand-in GPU: ``slot`` is its index under the parent (NVML's MIG device
    handle index; slots may be sparse), ``gpu_instance``/``compute_instance`` its instance ids."""

    uuid: str = "MIG-11111111-1111-1111-1111-111111111111"
    name: str = "NVIDIA A100-SXM4-40GB MIG 1g.5gb"
    slot: int = 0
    gpu_instance: int = 7
    compute_instance: int = 0
    gpu_slices: int = 1
    compute_slices: int = 1
    multiprocessors: int = 14
    memory_total: int = 4864 * 2**20
    memory_free: int = 4800 * 2**20


# GPUs that support MIG, by a part of their name (NVIDIA Multi-Instance GPU User Guide, "Supported GPUs":
# https://docs.nvidia.com/datacenter/tesla/mig-user-guide/supported-gpus.html). Others answer NVML's MIG calls
# NVML_ERROR_NOT_SUPPORTED.
MIG_CAPABLE = ("A100", "A30", "H100", "H200")


@dataclass
class SimGpu:
    name: str = "NVIDIA A100-SXM4-40GB"
    uuid: str = "GPU-00000000-0000-0000-0000-000000000000"
    pci_bus_id: str = "00000000:00:04.0"
    compute_capability: tuple[int, int] = (8, 0)
    memory_total: int = 40 * 1024**3
    memory_free: int = 39 * 1024**3
    # -1: no MIG (NVML_ERROR_NOT_SUPPORTED: a GPU before Ampere, a consumer card); 0 MIG-capable, disabled;
    # 1 enabled; None: by the name (MIG_CAPABLE), disabled where it can be enabled.
    mig_mode: int | None = None
    mig: Sequence[SimMig] = ()  # its MIG devices, with mig_mode=1
    # Its state (issue 32), as NVML reports it; -1 in a field NVML answers NOT_SUPPORTED (3) for it.
    compute_mode: int = 0  # nvmlComputeMode_t: 0 DEFAULT, 2 PROHIBITED, 3 EXCLUSIVE_PROCESS
    persistence: int = 1
    ecc: int = 1  # -1: a GPU without ECC (a GeForce)
    ecc_volatile: int = 0  # uncorrected errors since the driver loaded
    ecc_aggregate: int = 0  # uncorrected errors over the device's life
    remap_pending: int = 0  # row remapping (Ampere and newer; NOT_SUPPORTED before, and with MIG on)
    remap_failure: int = 0
    retired_pending: int = 0  # page retirement (before Ampere; NOT_SUPPORTED from Ampere, which remaps rows)
    clocks_reasons: int = 0x1  # nvmlClocksEventReason*: 0x1 GPU idle
    temperature: int = 35
    slowdown_temperature: int = 87
    pcie: tuple[int, int, int, int] = (5, 5, 16, 16)  # generation, its maximum, width, its maximum
    nvlinks: int = -1  # active NVLink links; -1 no NVLink (a PCIe card)

    @property
    def mig_state(self) -> int:
        """``mig_mode``, with None decided by what the GPU is."""
        if self.mig_mode is not None:
            return self.mig_mode
        return 0 if any(part in self.name for part in MIG_CAPABLE) else -1


# nvmlErrorString's texts, as driver 580.159.04 gave them on the lent H100 (tests/data/real-gpu/
# h100-calls-extra.jsonl); every other code is "Unknown Error".
NVML_ERROR_TEXTS = {
    0: "Success",
    1: "Uninitialized",
    2: "Invalid Argument",
    3: "Not Supported",
    4: "Insufficient Permissions",
    5: "Already Initialized",
    6: "Not Found",
    7: "Insufficient Size",
    8: "Insufficient External Power",
    9: "Driver Not Loaded",
    10: "Timeout",
    11: "Interrupt Request Issue",
    12: "NVML Shared Library Not Found",
    13: "Function Not Found",
    14: "Corrupted infoROM",
    15: "GPU is lost",
    16: "GPU requires reset",
    17: "GPU access blocked by the operating system",
    18: "Driver/library version mismatch",
    19: "In use by another client",
    20: "Insufficient Memory",
    21: "No data",
    22: "vGPU ECC not supported",
    23: "Insufficient Resources",
    24: "Invalid Frequency",
    25: "Argument version mismatch",
    26: "Requested functionality has been deprecated",
    27: "System is not in ready state",
    28: "No supported GPUs were found",
}


def _mig_rows(gpus: Sequence[SimGpu]) -> str:
    rows = [
        f"  {{{parent}, {m.slot}, {_c_string(m.uuid)}, {_c_string(m.name)}, {m.gpu_instance}, {m.compute_instance}, "
        f"{m.gpu_slices}, {m.compute_slices}, {m.multiprocessors}, {m.memory_total}ULL, {m.memory_free}ULL}}"
        for parent, gpu in enumerate(gpus)
        for m in gpu.mig
    ]
    return ",\n".join(rows) or '  {-1, 0, "", "", 0, 0, 0, 0, 0, 0ULL, 0ULL}'


def nvml_source(
    gpus: Sequence[SimGpu],
    driver: str = "535.104.05",
    cuda_version: int = 12020,
    init_error: int = 0,
    fail_from_index: int | None = None,
    pairs: Mapping[tuple[int, int], tuple[int, int, int, int]] | None = None,
) -> str:
    """libnvidia-ml.so.1 stand-in. ``pairs``: (topology level, P2P read, write, NVLink status) of GPUs (i, j),
    i < j; a pair not given is two GPUs under one host bridge (30) whose P2P over PCIe is OK and over NVLink
    NOT_SUPPORTED (5), or OK where both have NVLink. ``fail_from_index``: every device call from that index on fails
    (code 15, GPU is lost), as a device dropping off the bus half-way through a listing would.

    Faults a test switches on mid-run, after the session-start probe, by writing one word into the file
    ``$SIMHOST_NVML_FAULT``: ``hang-init`` (nvmlInit never returns), ``hang-memory`` (nvmlDeviceGetMemoryInfo
    never returns), ``lost-memory`` (nvmlDeviceGetMemoryInfo answers 15, GPU is lost). A hang first appends its
    process id to ``$SIMHOST_HANG_LOG``, then waits in pause(2) for ever, as NVML does on a GPU that fell off the
    bus: each signal ends one pause() and the next begins.

    MIG: a GPU with ``mig_mode=1`` answers nvmlDeviceGetMigMode, nvmlDeviceGetMaxMigDeviceCount (7, an A100's or
    H100's most) and nvmlDeviceGetMigDeviceHandleByIndex (NVML_ERROR_NOT_FOUND, 6, for an empty slot); a MIG device
    handle answers the name, UUID, memory, instance id and attribute calls, and its parent's capability and PCI
    calls. A handle is ``i + 1`` for GPU i and ``0x1000 + k`` for the k-th MIG device of the table. A MIG-capable
    GPU with MIG off (``mig_mode=0``) answers as the lent H100 did, a GPU without MIG (-1) NOT_SUPPORTED throughout.

    Live state, for tests that change the machine during a run: each call that reads memory or processes reads
    ``$SIMHOST_NVML_STATE`` when it is set, a file of lines ``free UUID BYTES`` (the device's free memory now) and
    ``proc UUID PID BYTES NAME`` (a compute process on that device, as nvmlDeviceGetComputeRunningProcesses_v3
    and nvmlSystemGetProcessName report it). The live processes that made a context through the libcuda
    stand-in (``$SIMHOST_CONTEXT_LOG``) are compute processes of their GPU too, named by their argv[0].

    The answers follow NVIDIA's own, call by call, where the lent H100 was asked (tests/test_vendor_calls.py):
    nvmlInit/nvmlShutdown counted, calls without an init in force UNINITIALIZED (1), strings that do not fit
    INSUFFICIENT_SIZE (7), nvmlErrorString's texts."""
    rows = ",\n".join(
        f"  {{{_c_string(g.name)}, {_c_string(g.uuid)}, {_c_string(g.pci_bus_id)}, {g.compute_capability[0]}, "
        f"{g.compute_capability[1]}, {g.memory_total}ULL, {g.memory_free}ULL, {g.mig_state}, {g.compute_mode}, "
        f"{g.persistence}, {g.ecc}, {g.ecc_volatile}ULL, {g.ecc_aggregate}ULL, {g.remap_pending}, {g.remap_failure}, "
        f"{g.retired_pending}, {g.clocks_reasons}ULL, {g.temperature}, {g.slowdown_temperature}, "
        f"{', '.join(map(str, g.pcie))}, {g.nvlinks}}}"
        for g in gpus
    )
    links = ",\n".join(
        f"  {{{first}, {second}, {', '.join(map(str, link))}}}"
        for (first, second), link in sorted((pairs or {}).items())
    )
    fail = -1 if fail_from_index is None else fail_from_index
    error_texts = "\n".join(f"    case {code}: return {_c_string(text)};" for code, text in NVML_ERROR_TEXTS.items())
    return _FAULTS + textwrap.dedent(
        """\
        #include <string.h>
        #include <stdio.h>
        #include <stdlib.h>
        typedef struct { const char *name, *uuid, *bus; int major, minor; unsigned long long total, free; int mig;
                         int compute_mode, persistence, ecc; unsigned long long ecc_volatile, ecc_aggregate;
                         int remap_pending, remap_failure, retired_pending; unsigned long long reasons;
                         int temperature, slowdown, gen, gen_max, width, width_max, nvlinks; } gpu_t;
        static gpu_t gpus[] = {
        %(rows)s
        };
        typedef struct { int parent; unsigned slot; const char *uuid, *name; unsigned gi, ci, gslices, cslices, sms;
                         unsigned long long total, free; } mig_t;
        static mig_t migs[] = {
        %(migs)s
        };
        static const unsigned count = %(count)d, mig_count = %(mig_count)d;
        static const int fail_from = %(fail)d;
        typedef struct { char busIdLegacy[16]; unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
                         char busId[32]; } pci_t;
        typedef struct { unsigned long long total, free, used; } memory_t;
        typedef struct { unsigned sms, ce, dec, enc, jpeg, ofa, gslices, cslices; unsigned long long mem_mb; } attr_t;
        typedef struct { unsigned pid; unsigned long long used; unsigned gi, ci; } process_t;
        static int bad(unsigned i) { return i >= count || (fail_from >= 0 && (int)i >= fail_from); }
        /* A handle names GPU i (i + 1) or MIG device k of the table (0x1000 + k). */
        static int mig_of(void *h) {
          long v = (long)h - 0x1000; return v >= 0 && v < (long)mig_count ? (int)v : -1; }
        static int index_of(void *h) {
          int k = mig_of(h); return k >= 0 ? migs[k].parent : (int)((unsigned long)h) - 1; }
        static const char *uuid_of(void *h) {
          int k = mig_of(h); return k >= 0 ? migs[k].uuid : gpus[index_of(h)].uuid; }
        /* $SIMHOST_NVML_STATE: "free UUID BYTES" and "proc UUID PID BYTES NAME" lines, read on every call. */
        static FILE *state(void) { const char *p = getenv("SIMHOST_NVML_STATE"); return p ? fopen(p, "r") : 0; }
        static unsigned long long free_now(void *h, unsigned long long probed) {
          char kind[8], uuid[128]; unsigned long long value; FILE *f = state(); if (!f) return probed;
          while (fscanf(f, "%%7s %%127s %%llu%%*[^\\n]", kind, uuid, &value) == 3)
            if (!strcmp(kind, "free") && !strcmp(uuid, uuid_of(h))) probed = value;
          fclose(f); return probed; }
        typedef struct { int first, second, topology, read, write, nvlink; } pair_t;
        static pair_t pairs[] = {
        %(links)s
        };
        static const unsigned pair_count = %(pair_count)d;
        /* nvmlInit and nvmlShutdown count: each shutdown undoes one init, one too many answers
           NVML_ERROR_UNINITIALIZED (1), and so does every other call while no init is in force (measured on the lent
           H100: tests/data/real-gpu/h100-calls-extra.jsonl). */
        static int inits;
        #define READY() do { if (inits <= 0) return 1; } while (0)
        static int init(void) { if (%(init_error)d) return %(init_error)d; inits++; return 0; }
        /* Each initialisation is appended to $SIMHOST_NVML_LOG, so tests can count probes. */
        int nvmlInitWithFlags(unsigned flags) {
          const char *path = getenv("SIMHOST_NVML_LOG"); FILE *f;
          if (path && (f = fopen(path, "a"))) { fprintf(f, "init\\n"); fclose(f); }
          if (fault("SIMHOST_NVML_FAULT", "hang-init")) hang();
          return init(); }
        int nvmlInit_v2(void) { if (fault("SIMHOST_NVML_FAULT", "hang-init")) hang(); return init(); }
        int nvmlShutdown(void) { if (inits <= 0) return 1; inits--; return 0; }
        const char *nvmlErrorString(int code) {
          switch (code) {
        %(error_texts)s
            default: return "Unknown Error";
          }
        }
        /* A string answer: NVML_ERROR_INSUFFICIENT_SIZE (7) when it does not fit with its NUL
           (measured: a driver version of 10 characters answers 7 in 10 bytes, 0 in 11). */
        static int text_out(char *out, unsigned size, const char *text) {
          size_t length = strlen(text); if (!out) return 2; if (length + 1 > size) return 7;
          memcpy(out, text, length + 1); return 0; }
        int nvmlSystemGetDriverVersion(char *out, unsigned size) { READY(); return text_out(out, size, %(driver)s); }
        /* The NVML version is the CUDA major before the driver's version ("13.580.159.04", measured). */
        int nvmlSystemGetNVMLVersion(char *out, unsigned size) {
          READY(); return text_out(out, size, "%(cuda_major)d." %(driver)s); }
        int nvmlSystemGetCudaDriverVersion(int *v) { READY(); *v = %(cuda)d; return 0; }
        int nvmlSystemGetCudaDriverVersion_v2(int *v) { READY(); *v = %(cuda)d; return 0; }
        int nvmlDeviceGetCount_v2(unsigned *n) { READY(); *n = count; return 0; }
        /* An unknown UUID is NVML_ERROR_NOT_FOUND (6), an index past the last GPU NVML_ERROR_INVALID_ARGUMENT (2)
           (both measured); a GPU that fell off the bus is lost (15). */
        int nvmlDeviceGetHandleByUUID(const char *uuid, void **h) {
          READY();
          for (unsigned i = 0; i < count; i++)
            if (!strcmp(uuid, gpus[i].uuid)) {
              if (bad(i)) return 15; *h = (void *)(unsigned long)(i + 1); return 0; }
          for (unsigned k = 0; k < mig_count; k++)
            if (migs[k].parent >= 0 && !strcmp(uuid, migs[k].uuid)) {
              if (bad(migs[k].parent)) return 15; *h = (void *)(unsigned long)(0x1000 + k); return 0; }
          return 6; }
        int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **h) {
          READY(); if (i >= count) return 2; if (bad(i)) return 15; *h = (void *)(unsigned long)(i + 1); return 0; }
        int nvmlDeviceGetName(void *h, char *out, unsigned size) {
          int i = index_of(h), k = mig_of(h); READY(); if (bad(i)) return 15;
          return text_out(out, size, k >= 0 ? migs[k].name : gpus[i].name); }
        int nvmlDeviceGetUUID(void *h, char *out, unsigned size) {
          int i = index_of(h); READY(); if (bad(i)) return 15; return text_out(out, size, uuid_of(h)); }
        /* busIdLegacy is the same id with a 4-digit domain (nvml.h, NVML_DEVICE_PCI_BUS_ID_LEGACY_FMT; measured
           "0000:00:06.0" beside busId "00000000:00:06.0"). */
        int nvmlDeviceGetPciInfo_v3(void *h, pci_t *p) {
          int i = index_of(h); const char *bus, *colon; size_t domain; READY(); if (bad(i)) return 15;
          bus = gpus[i].bus; colon = strchr(bus, ':'); domain = colon ? (size_t)(colon - bus) : 0;
          memset(p, 0, sizeof *p); snprintf(p->busId, sizeof p->busId, "%%s", bus);
          snprintf(p->busIdLegacy, sizeof p->busIdLegacy, "%%s", bus + (domain > 4 ? domain - 4 : 0));
          sscanf(bus, "%%x:%%x:%%x", &p->domain, &p->bus, &p->device); return 0; }
        int nvmlDeviceGetCudaComputeCapability(void *h, int *major, int *minor) {
          int i = index_of(h); READY(); if (bad(i)) return 15;
          *major = gpus[i].major; *minor = gpus[i].minor; return 0; }
        int nvmlDeviceGetMemoryInfo(void *h, memory_t *m) {
          int i = index_of(h), k = mig_of(h); READY(); if (bad(i)) return 15;
          if (fault("SIMHOST_NVML_FAULT", "hang-memory")) hang();
          if (fault("SIMHOST_NVML_FAULT", "lost-memory")) return 15;
          m->total = k >= 0 ? migs[k].total : gpus[i].total;
          m->free = free_now(h, k >= 0 ? migs[k].free : gpus[i].free); m->used = m->total - m->free; return 0; }
        /* MIG (gpu_t.mig): -1 a GPU without MIG, which answers every MIG question NVML_ERROR_NOT_SUPPORTED (3);
           0 a MIG-capable GPU with MIG off, measured on the H100: mode 0/0, at most 0 MIG devices, none at any
           index (6), and a whole GPU's instance ids are NVML_ERROR_INVALID_ARGUMENT (2); 1 MIG on. */
        int nvmlDeviceGetMigMode(void *h, unsigned *current, unsigned *pending) {
          int i = index_of(h); READY(); if (bad(i)) return 15; if (mig_of(h) >= 0 || gpus[i].mig < 0) return 3;
          *current = *pending = (unsigned)gpus[i].mig; return 0; }
        int nvmlDeviceGetMaxMigDeviceCount(void *h, unsigned *n) {
          int i = index_of(h); READY(); if (bad(i)) return 15; if (gpus[i].mig < 0) return 3;
          *n = gpus[i].mig == 1 ? 7 : 0; return 0; }
        int nvmlDeviceGetMigDeviceHandleByIndex(void *h, unsigned slot, void **out) {
          int i = index_of(h); READY(); if (bad(i)) return 15; if (gpus[i].mig < 0) return 3;
          for (unsigned k = 0; gpus[i].mig == 1 && k < mig_count; k++)
            if (migs[k].parent == i && migs[k].slot == slot) { *out = (void *)(unsigned long)(0x1000 + k); return 0; }
          return 6; }
        static int whole_gpu(void *h) { int i = index_of(h); return bad(i) ? 15 : gpus[i].mig < 0 ? 3 : 2; }
        int nvmlDeviceGetGpuInstanceId(void *h, unsigned *id) {
          int k = mig_of(h); READY(); if (k < 0) return whole_gpu(h); *id = migs[k].gi; return 0; }
        int nvmlDeviceGetComputeInstanceId(void *h, unsigned *id) {
          int k = mig_of(h); READY(); if (k < 0) return whole_gpu(h); *id = migs[k].ci; return 0; }
        int nvmlDeviceGetAttributes_v2(void *h, attr_t *a) {
          int k = mig_of(h); READY(); if (k < 0) return 3; memset(a, 0, sizeof *a);
          a->sms = migs[k].sms; a->gslices = migs[k].gslices; a->cslices = migs[k].cslices;
          a->mem_mb = migs[k].total >> 20; return 0; }
        /* A GPU's state (issue 32), as nvml.h documents each call: a field of -1 answers NOT_SUPPORTED (3). Row
           remapping is Ampere's and later's (NOT_SUPPORTED before, and with MIG on: nvml.h), page retirement is
           answered before Ampere only. A MIG device answers for its parent where nvml.h says nothing else. */
        #define WHOLE(i, h) do { READY(); if (bad(i)) return 15; } while (0)
        int nvmlDeviceGetComputeMode(void *h, unsigned *mode) {
          int i = index_of(h); WHOLE(i, h); *mode = (unsigned)gpus[i].compute_mode; return 0; }
        int nvmlDeviceGetPersistenceMode(void *h, unsigned *mode) {
          int i = index_of(h); WHOLE(i, h); if (gpus[i].persistence < 0) return 3;
          *mode = (unsigned)gpus[i].persistence; return 0; }
        int nvmlDeviceGetEccMode(void *h, unsigned *current, unsigned *pending) {
          int i = index_of(h); WHOLE(i, h); if (gpus[i].ecc < 0) return 3;
          *current = *pending = (unsigned)gpus[i].ecc; return 0; }
        int nvmlDeviceGetTotalEccErrors(void *h, int type, int counter, unsigned long long *n) {
          int i = index_of(h); WHOLE(i, h); if (gpus[i].ecc < 0) return 3;
          if ((type != 0 && type != 1) || (counter != 0 && counter != 1) || !n) return 2;
          *n = type == 0 ? 0ULL : counter == 0 ? gpus[i].ecc_volatile : gpus[i].ecc_aggregate; return 0; }
        int nvmlDeviceGetRetiredPagesPendingStatus(void *h, unsigned *pending) {
          int i = index_of(h); WHOLE(i, h); if (gpus[i].major >= 8 || gpus[i].ecc < 0) return 3;
          *pending = (unsigned)gpus[i].retired_pending; return 0; }
        int nvmlDeviceGetRemappedRows(void *h, unsigned *corr, unsigned *unc, unsigned *pending, unsigned *failure) {
          int i = index_of(h); WHOLE(i, h);
          if (gpus[i].major < 8 || gpus[i].ecc < 0 || gpus[i].mig == 1) return 3;
          *corr = 0; *unc = (unsigned)(gpus[i].remap_pending + gpus[i].remap_failure);
          *pending = (unsigned)gpus[i].remap_pending; *failure = (unsigned)gpus[i].remap_failure; return 0; }
        int nvmlDeviceGetCurrentClocksEventReasons(void *h, unsigned long long *reasons) {
          int i = index_of(h); WHOLE(i, h); *reasons = gpus[i].reasons; return 0; }
        int nvmlDeviceGetTemperature(void *h, int sensor, unsigned *t) {
          int i = index_of(h); WHOLE(i, h); if (sensor != 0) return 2; *t = (unsigned)gpus[i].temperature; return 0; }
        int nvmlDeviceGetTemperatureThreshold(void *h, int kind, unsigned *t) {
          int i = index_of(h); WHOLE(i, h); if (kind != 1) return 3; *t = (unsigned)gpus[i].slowdown; return 0; }
        int nvmlDeviceGetCurrPcieLinkGeneration(void *h, unsigned *v) {
          int i = index_of(h); WHOLE(i, h); *v = (unsigned)gpus[i].gen; return 0; }
        int nvmlDeviceGetMaxPcieLinkGeneration(void *h, unsigned *v) {
          int i = index_of(h); WHOLE(i, h); *v = (unsigned)gpus[i].gen_max; return 0; }
        int nvmlDeviceGetCurrPcieLinkWidth(void *h, unsigned *v) {
          int i = index_of(h); WHOLE(i, h); *v = (unsigned)gpus[i].width; return 0; }
        int nvmlDeviceGetMaxPcieLinkWidth(void *h, unsigned *v) {
          int i = index_of(h); WHOLE(i, h); *v = (unsigned)gpus[i].width_max; return 0; }
        /* Links 0 to 17 (NVML_NVLINK_MAX_LINKS 18): the first nvlinks active; a GPU without NVLink NOT_SUPPORTED. */
        int nvmlDeviceGetNvLinkState(void *h, unsigned link, unsigned *active) {
          int i = index_of(h); WHOLE(i, h); if (gpus[i].nvlinks < 0) return 3; if (link >= 18) return 2;
          *active = (int)link < gpus[i].nvlinks; return 0; }
        static const pair_t *pair_of(int a, int b) {
          for (unsigned k = 0; k < pair_count; k++)
            if ((pairs[k].first == a && pairs[k].second == b) || (pairs[k].first == b && pairs[k].second == a))
              return &pairs[k];
          return 0; }
        int nvmlDeviceGetTopologyCommonAncestor(void *h1, void *h2, int *level) {
          int a = index_of(h1), b = index_of(h2); const pair_t *p; READY(); if (bad(a) || bad(b)) return 15;
          if (a == b) return 2; p = pair_of(a, b); *level = p ? p->topology : 30; return 0; }
        int nvmlDeviceGetP2PStatus(void *h1, void *h2, int index, int *status) {
          int a = index_of(h1), b = index_of(h2); const pair_t *p; READY(); if (bad(a) || bad(b)) return 15;
          if (a == b || index < 0 || index > 4) return 2; p = pair_of(a, b);
          if (index == 2) *status = p ? p->nvlink : (gpus[a].nvlinks > 0 && gpus[b].nvlinks > 0 ? 0 : 5);
          else *status = p ? (index == 1 ? p->write : p->read) : 0;
          return 0; }
        /* The processes holding a CUDA context: the libcuda stand-in appends "PID DEVICE" to $SIMHOST_CONTEXT_LOG
           for each context it makes (the stand-in nvidia-smi lists the same); those still alive are listed. */
        static FILE *contexts(void) { const char *p = getenv("SIMHOST_CONTEXT_LOG"); return p ? fopen(p, "r") : 0; }
        static int alive(int pid) {
          char proc[32]; snprintf(proc, sizeof proc, "/proc/%%d", pid); return !access(proc, F_OK); }
        static int holds_context(unsigned want) {
          int pid, device, found = 0; FILE *f = contexts(); if (!f) return 0;
          while (fscanf(f, "%%d %%d", &pid, &device) == 2) found |= (unsigned)pid == want;
          fclose(f); return found && alive((int)want); }
        /* What a context costs on the device: the lent H100's answer for one primary context, driver 580.159.04. */
        #define CONTEXT_BYTES 543162368ULL
        static void listed(process_t *out, unsigned room, unsigned *found, unsigned pid, unsigned long long used,
                           unsigned gi, unsigned ci) {
          if (out && *found < room) { out[*found].pid = pid; out[*found].used = used; out[*found].gi = gi;
                                      out[*found].ci = ci; }
          (*found)++; }
        /* The compute processes on this device: those $SIMHOST_NVML_STATE lists, and on a whole GPU those holding a
           context on it. NVML_ERROR_INSUFFICIENT_SIZE (7) with the count needed when the buffer is too small or
           NULL (measured), the instance ids 0xFFFFFFFF on a whole GPU (measured). */
        int nvmlDeviceGetComputeRunningProcesses_v3(void *h, unsigned *n, process_t *out) {
          char kind[8], uuid[128]; unsigned pid, found = 0, room = *n, seen[256], seen_count = 0;
          unsigned long long used; FILE *f; int i = index_of(h), k = mig_of(h), holder, device;
          READY(); if (bad(i)) return 15;
          if ((f = state())) {
            while (fscanf(f, "%%7s %%127s", kind, uuid) == 2) {
              if (!strcmp(kind, "proc") && fscanf(f, "%%u %%llu", &pid, &used) == 2 && !strcmp(uuid, uuid_of(h)))
                listed(out, room, &found, pid, used, k >= 0 ? migs[k].gi : 0xFFFFFFFFu,
                       k >= 0 ? migs[k].ci : 0xFFFFFFFFu);
              fscanf(f, "%%*[^\\n]"); }
            fclose(f); }
          if (k < 0 && (f = contexts())) {
            while (fscanf(f, "%%d %%d", &holder, &device) == 2) {
              int again = 0;
              for (unsigned s = 0; s < seen_count; s++) again |= seen[s] == (unsigned)holder;
              if (device != i || again || seen_count == 256 || !alive(holder)) continue;
              seen[seen_count++] = (unsigned)holder;
              listed(out, room, &found, (unsigned)holder, CONTEXT_BYTES, 0xFFFFFFFFu, 0xFFFFFFFFu); }
            fclose(f); }
          *n = found; return found > room || (found && !out) ? 7 : 0; }
        /* A process's name: the one $SIMHOST_NVML_STATE gives it, or a context holder's argv[0] (measured: a holder
           started as "zz-argv0" is named so), cut to the buffer (measured: 0 and "zz-" in 4 bytes); 6 for others. */
        int nvmlSystemGetProcessName(unsigned want, char *out, unsigned size) {
          char kind[8], uuid[128], name[256], proc[64]; unsigned pid; unsigned long long used; FILE *f = state();
          size_t got;
          READY();
          if (f) {
            while (fscanf(f, "%%7s %%127s", kind, uuid) == 2) {
              if (!strcmp(kind, "proc") && fscanf(f, "%%u %%llu %%255s", &pid, &used, name) == 3 && pid == want) {
                fclose(f); snprintf(out, size, "%%s", name); return 0; }
              fscanf(f, "%%*[^\\n]"); }
            fclose(f); }
          snprintf(proc, sizeof proc, "/proc/%%u/cmdline", want);
          if (!holds_context(want) || !(f = fopen(proc, "r"))) return 6;
          got = fread(name, 1, sizeof name - 1, f); fclose(f); name[got] = 0;
          snprintf(out, size, "%%s", name); return 0; }
        """
    ) % {
        "rows": rows
        or '  {"", "", "", 0, 0, 0ULL, 0ULL, -1, 0, 0, 0, 0ULL, 0ULL, 0, 0, 0, 0ULL, 0, 0, 0, 0, 0, 0, -1}',
        "links": links or "  {-1, -1, 0, 0, 0, 0}",
        "pair_count": len(pairs or {}),
        "migs": _mig_rows(gpus),
        "count": len(gpus),
        "mig_count": sum(len(g.mig) for g in gpus),
        "fail": fail,
        "init_error": init_error,
        "driver": _c_string(driver),
        "cuda": cuda_version,
        "cuda_major": cuda_version // 1000,
        "error_texts": error_texts,
    }


def libcuda_source(version: int = 12020, devices: int = 1, init_status: int = 0) -> str:
    """libcuda.so.1 stand-in: the driver API calls cudart and cuDNN stand-ins ask for. Every other entry
    point the real runtime requests through cuGetProcAddress gets CUDA_ERROR_NOT_FOUND (500).

    Measured against the real libcudart.so.12 (12.9): a driver version below the runtime's gives status 35
    with that version reported; cuInit returning 100 (CUDA_ERROR_NO_DEVICE) gives status 100; a new enough
    driver that lacks the other entry points gives 36 (cudaErrorCallRequiresNewerDriver)."""
    return textwrap.dedent(
        f"""\
        #include <string.h>
        int cuDriverGetVersion(int *v) {{ *v = {version}; return 0; }}
        static int initialised;
        int cuInit(unsigned flags) {{ if (!{init_status}) initialised = 1; return {init_status}; }}
        int cuDeviceGetCount(int *n) {{ if ({init_status}) return 3; *n = {devices}; return 0; }}
        #include <stdio.h>
        #include <stdlib.h>
        #include <unistd.h>
        /* A context made on a device: its process id is appended to $SIMHOST_CONTEXT_LOG, where the stand-in
           nvidia-smi lists it among the compute processes (the real one lists every process holding a context). */
        static int context(void **ctx, int dev) {{
          const char *path = getenv("SIMHOST_CONTEXT_LOG"); FILE *f;
          if (dev < 0 || dev >= {devices}) return 101;
          if (path && (f = fopen(path, "a"))) {{ fprintf(f, "%d %d\\n", (int)getpid(), dev); fclose(f); }}
          *ctx = (void *)(long)(0x2000 + dev); return 0; }}
        /* Each device's primary context in this process, made by cuDevicePrimaryCtxRetain; read by
           cuDevicePrimaryCtxGetState, which (as every driver call) answers CUDA_ERROR_NOT_INITIALIZED (3) before
           cuInit and CUDA_ERROR_INVALID_DEVICE (101) for an ordinal out of range; with $SIMHOST_PRIMARY_STATE_HANG
           set it hangs. */
        static int primary[{devices} + 1];
        int cuDevicePrimaryCtxRetain(void **ctx, int dev) {{
          int s = {init_status} ? 3 : context(ctx, dev); if (!s) primary[dev] = 1; return s; }}
        int cuDevicePrimaryCtxGetState(int dev, unsigned *flags, int *active) {{
          if (getenv("SIMHOST_PRIMARY_STATE_HANG")) sleep(60);  /* a driver stuck on its lock */
          if (!initialised) return 3; if (dev < 0 || dev >= {devices}) return 101;
          *flags = 0; *active = primary[dev]; return 0; }}
        int cuCtxCreate_v2(void **ctx, unsigned flags, int dev) {{ return {init_status} ? 3 : context(ctx, dev); }}
        int cuGetProcAddress_v2(const char *, void **, int, unsigned long long, int *);
        int cuGetProcAddress(const char *symbol, void **pfn, int version, unsigned long long flags) {{
          /* The real runtime first asks for cuGetProcAddress itself (11.3 and 12.0 flavours), then for
             every entry point through it; without this answer it reports driver version 0. */
          if (!strcmp(symbol, "cuGetProcAddress")) {{
            *pfn = version >= 12000 ? (void *)cuGetProcAddress_v2 : (void *)cuGetProcAddress; return 0; }}
          if (!strcmp(symbol, "cuDriverGetVersion")) {{ *pfn = (void *)cuDriverGetVersion; return 0; }}
          if (!strcmp(symbol, "cuInit")) {{ *pfn = (void *)cuInit; return 0; }}
          if (!strcmp(symbol, "cuDeviceGetCount")) {{ *pfn = (void *)cuDeviceGetCount; return 0; }}
          *pfn = 0; return 500; }}
        int cuGetProcAddress_v2(const char *symbol, void **pfn, int version, unsigned long long flags, int *status) {{
          int r = cuGetProcAddress(symbol, pfn, version, flags); if (status) *status = r ? 1 : 0; return r; }}
        """
    )


_DRIVER_PROLOGUE = """\
#include <dlfcn.h>
typedef int (*int_fn)(int *);
typedef int (*init_fn)(unsigned);
static void *driver(void) { static void *h; if (!h) h = dlopen("libcuda.so.1", RTLD_NOW); return h; }
static int driver_version(void) {
  int v = 0; void *h = driver(); if (!h) return 0;
  int_fn f = (int_fn)dlsym(h, "cuDriverGetVersion"); if (f) f(&v); return v; }
/* cuInit's own failure is handed back (803, 804: a forward-compatibility libcuda refusing this system). */
static int driver_devices(int *n) {
  int s; void *h = driver(); if (!h) return -1;
  init_fn i = (init_fn)dlsym(h, "cuInit"); int_fn c = (int_fn)dlsym(h, "cuDeviceGetCount");
  if (!i || !c) return -2; if ((s = i(0)) != 0) return s; return c(n); }
/* The primary context of device 0, as the real cuDNN makes one when a handle is created. */
static void driver_context(void) {
  void *h = driver(), *ctx = 0; if (!h) return;
  int (*retain)(void **, int) = (int (*)(void **, int))dlsym(h, "cuDevicePrimaryCtxRetain");
  if (retain) retain(&ctx, 0); }
"""


_HANG_NOTE = """\
static void hang_note(void) {
  const char *path = getenv("SIMHOST_HANG_LOG"); FILE *f;
  if (path && (f = fopen(path, "a"))) { fprintf(f, "%d\\n", (int)getpid()); fclose(f); } }
"""

# Faults switched on by the first word of the file a variable names, read at each call (tests write it mid-run).
_FAULTS = (
    "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include <unistd.h>\n"
    + _HANG_NOTE
    + """\
static int fault(const char *variable, const char *what) {
  const char *path = getenv(variable); char word[32] = ""; FILE *f; int n;
  if (!path || !(f = fopen(path, "r"))) return 0;
  n = fscanf(f, "%31s", word); fclose(f); return n == 1 && !strcmp(word, what); }
static void hang(void) { hang_note(); for (;;) pause(); }
"""
)


def cudart_source(version: int, behaviour: str = "normal") -> str:
    """libcudart stand-in. ``behaviour``: "normal", "hang" (cudaRuntimeGetVersion never returns; it first
    appends its process id to $SIMHOST_HANG_LOG, so a test knows the hang is reached), "segfault" or "abort"
    (it crashes)."""
    trap = {
        "normal": "",
        "hang": "hang_note(); for (;;) sleep(1);",
        "segfault": "*(volatile int *)0 = 1;",
        "abort": "abort();",
    }[behaviour]
    return (
        "#include <stdio.h>\n#include <stdlib.h>\n#include <unistd.h>\n"
        + _HANG_NOTE
        + _DRIVER_PROLOGUE
        + textwrap.dedent(
            f"""\
            int cudaRuntimeGetVersion(int *v) {{ {trap} *v = {version}; return 0; }}
            int cudaDriverGetVersion(int *v) {{ *v = driver_version(); return 0; }}
            int cudaGetDeviceCount(int *n) {{
              int d = driver_version(), count = 0;
              /* CUDA 11+ minor-version compatibility: any driver of the same major runs the runtime
                 (CUDA Compatibility guide); before 11 the driver must be at least the runtime's version. */
              if (d == 0 || ({version} >= 11000 ? d / 1000 < {version} / 1000 : d < {version})) return 35;
              /* The driver's forward-compatibility refusals keep their numbers in the runtime: 803
                 cudaErrorSystemDriverMismatch, 804 cudaErrorCompatNotSupportedOnDevice (CUDA Runtime API).
                 Measured: the real libcudart 12.9 and 13.0 over a libcuda stand-in whose cuInit answers 803 or 804
                 return that status from cudaGetDeviceCount, with the texts below. */
              int status = driver_devices(&count);
              if (status == 803 || status == 804) return status;
              if (status != 0 || count == 0) return 100;
              *n = count; return 0; }}
            int cudaSetDevice(int device) {{ int n = 0; return driver_devices(&n) == 0 && device < n ? 0 : 101; }}
            const char *cudaGetErrorString(int e) {{
              if (e == 35) return "CUDA driver version is insufficient for CUDA runtime version";
              if (e == 100) return "no CUDA-capable device is detected";
              if (e == 803) return "system has unsupported display driver / cuda driver combination";
              if (e == 804) return "forward compatibility was attempted on non supported HW";
              return e ? "unknown error" : "no error"; }}
            """
        )
    )


def nccl_encoded(major: int, minor: int, patch: int) -> int:
    """NCCL_VERSION(X,Y,Z) of nccl.h: X*1000+Y*100+Z up to 2.8, X*10000+Y*100+Z from 2.9."""
    return major * 1000 + minor * 100 + patch if major <= 2 and minor <= 8 else major * 10000 + minor * 100 + patch


def nccl_source(version: tuple[int, int, int], cuda: str | None = "12.9", behaviour: str = "normal") -> str:
    """libnccl stand-in: ncclGetVersion answers ``version`` encoded as nccl.h encodes it, and the library holds
    NCCL's version string "NCCL version X.Y.Z+cudaM.m" (its build writes it, src/init.cc) in .rodata, unless
    ``cuda`` is None. Like the real one it links no CUDA library (its runtime is linked in). ``behaviour``: "normal",
    "hang" (ncclGetVersion never returns) or "abort"."""
    trap = {"normal": "", "hang": "hang_note(); for (;;) sleep(1);", "abort": "abort();"}[behaviour]
    text = f"NCCL version {'.'.join(map(str, version))}+cuda{cuda}" if cuda else "NCCL stand-in"
    return (
        "#include <stdio.h>\n#include <stdlib.h>\n#include <unistd.h>\n#include <string.h>\n"
        + _HANG_NOTE
        + textwrap.dedent(
            f"""\
            const char *nccl_version_string = "{text}";
            int ncclGetVersion(int *v) {{ {trap} *v = {nccl_encoded(*version)}; return 0; }}
            const char *ncclGetErrorString(int e) {{ return e ? "unhandled system error" : "no error"; }}
            """
        )
    )


def cublas_source(version: tuple[int, int, int], cudart: int, lt: bool = False) -> str:
    """libcublas (``lt``: libcublasLt) stand-in: cublasGetProperty (cublasLtGetProperty) answers ``version``'s
    major, minor and patch for MAJOR_VERSION, MINOR_VERSION and PATCH_LEVEL (libraryPropertyType 0, 1, 2), and
    cublasGetCudartVersion (cublasLtGetCudartVersion) ``cudart``, as the real ones do (measured on the wheels)."""
    prefix = "cublasLt" if lt else "cublas"
    major, minor, patch = version
    return textwrap.dedent(
        f"""\
        #include <stddef.h>
        int {prefix}GetProperty(int type, int *value) {{
          if (type == 0) *value = {major}; else if (type == 1) *value = {minor}; else if (type == 2) *value = {patch};
          else return 7; /* CUBLAS_STATUS_INVALID_VALUE */
          return 0; }}
        size_t {prefix}GetCudartVersion(void) {{ return {cudart}; }}
        """
    )


def cudnn_encoded(major: int, minor: int, patch: int) -> int:
    return major * 10000 + minor * 100 + patch if major >= 9 else major * 1000 + minor * 100 + patch


# cudnnStatus_t, the codes cudnnGetErrorString names (any other: "CUDNN_UNKNOWN_STATUS", measured on cuDNN 9.14.0).
# cuDNN 7 and 8 number them from 0 (cuDNN 8.7.0 API Reference, cudnnStatus_t:
# https://docs.nvidia.com/deeplearning/cudnn/archives/cudnn-870/api/index.html; the values as the cuDNN 8 headers
# give them, e.g. JuliaGPU/CUDA.jl src/dnn/libcudnn_types.jl). cuDNN 9 groups them by thousands (cudnn_graph
# Library, cudnnStatus_t: https://docs.nvidia.com/deeplearning/cudnn/latest/api/cudnn-graph-library.html); the
# values and names here are what cudnnGetErrorString of cuDNN 9.14.0 answered on the lent H100
# (tests/data/real-gpu/h100-calls-extra.jsonl).
CUDNN_STATUSES_8 = {
    "CUDNN_STATUS_SUCCESS": 0,
    "CUDNN_STATUS_NOT_INITIALIZED": 1,
    "CUDNN_STATUS_ALLOC_FAILED": 2,
    "CUDNN_STATUS_BAD_PARAM": 3,
    "CUDNN_STATUS_INTERNAL_ERROR": 4,
    "CUDNN_STATUS_INVALID_VALUE": 5,
    "CUDNN_STATUS_ARCH_MISMATCH": 6,
    "CUDNN_STATUS_MAPPING_ERROR": 7,
    "CUDNN_STATUS_EXECUTION_FAILED": 8,
    "CUDNN_STATUS_NOT_SUPPORTED": 9,
    "CUDNN_STATUS_LICENSE_ERROR": 10,
}
CUDNN_STATUSES_9 = {
    "CUDNN_STATUS_SUCCESS": 0,
    "CUDNN_STATUS_NOT_INITIALIZED": 1001,
    "CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH": 1002,
    "CUDNN_STATUS_SERIALIZATION_VERSION_MISMATCH": 1003,
    "CUDNN_STATUS_DEPRECATED": 1004,
    "CUDNN_STATUS_LICENSE_ERROR": 1005,
    "CUDNN_STATUS_RUNTIME_IN_PROGRESS": 1006,
    "CUDNN_STATUS_RUNTIME_FP_OVERFLOW": 1007,
    "CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED": 1008,
    "CUDNN_STATUS_BAD_PARAM": 2000,
    "CUDNN_STATUS_INVALID_VALUE": 2001,
    "CUDNN_STATUS_BAD_PARAM_NULL_POINTER": 2002,
    "CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER": 2003,
    "CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED": 2004,
    "CUDNN_STATUS_BAD_PARAM_OUT_OF_BOUND": 2005,
    "CUDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT": 2006,
    "CUDNN_STATUS_BAD_PARAM_STREAM_MISMATCH": 2007,
    "CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH": 2008,
    "CUDNN_STATUS_BAD_PARAM_DUPLICATED_ENTRIES": 2009,
    "CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE": 2010,
    "CUDNN_STATUS_BAD_PARAM_CUDA_GRAPH_MISMATCH": 2011,
    "CUDNN_STATUS_BAD_PARAM_DESCRIPTOR_TYPE": 2012,
    "CUDNN_STATUS_NOT_SUPPORTED": 3000,
    "CUDNN_STATUS_NOT_SUPPORTED_GRAPH_PATTERN": 3001,
    "CUDNN_STATUS_NOT_SUPPORTED_SHAPE": 3002,
    "CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE": 3003,
    "CUDNN_STATUS_NOT_SUPPORTED_LAYOUT": 3004,
    "CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDA_DRIVER": 3005,
    "CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDART": 3006,
    "CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH": 3007,
    "CUDNN_STATUS_NOT_SUPPORTED_RUNTIME_PREREQUISITE_MISSING": 3008,
    "CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE": 3009,
    "CUDNN_STATUS_NOT_SUPPORTED_SHARED_MEMORY_INSUFFICIENT": 3010,
    "CUDNN_STATUS_NOT_SUPPORTED_PADDING": 3011,
    "CUDNN_STATUS_NOT_SUPPORTED_BAD_LAUNCH_PARAM": 3012,
    "CUDNN_STATUS_NOT_SUPPORTED_CUDA_GRAPH_NATIVE_API": 3013,
    "CUDNN_STATUS_INTERNAL_ERROR": 4000,
    "CUDNN_STATUS_INTERNAL_ERROR_COMPILATION_FAILED": 4001,
    "CUDNN_STATUS_INTERNAL_ERROR_UNEXPECTED_VALUE": 4002,
    "CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED": 4003,
    "CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED": 4004,
    "CUDNN_STATUS_INTERNAL_ERROR_BAD_LAUNCH_PARAM": 4005,
    "CUDNN_STATUS_INTERNAL_ERROR_TEXTURE_CREATION_FAILED": 4006,
    "CUDNN_STATUS_EXECUTION_FAILED": 5000,
    "CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER": 5001,
    "CUDNN_STATUS_EXECUTION_FAILED_CUBLAS": 5002,
    "CUDNN_STATUS_EXECUTION_FAILED_CUDART": 5003,
    "CUDNN_STATUS_EXECUTION_FAILED_CURAND": 5004,
}


def cudnn_source(version: tuple[int, int, int], cudart_version: int) -> str:
    """libcudnn front library stand-in. A split release (8, 9) loads its first sub-library from its own
    folder on the first call and aborts, as the real one does, when that fails. A sub-library that exports
    ``cudnn_sublibrary_init`` is then initialised, and a failure of that (see :func:`cudnn_sublibrary_source`)
    aborts the same way, with the same message. ``hang-create`` in the file ``$SIMHOST_CUDNN_FAULT`` makes
    cudnnCreate hang as the NVML stand-in's faults do (see :func:`nvml_source`)."""
    major, minor, patch = version
    first = {8: "libcudnn_ops_infer.so.8", 9: "libcudnn_graph.so.9"}.get(major)
    statuses = CUDNN_STATUSES_9 if major >= 9 else CUDNN_STATUSES_8
    not_initialized, bad_param = statuses["CUDNN_STATUS_NOT_INITIALIZED"], statuses["CUDNN_STATUS_BAD_PARAM"]
    # Lines of the f-string below, indented as it is before its dedent.
    error_names = f"\n{' ' * 16}".join(f"case {value}: return {_c_string(name)};" for name, value in statuses.items())
    check = (
        textwrap.dedent(
            f"""\
            #define _GNU_SOURCE
            #include <dlfcn.h>
            #include <libgen.h>
            #include <limits.h>
            #include <stdio.h>
            #include <stdlib.h>
            #include <string.h>
            static void siblings(void) {{
              static int done; Dl_info info; char path[PATH_MAX];
              if (done) return;
              dladdr((void *)siblings, &info);
              snprintf(path, sizeof path, "%s", info.dli_fname);
              char folder[PATH_MAX]; snprintf(folder, sizeof folder, "%s", dirname(path));
              char sibling[PATH_MAX]; snprintf(sibling, sizeof sibling, "%s/{first}", folder);
              void *handle = dlopen(sibling, RTLD_NOW);
              if (!handle) {{
                fprintf(stderr, "Could not load library {first}. Error: %s\\n", dlerror());
                abort(); }}
              const char *(*init)(void) = (const char *(*)(void))dlsym(handle, "cudnn_sublibrary_init");
              const char *error = init ? init() : 0;
              if (error) {{
                fprintf(stderr, "Could not load library {first}. Error: %s\\n", error);
                abort(); }}
              done = 1; }}
            """
        )
        if first
        else "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\nstatic void siblings(void) {}\n"
    )
    last_error = (
        textwrap.dedent(
            """\
            static const char *last = "";
            void cudnnGetLastErrorString(char *out, size_t size) { siblings(); snprintf(out, size, "%s", last); }
            """
        )
        if major >= 9
        else 'static const char *last = "";\n'
    )
    return (
        check
        + _FAULTS
        + "#include <stddef.h>\n"
        + _DRIVER_PROLOGUE
        + last_error
        + textwrap.dedent(
            f"""\
            size_t cudnnGetVersion(void) {{ siblings(); return {cudnn_encoded(major, minor, patch)}; }}
            size_t cudnnGetCudartVersion(void) {{ siblings(); return {cudart_version}; }}
            /* libraryPropertyType_t: MAJOR_VERSION 0, MINOR_VERSION 1, PATCH_LEVEL 2; any other is BAD_PARAM
               (measured: cudnnGetProperty(3) of cuDNN 9.14.0 answers 2000). */
            int cudnnGetProperty(int type, int *value) {{
              siblings(); if (type < 0 || type > 2) return {bad_param};
              *value = type == 0 ? {major} : type == 1 ? {minor} : {patch}; return 0; }}
            const char *cudnnGetErrorString(int s) {{
              switch (s) {{
                {error_names}
                default: return "CUDNN_UNKNOWN_STATUS";
              }} }}
            /* Every handle created and destroyed is appended to $SIMHOST_CUDNN_LOG, so tests can check
               that each one created is destroyed. */
            static void note(const char *what, void *handle) {{
              const char *path = getenv("SIMHOST_CUDNN_LOG"); FILE *f;
              if (path && (f = fopen(path, "a"))) {{ fprintf(f, "%s %p\\n", what, handle); fclose(f); }} }}
            static int handles;
            int cudnnCreate(void **handle) {{
              int n = 0; siblings();
              if (fault("SIMHOST_CUDNN_FAULT", "hang-create")) hang();
              if (driver_version() == 0 || driver_devices(&n) != 0 || n == 0) {{
                last = "cudaGetDeviceCount(&count) != cudaSuccess"; return {not_initialized}; }}
              /* A driver of an older CUDA major than the runtime this cuDNN was built for: its runtime's first call
                 fails (cudaErrorInsufficientDriver), and cudnnCreate with it, as the field test saw (1001). */
              if (driver_version() / 1000 < {cudart_version} / 1000) {{
                last = "CUDA driver version is insufficient for CUDA runtime version"; return {not_initialized}; }}
              driver_context();
              *handle = (void *)(long)(0x1000 + ++handles); note("create", *handle); return 0; }}
            int cudnnDestroy(void *handle) {{ note("destroy", handle); return 0; }}
            """
        )
    )


def cudnn_sublibrary_source(part: str, needs: str | None = None) -> str:
    """A cuDNN sub-library stand-in. ``needs``: a library it dlopens when the front library initialises it, as
    cuDNN 8's sub-libraries load libnvrtc lazily; when that fails it hands dlerror(3) back and the front library
    prints, as cuDNN 8.7.0.84 does, "Could not load library libcudnn_ops_infer.so.8. Error: libnvrtc.so: cannot
    open shared object file: No such file or directory", then aborts."""
    source = f"int cudnn_{part}_present = 1;\n"
    if needs:
        source = "#include <dlfcn.h>\n" + source
        load = f"dlopen({_c_string(needs)}, RTLD_NOW)"
        source += f"const char *cudnn_sublibrary_init(void) {{ return {load} ? 0 : dlerror(); }}\n"
    return source


TF_BUILD_INFO_DIR = Path(__file__).parent / "data" / "build_info"


@dataclass
class SimHost:
    """A simulated machine under ``root``. Plant components, then :meth:`run` the product on it."""

    root: Path
    compiler: Compiler
    driver_dir: Path = field(init=False)
    site_packages: Path = field(init=False)
    ld_library_path: list[str] = field(default_factory=list)
    variables: dict[str, str] = field(default_factory=dict)
    # Folders of this machine shown otherwise to the child, in a private mount namespace: ("overlay", target,
    # folder) adds the folder's files over the target's; ("bind", target, path) puts the path in its place.
    mounts: list[tuple[str, str, Path]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.driver_dir = self.root / "usr" / "lib" / "driver"
        self.site_packages = self.root / "venv" / "lib" / "site-packages"
        self.site_packages.mkdir(parents=True, exist_ok=True)

    def folder(self, relative: str) -> Path:
        path = self.root / relative.lstrip("/")
        path.mkdir(parents=True, exist_ok=True)
        return path

    # The host's own files -----------------------------------------------------------------------------
    def overlay(self, target: str) -> Path:
        """A folder whose files the child sees inside ``target``, a folder of this machine, beside its own (an
        overlay mount: /usr/lib/wsl/lib, /dev/dxg, /etc/nv_tegra_release without touching the machine's)."""
        upper = self.folder(f"mounts/upper{target}")
        self.mounts.append(("overlay", target, upper))
        return upper

    def replace(self, target: str, text: str | None = None) -> Path:
        """A file (``text``) or a folder (``text`` None) the child sees at ``target`` in place of this machine's
        (a bind mount: /proc/sys/kernel/osrelease, /proc/driver, /sys/bus/pci/devices)."""
        path = self.root / "mounts" / "bound" / target.lstrip("/")
        if text is None:
            path.mkdir(parents=True, exist_ok=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        self.mounts.append(("bind", target, path))
        return path

    def _command(self, argv: Sequence[str]) -> list[str]:
        """``argv``, in a private mount namespace with :attr:`mounts` made first where there are any."""
        if not self.mounts:
            return list(argv)
        steps = []
        for number, (kind, target, source) in enumerate(self.mounts):
            if kind == "overlay":
                work = self.folder(f"mounts/work/{number}")
                options = f"lowerdir={target},upperdir={source},workdir={work}"
                steps.append(f"mount -t overlay overlay -o {shlex.quote(options)} {shlex.quote(target)}")
            else:
                steps.append(f"mount --bind {shlex.quote(str(source))} {shlex.quote(target)}")
        script = " && ".join(steps) + ' && exec "$@"'
        return ["unshare", "--mount", "--propagation", "private", "sh", "-ec", script, "sh", *argv]

    # Driver ---------------------------------------------------------------------------------------
    def add_driver(
        self,
        gpus: Sequence[SimGpu] = (SimGpu(),),
        version: str = "535.104.05",
        cuda_version: int = 12020,
        nvml_init_error: int = 0,
        nvml_fail_from_index: int | None = None,
        libcuda: bool = True,
        nvidia_smi: bool = False,
        *,
        nvml: bool = True,
        folder: Path | None = None,
        on_path: bool = True,
        pairs: Mapping[tuple[int, int], tuple[int, int, int, int]] | None = None,
    ) -> None:
        """``nvidia_smi``: also plant a stand-in ``nvidia-smi`` (on PATH in :meth:`environ`) that answers
        ``--query-gpu`` from the same GPUs and ``--query-compute-apps`` from the contexts the libcuda stand-in made.
        ``folder``: where the libraries go (the driver's folder by default); ``on_path``: whether LD_LIBRARY_PATH
        names it; ``nvml`` False: no NVML (a Jetson's driver); ``pairs``: how GPUs reach each other (nvml_source)."""
        folder = folder or self.driver_dir
        if nvidia_smi:
            write_nvidia_smi(self.folder("usr/bin") / "nvidia-smi", gpus, version)
        if nvml:
            self.compiler.shared_library(
                nvml_source(gpus, version, cuda_version, nvml_init_error, nvml_fail_from_index, pairs),
                "libnvidia-ml.so.1",
                folder / "libnvidia-ml.so.1",
            )
        if libcuda:
            self.compiler.shared_library(
                libcuda_source(cuda_version, len(gpus), init_status=0 if gpus else 100),
                "libcuda.so.1",
                folder / "libcuda.so.1",
            )
        if on_path and str(self.driver_dir) not in self.ld_library_path and folder == self.driver_dir:
            self.ld_library_path.insert(0, str(self.driver_dir))

    def add_compat(self, folder: str, version: int, driver: str, init_status: int = 0, devices: int = 1) -> Path:
        """A cuda-compat package's user-mode driver: ``libcuda.so.<driver>`` answering CUDA ``version``, with its
        ``libcuda.so.1`` link, in ``folder`` (/usr/local/cuda-X.Y/compat), put first on the loader path as NGC
        images do. ``init_status``: what its cuInit answers (804 on a GPU without forward compatibility, 803 on a
        kernel driver it does not support)."""
        where = self.folder(folder)
        target = self.compiler.shared_library(
            libcuda_source(version, devices, init_status), "libcuda.so.1", where / f"libcuda.so.{driver}"
        )
        (where / "libcuda.so.1").symlink_to(target.name)
        self.ld_library_path.insert(0, str(where))
        return where

    # CUDA runtime ---------------------------------------------------------------------------------
    def add_cudart(
        self, folder: str | Path, version: int, soname: str | None = None, behaviour: str = "normal"
    ) -> Path:
        soname = soname or _cudart_soname(version)
        where = self.folder(str(folder)) if not Path(folder).is_absolute() else Path(folder)
        full = f"libcudart.so.{version // 1000}.{(version % 1000) // 10}.0"
        target = self.compiler.shared_library(cudart_source(version, behaviour), soname, where / full)
        link = where / soname
        if link != target and not link.exists():
            link.symlink_to(target.name)
        return link

    # NCCL -----------------------------------------------------------------------------------------
    def add_nccl(
        self, folder: str | Path, version: tuple[int, int, int], cuda: str | None = "12.9", behaviour: str = "normal"
    ) -> Path:
        """libnccl.so.2 (a file by its full version, the soname a link to it), as NCCL's packages install it."""
        where = self.folder(str(folder)) if not Path(folder).is_absolute() else Path(folder)
        full = f"libnccl.so.{'.'.join(map(str, version))}"
        target = self.compiler.shared_library(nccl_source(version, cuda, behaviour), "libnccl.so.2", where / full)
        link = where / "libnccl.so.2"
        if not link.exists():
            link.symlink_to(target.name)
        return link

    # cuBLAS ---------------------------------------------------------------------------------------
    def add_cublas(
        self, folder: str | Path, version: tuple[int, int, int], cudart: int, lt: tuple[int, int, int] | None = None
    ) -> Path:
        """libcublas.so.<major> and libcublasLt.so.<major> (of release ``lt``, default ``version``) in ``folder``."""
        where = self.folder(str(folder)) if not Path(folder).is_absolute() else Path(folder)
        for name, release, is_lt in (("libcublasLt", lt or version, True), ("libcublas", version, False)):
            soname = f"{name}.so.{version[0]}"
            self.compiler.shared_library(cublas_source(release, cudart, is_lt), soname, where / soname)
        return where / f"libcublas.so.{version[0]}"

    # cuDNN ----------------------------------------------------------------------------------------
    def add_cudnn(
        self,
        folder: str | Path,
        version: tuple[int, int, int],
        cudart_version: int,
        siblings: bool | Sequence[str] = True,
        header: bool = False,
        sublibrary_needs: str | None = None,
        needs: Sequence[str] = (),
    ) -> Path:
        """A cuDNN front library and its sub-libraries. ``sublibrary_needs``: a library its first sub-library
        dlopens when initialised (absent from the host unless planted: the cuDNN 8 / libnvrtc case).
        ``needs``: libraries the front library itself is linked against (DT_NEEDED) that are not planted, so the
        loader refuses it with "libfoo.so.1: cannot open shared object file"."""
        major = version[0]
        where = self.folder(str(folder)) if not Path(folder).is_absolute() else Path(folder)
        soname = f"libcudnn.so.{major}"
        full = f"{soname}.{version[1]}.{version[2]}"
        libs = [*self.compiler.link_against(needs), "-ldl"]
        target = self.compiler.shared_library(cudnn_source(version, cudart_version), soname, where / full, libs)
        link = where / soname
        if not link.exists():
            link.symlink_to(target.name)
        parts = CUDNN_SUBLIBRARIES.get(major, ())
        if siblings is True:
            wanted: Sequence[str] = parts
        elif siblings is False:
            wanted = ()
        else:
            wanted = siblings
        for part in wanted:
            name = f"libcudnn_{part}.so.{major}"
            needed = sublibrary_needs if part == parts[0] else None
            source = cudnn_sublibrary_source(part, needed)
            self.compiler.shared_library(source, name, where / name, libs=("-ldl",) if needed else ())
        if header:
            include = where.parent / "include"
            include.mkdir(parents=True, exist_ok=True)
            (include / "cudnn_version.h").write_text(
                "".join(
                    f"#define CUDNN_{key} {value}\n"
                    for key, value in zip(("MAJOR", "MINOR", "PATCHLEVEL"), version, strict=True)
                )
            )
        return link

    def add_stack(
        self, folder: str, cuda: int, cudnn: tuple[int, int, int] | None = None, cudnn_cuda: int | None = None
    ) -> Path:
        """A toolkit-style folder with a CUDA runtime (and a complete cuDNN), put on LD_LIBRARY_PATH."""
        where = self.folder(folder)
        self.add_cudart(where, cuda)
        if cudnn is not None:
            self.add_cudnn(where, cudnn, cudart_version=cudnn_cuda or cuda)
        self.ld_library_path.append(str(where))
        return where

    # TensorFlow -----------------------------------------------------------------------------------
    def add_tensorflow(
        self,
        version: str,
        build_info: str,
        distribution: str = "tensorflow",
        wheels: Mapping[str, Sequence[str]] | None = None,
    ) -> Path:
        """Plant TensorFlow's files. ``build_info`` is the name of a file in tests/data/build_info or the
        text itself. Its ``__init__.py`` raises: the product must never import it."""
        package = self.site_packages / "tensorflow"
        (package / "python" / "platform").mkdir(parents=True, exist_ok=True)
        (package / "__init__.py").write_text('raise RuntimeError("pytest-cudnn imported tensorflow")\n')
        text = (TF_BUILD_INFO_DIR / build_info).read_text() if "\n" not in build_info else build_info
        (package / "python" / "platform" / "build_info.py").write_text(text)
        dist = self.add_distribution(distribution, version)
        (dist / "top_level.txt").write_text("tensorflow\n")
        return package

    def add_distribution(self, name: str, version: str, site: Path | None = None, requires: Sequence[str] = ()) -> Path:
        """Plant an installed distribution's ``<name>-<version>.dist-info`` as pip writes it: the folder name
        escaped (runs of -, _, . become _), METADATA with the name as given, a header, a blank line, then the
        description (which, like a real one, may hold lines that look like fields)."""
        folder = (site or self.site_packages) / f"{re.sub(r'[-_.]+', '_', name)}-{version}.dist-info"
        folder.mkdir(parents=True, exist_ok=True)
        header = [
            "Metadata-Version: 2.1",
            f"Name: {name}",
            f"Version: {version}",
            "Summary: a simulated distribution",
            *(f"Requires-Dist: {requirement}" for requirement in requires),
        ]
        body = ["", f"# {name}", "", "Name: not-a-header-field", "Version: 0.0.0"]
        (folder / "METADATA").write_text("\n".join(header + body) + "\n")
        (folder / "INSTALLER").write_text("pip\n")
        return folder

    def wheel_folder(self, component: str) -> Path:
        """``site-packages/nvidia/<component>/lib``, where the nvidia-* wheels put their libraries."""
        return self.folder(str((self.site_packages / "nvidia" / component / "lib").relative_to(self.root)))

    # Running --------------------------------------------------------------------------------------
    def environ(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        path = os.environ.get("PATH", "/usr/bin:/bin")
        if (self.root / "usr" / "bin" / "nvidia-smi").exists():
            path = f"{self.root / 'usr' / 'bin'}:{path}"
        env = {
            "PATH": path,
            "HOME": str(self.root),
            "PYTHONPATH": str(self.site_packages),
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        if self.ld_library_path:
            env["LD_LIBRARY_PATH"] = ":".join(self.ld_library_path)
        env.update(self.variables)
        env.update(extra or {})
        return env

    def run(
        self, *args: str, extra_env: Mapping[str, str] | None = None, timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self._command([sys.executable, "-m", "pytest_cudnn", *args]),
            capture_output=True,
            text=True,
            env=self.environ(extra_env),
            cwd=self.root,
            timeout=timeout,
            check=False,
        )

    def pytest(
        self, *args: str, files: Mapping[str, str], extra_env: Mapping[str, str] | None = None, timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        """Run pytest in a child process on this host, on test files written into ``root/suite``."""
        suite = self.root / "suite"
        suite.mkdir(exist_ok=True)
        for name, text in files.items():
            (suite / name).write_text(textwrap.dedent(text))
        return subprocess.run(
            self._command([*PYTEST, "-rs", *args, str(suite)]),
            capture_output=True,
            text=True,
            env=self.environ(extra_env),
            cwd=suite,
            timeout=timeout,
            check=False,
        )

    def doctor_json(self, *args: str, extra_env: Mapping[str, str] | None = None) -> tuple[int, dict[str, Any]]:
        completed = self.run("doctor", "--json", *args, extra_env=extra_env)
        assert completed.stdout, completed.stderr
        report = json.loads(completed.stdout)
        # What a probe records must replay: xdist workers and snapshots decode it with every value rule.
        Environment.from_json(report["environment"], "the probe's own output")
        return completed.returncode, report


_NVIDIA_SMI = """\
import json, os, sys

GPUS, DRIVER = json.loads(%(data)r)
FIELDS = {
    "driver_version": lambda g: DRIVER,
    "name": lambda g: g["name"],
    "uuid": lambda g: g["uuid"],
    "pci.bus_id": lambda g: g["pci_bus_id"],
    "compute_cap": lambda g: "%%d.%%d" %% tuple(g["compute_capability"]),
    "memory.total": lambda g: str(g["memory_total"] // 2**20),
    "memory.free": lambda g: str(g["memory_free"] // 2**20),
    "index": lambda g: str(GPUS.index(g)),
}
args = dict(a.split("=", 1) for a in sys.argv[1:] if "=" in a)
if args.get("--format") != "csv,noheader,nounits":
    sys.exit("stand-in nvidia-smi: only --format=csv,noheader,nounits")
if "--query-gpu" in args:
    for gpu in GPUS:
        print(", ".join(FIELDS[name](gpu) for name in args["--query-gpu"].split(",")))
elif args.get("--query-compute-apps") == "pid,gpu_uuid":
    log = os.environ.get("SIMHOST_CONTEXT_LOG")
    seen = set()
    for line in open(log).read().split("\\n") if log and os.path.exists(log) else []:
        if line and line not in seen and os.path.exists("/proc/" + line.split()[0]):
            seen.add(line)
            pid, device = line.split()
            print(pid + ", " + GPUS[int(device)]["uuid"])
else:
    sys.exit("stand-in nvidia-smi: unsupported arguments " + " ".join(sys.argv[1:]))
"""


def write_nvidia_smi(path: Path, gpus: Sequence[SimGpu], driver: str) -> None:
    """A stand-in ``nvidia-smi`` for the few queries the real-GPU tier makes (tests/gpumachine.py): the facts of
    ``gpus`` as the real one prints them (MiB with ``nounits``, compute capability as ``9.0``), and the live
    processes that made a context through the libcuda stand-in (``$SIMHOST_CONTEXT_LOG``)."""
    data = json.dumps(
        [
            [
                {
                    "name": g.name,
                    "uuid": g.uuid,
                    "pci_bus_id": g.pci_bus_id,
                    "compute_capability": list(g.compute_capability),
                    "memory_total": g.memory_total,
                    "memory_free": g.memory_free,
                }
                for g in gpus
            ],
            driver,
        ]
    )
    path.write_text(f"#!{sys.executable}\n" + _NVIDIA_SMI % {"data": data})
    path.chmod(0o755)


def _cudart_soname(version: int) -> str:
    """CUDA 10.x sonames carry major.minor; 11.x all use .11.0; 12 on carry the major only."""
    major, minor = version // 1000, (version % 1000) // 10
    if major < 11:
        return f"libcudart.so.{major}.{minor}"
    if major == 11:
        return "libcudart.so.11.0"
    return f"libcudart.so.{major}"


_DT_NEEDED, _DT_RPATH, _DT_RUNPATH, _SHT_DYNAMIC = 1, 15, 29, 6


def dynamic_strings(path: Path) -> dict[str, list[str]]:
    """The DT_NEEDED, DT_RPATH and DT_RUNPATH strings of a 64-bit little-endian ELF file, read from its section
    headers: how a test checks what the linker wrote, without the product's own reader."""
    data = path.read_bytes()
    dynamic, dynstr = _dynamic_sections(data)
    names = {_DT_NEEDED: "NEEDED", _DT_RPATH: "RPATH", _DT_RUNPATH: "RUNPATH"}
    found: dict[str, list[str]] = {name: [] for name in names.values()}
    for tag, value, _ in _dynamic_entries(data, dynamic):
        if tag in names:
            found[names[tag]].append(_string_at(data, dynstr, value))
    return found


def retag_needed_as_runpath(path: Path, needed: str) -> None:
    """Turn the DT_NEEDED entry naming ``needed`` into a DT_RUNPATH with that string. The GNU linker writes
    DT_RPATH or DT_RUNPATH, never both (--enable-new-dtags omits the old tag); this makes an object with both,
    as older toolchains and some patched binaries carry."""
    data = bytearray(path.read_bytes())
    dynamic, dynstr = _dynamic_sections(bytes(data))
    for tag, value, offset in _dynamic_entries(bytes(data), dynamic):
        if tag == _DT_NEEDED and _string_at(bytes(data), dynstr, value) == needed:
            data[offset : offset + 8] = _DT_RUNPATH.to_bytes(8, "little")
            path.write_bytes(bytes(data))
            return
    raise ValueError(f"{path} has no DT_NEEDED {needed!r}")


def _dynamic_sections(data: bytes) -> tuple[tuple[int, int], int]:
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("not a 64-bit little-endian ELF file")
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    for _name, kind, _flags, _addr, offset, size, link, *_ in headers:
        if kind == _SHT_DYNAMIC:
            return (offset, size), headers[link][4]
    raise ValueError("no .dynamic section")


def _dynamic_entries(data: bytes, dynamic: tuple[int, int]) -> list[tuple[int, int, int]]:
    start, size = dynamic
    entries = []
    for offset in range(start, start + size, 16):
        tag, value = struct.unpack_from("<qQ", data, offset)
        if tag == 0:
            break
        entries.append((tag, value, offset))
    return entries


def _string_at(data: bytes, table: int, index: int) -> str:
    end = data.index(b"\0", table + index)
    return data[table + index : end].decode()
