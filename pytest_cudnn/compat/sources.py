"""Where every compatibility fact in :mod:`pytest_cudnn.compat` comes from.

Each data row names one of these keys; a test checks that every row's key is here. The texts are the public
pages (and, for repositories, the commit) the rows were read from.
"""

from __future__ import annotations

__all__ = ["SOURCES"]

SOURCES: dict[str, str] = {
    "cuda-primary-ctx-state": (
        "CUDA Driver API, 6.8 Primary Context Management, cuDevicePrimaryCtxGetState: 'Returns in *flags the flags "
        "for the primary context of dev, and in *active whether it is active' (0 = inactive, 1 = active); "
        "https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__PRIMARY__CTX.html (and the cuda-python binding "
        "device_primary_ctx_get_state, https://nvidia.github.io/cuda-python/cuda-bindings/latest/module/generated/"
        "driver_v2/cuda.bindings._v2.driver.device_primary_ctx_get_state.html)"
    ),
    "cuda-init-not-initialized": (
        "CUDA Driver API, 6.3 Initialization, cuInit: 'If cuInit() has not been called, any function from the driver "
        "API will return CUDA_ERROR_NOT_INITIALIZED' (3); "
        "https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__INITIALIZE.html"
    ),
    "dlopen-rtld-noload": (
        "dlopen(3) (LSB 5.0 Core, baselib-dlopen-1; glibc since 2.2): 'RTLD_NOLOAD Do not load the library. This "
        "can be used to test if the library is already resident. dlopen() returns a NULL pointer if it is not "
        "resident'; https://refspecstg.linuxbase.org/LSB_5.0.0/LSB-Core-generic/LSB-Core-generic/baselib-dlopen-1.html"
    ),
    "tf-tested-linux": (
        "TensorFlow docs, 'Tested build configurations', Linux GPU: https://www.tensorflow.org/install/source#gpu "
        "(tensorflow/docs site/en/install/source.md @ 7c3650212740204359d4ceae481abc79345541be)"
    ),
    "tf-tested-windows": (
        "TensorFlow docs, 'Tested build configurations', Windows GPU: "
        "https://www.tensorflow.org/install/source_windows#gpu "
        "(tensorflow/docs site/en/install/source_windows.md @ 7c3650212740204359d4ceae481abc79345541be)"
    ),
    "tf-and-cuda": (
        "Requires-Dist ...; extra == 'and-cuda' in the METADATA of the tensorflow wheels on PyPI "
        "(cp310 manylinux x86_64, releases 2.14.0 to 2.21.0, read through pip's installation report), written from "
        "tensorflow/tools/pip_package/setup.py"
    ),
    "tf-and-cuda-pythons": (
        "The Requires-Dist ...; extra == 'and-cuda' lines of each tensorflow wheel from 2.14.0 to 2.21.0, and which "
        "Pythons the extra installs on: pip 26.3 'pip install --dry-run --only-binary=:all: --python-version 3.X "
        "--platform manylinux_2_17_x86_64 ... manylinux_2_35_x86_64 tensorflow[and-cuda]==V' against PyPI for "
        "CPython 3.9 to 3.14, 2026-11-22. Failures: 2.14.x on 3.11 'No matching distribution found for "
        "tensorrt==8.5.3.1'; 2.15.0 on 3.9 and 3.10 'tensorrt==8.6.1.post1 (from versions: 8.5.1.7, 8.5.2.2, "
        "8.5.3.1, 8.6.0, 10.0.0b6)', on 3.11 '... (from versions: 10.0.0b6)' (the 8.5.x/8.6.0 wheels are cp36 to "
        "cp310 only; tensorrt 8.6.1.post1 is on PyPI as an sdist only; compat-audit D6, re-checked 2026-11-26 with "
        "--platform manylinux_2_17_x86_64: 3.10 lists 8.5.1.7 to 8.6.0, 3.11 none), and 'tensorrt-libs==8.6.1 (from "
        "versions: none)'; elsewhere 'No matching distribution "
        "found for tensorflow==V' (no wheel for that Python). The nvidia-* pins alone, with tensorflow==V, resolve "
        "for 2.14.0/2.14.1 on 3.11 and 2.15.0 on 3.9-3.11"
    ),
    "tf-windows-gpu-end": (
        "https://www.tensorflow.org/install/source_windows#gpu: 'GPU support on native-Windows is only available "
        "for 2.10 or earlier versions, starting in TF 2.11, CUDA build is not supported for Windows'"
    ),
    "tf-cudnn-rule": (
        "tensorflow/tensorflow third_party/xla/xla/stream_executor/cuda/cuda_dnn.cc @ "
        "00de4e7b45bda74220089bca48f4d5d2287f79b4, IsSourceCompatibleWithCudnnLibrary: same major, loaded minor >= "
        "compiled minor ('CuDNN library needs to have matching major version and equal or higher minor version')"
    ),
    "tf-dso-names": (
        "tensorflow/tensorflow third_party/gpus/cuda_configure.bzl (_get_cuda_config: cudart '11.0' for any "
        "11.x, the major from 12) and tensorflow/core/platform/{default,windows}/load_library.cc; observed names "
        "in tensorflow/tensorflow#34759, #45930, #49862, #50589, #57103, #61438"
    ),
    "cuda-release-notes": (
        "NVIDIA CUDA Toolkit Release Notes, Table 3 'CUDA Toolkit and Corresponding Driver Versions' (GA rows; 'CUDA "
        "11.0.2 GA >= 450.51.05 >= 451.48', 'CUDA 13.0 GA >=580.65.06 N/A', 'CUDA 13.2 GA >=595.45.04 N/A'): "
        "https://docs.nvidia.com/cuda/archive/13.1.0/cuda-toolkit-release-notes/index.html and the 13.2 Update 2 "
        "edition, https://docs.nvidia.com/cuda/archive/13.2.2/cuda-toolkit-release-notes/index.html, read as a crawl "
        "copy in the public code index (not the live page), whose Table 3 has every GA row tabled here from 'CUDA "
        "13.2 GA  | >=595.45.04  | N/A' down to 'CUDA 7.0 (7.0.28)  | >= 346.46  | >= 347.62'. No primary copy of "
        "the 13.3, 13.4 or 13.5 notes' Table 3 was found (the stored pages stop at Table 1; the 13.4 notes: 'The "
        "CUDA Toolkit 13.4 GA release is versioned 13.4.1 and supersedes the 13.4.0 developer preview'), so those "
        "toolkits have no row: secondary copies give 'CUDA 13.3 GA | >=610.43.02' and, from 13.4, a driver no longer "
        "bundled ('N/A (unbundled; R616 >=616.00)'), no number for 13.5. A 13.3-13.5 runtime (on PyPI: "
        "nvidia-cuda-runtime 13.3.29, 13.4.49, 13.4.92, 13.5.37) is judged by the minor-version floor 580, which "
        "runs it; the PTX such a toolkit builds by the CUDA the driver reports (cuda-ptx-jit)"
    ),
    "cuda-minor-compat": (
        "NVIDIA CUDA Toolkit Release Notes, Table 2 'CUDA Toolkit and Minimum Required Driver Version for CUDA Minor "
        "Version Compatibility' ('11.x >= 450 < 525') and its footnote: 'CUDA 11.0 was released with an earlier "
        "driver version, but by upgrading to Tesla Recommended Drivers 450.80.02 (Linux) / 452.39 (Windows), minor "
        "version compatibility is possible across the CUDA 11.x family of toolkits': "
        "https://docs.nvidia.com/cuda/archive/13.1.0/cuda-toolkit-release-notes/index.html; "
        "https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html"
    ),
    "cuda-12-driver": (
        "NVIDIA CUDA Toolkit Release Notes: Table 2 gives CUDA 12.x minor-version compatibility as '>= 525', and Table "
        "3 'CUDA Toolkit and Corresponding Driver Versions' the exact first driver, 'CUDA 12.0 GA >=525.60.13 "
        ">=527.41': https://docs.nvidia.com/cuda/archive/13.1.0/cuda-toolkit-release-notes/index.html"
    ),
    "cuda-13-driver": (
        "CUDA 13: release notes Table 2 '13.x >= 580' and Table 3 'CUDA 13.0 GA >=580.65.06 N/A' (no Windows "
        "number: https://docs.nvidia.com/cuda/archive/13.1.0/cuda-toolkit-release-notes/index.html); the Windows "
        "floor from NVIDIA/cuda-python cuda_bindings/docs/source/install.rst @ "
        "051cb1adc361f43037170213b3ad0bf0f832e7f4: 'Driver: Linux (580.65.06 or later) Windows (580.88 or later)'"
    ),
    "llvm-nvptx": (
        "llvm/llvm-project llvm/include/llvm/TargetParser/NVPTXTargetParser.def @ "
        '337115da00c4ac712704d49ff734e3968ab80c2d (first and last CUDA release per sm_XX): \'NVPTX_GPU("sm_107",  '
        'SM_107,  "compute_107",  1070, CUDA_134, NEW,      NONE)\', \'NVPTX_GPU("sm_110",  SM_110,  '
        '"compute_110",  1100, CUDA_130, NEW,      NONE)\', \'NVPTX_GPU("sm_101",  SM_101,  "compute_101",  1010, '
        "CUDA_128, CUDA_129, NONE)'"
    ),
    "cuda-13-arch-removal": (
        "CUDA 13 release notes, 'Deprecated Architectures': 'Offline compilation and library support for these "
        "architectures [Maxwell, Pascal, and Volta] have been removed in CUDA Toolkit 13.0 major version release': "
        "https://docs.nvidia.com/cuda/archive/13.1.0/cuda-toolkit-release-notes/index.html"
    ),
    "cudnn-matrix-7": (
        "cuDNN 7.6.x support matrix: https://docs.nvidia.com/deeplearning/cudnn/archives/cudnn_760/"
        "cudnn-support-matrix/index.html and cudnn-803 support matrix (7.6.3-7.6.5 rows)"
    ),
    "cudnn-before-7-unknown": (
        "No support matrix for cuDNN 5.1 or 6.0 was found: the matrices read start with cuDNN 7.6.0 "
        "(https://docs.nvidia.com/deeplearning/cudnn/archives/cudnn_760/cudnn-support-matrix/index.html, "
        "'-Kepler (3.x)'), and searches of the stored NVIDIA pages for a 5.x/6.x matrix (2026-11-26) found none; so "
        "the 7.x floor is not extended to them (compat-audit W1)"
    ),
    "cudnn-matrix-8": (
        "cuDNN 8.0 to 8.5 support matrices: https://docs.nvidia.com/deeplearning/cudnn/archives/cudnn-803/"
        "support-matrix/index.html ('CUDA 11.0 | SM 3.5 and later', 'CUDA 10.2 | SM 3.0 and later'), cudnn-822, "
        "cudnn-840 and https://docs.nvidia.com/deeplearning/cudnn/archives/cudnn-850/pdf/cuDNN-Support-Matrix.pdf "
        "('cuDNN 8.5.0 for CUDA 11.x ... SM 3.5 and later')"
    ),
    "cudnn-86-87-unknown": (
        "No cuDNN 8.6 or 8.7 support matrix was found (cudnn-860 / cudnn-870 archives). Their own headers "
        "(nvidia/cudnn/include/cudnn_version.h in the PyPI wheels nvidia-cudnn-cu11 8.6.0.163 and 8.7.0.84) define "
        "CUDNN_MAX_SM_MAJOR_NUMBER 9 and no minimum. Measured, not published: their libcudnn_ops_infer.so.8 still "
        "carries sm_35 SASS"
    ),
    "cudnn-88-header": (
        "cuDNN 8.8's own header, nvidia/cudnn/include/cudnn_version.h in the PyPI wheels nvidia-cudnn-cu12 8.8.0.121 "
        "and 8.8.1.3: '/* This is the minimum version we support devices below this will return "
        "CUDNN_STATUS_ARCH_MISMATCH */ #define CUDNN_MIN_DEVICE_VERSION CUDNN_SM_50' (8.9.7's header says the same)"
    ),
    "cudnn-matrix-89": (
        "cuDNN 8.9.x support matrices: https://docs.nvidia.com/deeplearning/cudnn/archives/cudnn-891/support-matrix/"
        " and cudnn-896 (compute capability 9.0 down to 5.0)"
    ),
    "cudnn-matrix-9": (
        "cuDNN 9 support matrices: https://docs.nvidia.com/deeplearning/cudnn/backend/v9.0.0/reference/"
        "support-matrix.html, v9.5.0 and v9.5.1 (compute capability 9.0 down to 5.0, Maxwell and later)"
    ),
    "cudnn-9-own-runtime": (
        "measured 2026-11-29 with readelf -d on the PyPI wheels nvidia-cudnn-cu12 9.28.0.42 and nvidia-cudnn-cu13 "
        "9.24.0.43: no libcudnn*.so.9 needs libcudart (libcudnn.so.9: libdl, libpthread, librt, libstdc++, libm, "
        "libgcc_s, libc, RPATH $ORIGIN; libcudnn_graph.so.9 adds libz and the RUNPATH $ORIGIN:$ORIGIN/../../cublas/"
        "lib:$ORIGIN/../../cuda_nvrtc/lib, and :$ORIGIN/../../cu13/lib in the cu13 build), so each build brings its "
        "own CUDA runtime and finds cuBLAS and NVRTC of its own CUDA major; cuDNN 9 support matrix "
        "(https://docs.nvidia.com/deeplearning/cudnn/backend/latest/reference/support-matrix.html): one build per "
        "CUDA major (cuDNN for CUDA 12.x, for CUDA 13.x)"
    ),
    "cudnn-911-floor": (
        "cuDNN 9.11 and later support compute capability 7.5 and later only. The cuDNN 9.11.0 release notes and "
        "support matrix could not be read here; what was read: pytorch/pytorch torch/backends/cudnn/__init__.py @ "
        "017943b70f6920c395e3b6dac100e2cd7ecfa92a ('if __cudnn_version >= 91100 and min_cc < (7, 5)': 'cuDNN "
        "version ... is not compatible with devices with SM < 7.5'), and the PyPI wheels: libcudnn_ops.so.9 of "
        "nvidia-cudnn-cu12 9.10.2.21 carries SASS for sm_50 to sm_120, that of 9.11.0.98 for sm_75 to sm_120 only, "
        "as do its adv, cnn and engines_runtime_compiled libraries; its only PTX is compute_120. Not a complete drop: "
        "libcudnn_engines_precompiled.so.9 of 9.11.0.98 still carries sm_50 (278 cubins), sm_60 (278), sm_61 (279) "
        "and sm_70 (291) beside sm_75 (441) to sm_121 (compat-audit 2026-11-24 D5: cuobjdump --list-elf of "
        "nvidia-cuda-cuobjdump 13.4.92 and a .nv_fatbin header reader, agreeing). The floor rests on four of the five "
        "kernel libraries and on PyTorch's refusal"
    ),
    "cudnn-9-encoding": (
        "cuDNN 9.0.0 release notes: CUDNN_VERSION is major*10000 + minor*100 + patch from 9.0.0 "
        "(https://docs.nvidia.com/deeplearning/cudnn/release-notes/index.html)"
    ),
    "cuda-gpus": (
        "NVIDIA 'CUDA GPU Compute Capability': https://developer.nvidia.com/cuda-gpus and "
        "https://developer.nvidia.com/cuda-legacy-gpus"
    ),
    "cuda-env-vars": (
        "CUDA C++ Programming Guide, 'CUDA Environment Variables': CUDA_VISIBLE_DEVICES (indices, UUIDs, MIG ids; "
        "devices after the first invalid entry are hidden) and CUDA_DEVICE_ORDER (FASTEST_FIRST default, "
        "PCI_BUS_ID): https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#env-vars"
    ),
    "mig-enumeration": (
        "NVIDIA Multi-Instance GPU User Guide, 'CUDA Device Enumeration': a MIG device is MIG-<UUID> in "
        "CUDA_VISIBLE_DEVICES from driver R470, MIG-<GPU-UUID>/<GPU instance ID>/<compute instance ID> before; "
        "driver < 570: 'CUDA can only enumerate a single compute instance; CUDA will not enumerate non-MIG GPU if any "
        "compute instance is enumerated on any other GPU'; driver >= 570: 'enumeration of a single compute instance "
        "(CI) per GPU instance (GI) is supported', 'CUDA will enumerate a non-MIG GPU even if any compute instance is "
        "enumerated on any other GPU', 'CUDA supports at most 64 MIG instances across all GPUs': "
        "https://docs.nvidia.com/datacenter/tesla/mig-user-guide/mig-device-names.html"
    ),
    "cudnn-892-notes": (
        "cuDNN 8.9.2 release notes, quoted in https://gitlab.com/nvidia/container-images/cuda/-/issues/217: 'Use of "
        "CUDNN_ATTR_ENGINE_GLOBAL_INDEX = 15 for fused convolutions with bias and ReLU could generate incorrect "
        "results on the Pascal GPU architectures for cuDNN 8.9 releases. This issue is now fixed in 8.9.2.' The "
        "issue adds 'another similar issue related to Maxwell GPUS (fxied in 8.9.3)' [sic] (the 8.9.3 notes, "
        "https://docs.nvidia.com/deeplearning/cudnn/archives/cudnn-893/release-notes/index.html, exist but only their "
        "opening could be read here)"
    ),
    "cudnn-765-notes": (
        "cuDNN 7.6.5 release notes, known issues: RNN and multi-head attention nondeterministic when built with "
        "CUDA 10.2 cuBLAS (https://docs.nvidia.com/deeplearning/cudnn/archives/cudnn-801-preview/"
        "cudnn-release-notes/rel_7xx.html)"
    ),
    "nvrtc-wheels": (
        "File lists of the PyPI wheels nvidia-cuda-nvrtc-cu11 11.8.89 (nvidia/cuda_nvrtc/lib/libnvrtc.so.11.2, "
        "libnvrtc-builtins.so.11.8), nvidia-cuda-nvrtc-cu12 12.5.82 (nvidia/cuda_nvrtc/lib/libnvrtc.so.12, "
        "libnvrtc-builtins.so.12.5) and nvidia-cuda-nvrtc 13.0.88 (nvidia/cu13/lib/libnvrtc.so.13, "
        "libnvrtc-builtins.so.13.0); the same names in pytorch/pytorch#145582 ('libnvrtc-builtins.so.11.8 "
        "libnvrtc-builtins.so.12.4 libnvrtc.so.11.2 libnvrtc.so.12'); pytorch/pytorch#57204: 'NVRTC versioning has "
        "changed starting 11.3'"
    ),
    "nvrtc-builtins": (
        "pytorch/pytorch#58101: 'When jit-compiling cuda code, libnvrtc tries to dlopen libnvrtc-builtins.so.11.1'; "
        "pytorch/builder#908: 'NVRTC from CUDA-11.X have changed to look for versioned libnvrtc-builtins.so files'"
    ),
    "cudnn-87-nvrtc": (
        "pytorch/pytorch#97041 (malfet): opening libcudnn_cnn_infer.so.8 leaves 'dlerror is libnvrtc.so: cannot open "
        "shared object file: No such file or directory'; pytorch/pytorch#99451 'Workaround for CuDNN-8.7+ load bug': "
        "'Preload cudnn_cnn_infer and consume dlerror to prevent spurious call to abort() from libcudnn.so.8, if "
        "libnvrtc.so is missing on the system'. Measured: libcudnn_cnn_infer.so.8 and libcudnn_adv_infer.so.8 of the "
        "nvidia-cudnn-cu11 8.7.0.84 wheel name 'libnvrtc.so', and no nvidia-cuda-nvrtc wheel ships that name "
        "(see nvrtc-wheels). TensorFlow 2.14's [and-cuda] extra pins no NVRTC wheel at all"
    ),
    "cublas-wheels": (
        "File lists of the PyPI wheels nvidia-cublas-cu11 11.11.3.6 (nvidia/cublas/lib/libcublas.so.11, "
        "libcublasLt.so.11), nvidia-cublas-cu12 12.5.3.2 (nvidia/cublas/lib/libcublas.so.12, libcublasLt.so.12) and "
        "nvidia-cublas 13.0.2.14 (nvidia/cu13/lib/libcublas.so.13, libcublasLt.so.13)"
    ),
    "nccl-version-code": (
        "NVIDIA/nccl src/nccl.h.in: 'ncclResult_t ncclGetVersion(int *version)' returns NCCL_VERSION_CODE, coded by "
        "'#define NCCL_VERSION(X,Y,Z) (((X) <= 2 && (Y) <= 8) ? (X) * 1000 + (Y) * 100 + (Z) : (X) * 10000 + (Y) * "
        "100 + (Z))' (2.32.3: NCCL_VERSION_CODE 23203); https://github.com/NVIDIA/nccl/blob/master/src/nccl.h.in"
    ),
    "nccl-version-string": (
        'NVIDIA/nccl src/init.cc: \'// Pre-process the string so that running "strings" on the lib can quickly '
        'reveal the version. #define VERSION_STRING "NCCL version " STR(NCCL_MAJOR) "." STR(NCCL_MINOR) "." '
        'STR(NCCL_PATCH) NCCL_SUFFIX "+cuda" STR(CUDA_MAJOR) "." STR(CUDA_MINOR)\'; read in the PyPI wheels '
        "nvidia-nccl-cu12 2.32.3 ('NCCL version 2.32.3+cuda12.9' in nvidia/nccl/lib/libnccl.so.2, whose .rodata "
        "holds it) and nvidia-nccl-cu13 2.30.7; https://github.com/NVIDIA/nccl/blob/master/src/init.cc"
    ),
    "nccl-wheels-one-folder": (
        "pytorch/pytorch#186591 'undefined symbol: ncclCommResume' (ptrblck: 'You are mixing various libraries "
        "including: nvidia-nccl-cu12==2.29.3, nvidia-nccl-cu13==2.29.7'), https://github.com/pytorch/pytorch/issues/"
        "186591; pytorch/pytorch#119932 'undefined symbol: ncclCommRegister' ('you have another package that also "
        "provides the NCCL library, but the versions are incompatible'), https://github.com/pytorch/pytorch/issues/"
        "119932; the RECORDs of nvidia-nccl-cu12 2.32.3 and nvidia-nccl-cu13 2.30.7 both list "
        "nvidia/nccl/lib/libnccl.so.2 (read in one environment holding both, 2026-11-29)"
    ),
    "jax-gpu-floors": (
        "JAX installation docs, 'NVIDIA GPU': 'On CUDA 12, JAX supports NVIDIA GPUs that have SM version 5.2 "
        "(Maxwell) or newer. Note that Kepler-series GPUs are no longer supported by JAX since NVIDIA has dropped "
        "support for Kepler GPUs in its software. On CUDA 13, JAX supports NVIDIA GPUs that have SM version 7.5 or "
        "newer. NVIDIA dropped support for previous GPUs in CUDA 13.': https://docs.jax.dev/en/latest/installation.html"
        "#nvidia-gpu (jax-ml/jax docs/installation.md @ cec06d11)"
    ),
    "cublas-version-calls": (
        "cuBLAS Library, 'cublasGetProperty()': returns the value of the requested property (libraryPropertyType: "
        "MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL), and 'cublasGetCudartVersion()': the version of the CUDA Runtime "
        "library it was built with; the same for cuBLASLt, 'cublasLtGetProperty()', 'cublasLtGetCudartVersion()': "
        "https://docs.nvidia.com/cuda/cublas/index.html. Measured on the PyPI wheels: nvidia-cublas-cu12 12.9.3.13 "
        "answers 12, 9, 3 and 12080 from both libraries; nvidia-cublas 13.1.1.3 answers 13, 1, 1 and 13000"
    ),
    "cublas-lt-same-release": (
        "pytorch/pytorch#91067 and #174320 '[CUDA] Fix cuBLAS/cuBLASLt library version mismatch': 'libcublas.so uses "
        "its RUNPATH pointing to [$ORIGIN] to link against libcublasLt.so. This would cause the system "
        "libcublasLt.so to be used ... If the system installed lib version mismatches, we would see ... undefined "
        "symbol: cublasLtHSHMatmulAlgoInit, version libcublasLt.so.11 ... or CUBLAS_STATUS_INVALID_VALUE': "
        "https://github.com/pytorch/pytorch/pull/174320, https://github.com/pytorch/pytorch/issues/91067"
    ),
    "cudnn-wheels": (
        "The RECORDs of the PyPI wheels nvidia-cudnn-cu12 9.28.0.42 and nvidia-cudnn-cu13 9.24.0.43 both list "
        "nvidia/cudnn/lib/libcudnn.so.9 (read in one environment holding both, 2026-11-29)"
    ),
    "cudart-wheels": (
        "File lists of the PyPI wheels nvidia-cuda-runtime-cu11 11.8.89 (nvidia/cuda_runtime/lib/libcudart.so.11.0), "
        "nvidia-cuda-runtime-cu12 12.5.82 (nvidia/cuda_runtime/lib/libcudart.so.12) and nvidia-cuda-runtime 13.0.96 "
        "(nvidia/cu13/lib/libcudart.so.13)"
    ),
    "cudnn-8-cublas": (
        "cuDNN 9.0.0 release notes: 'cuDNN no longer depends on the cuBLAS library; instead cuDNN now depends on the "
        "cuBLASLt library' (https://docs.nvidia.com/deeplearning/cudnn/release-notes.html). Measured: "
        "libcudnn_ops_infer.so.8 of the nvidia-cudnn-cu11 8.7.0.84 wheel has DT_NEEDED libcublas.so.11 and "
        "libcublasLt.so.11, RUNPATH $ORIGIN:$ORIGIN/../../cublas/lib"
    ),
    "cudnn-9-cublaslt": (
        "cuDNN 9.0.0 release notes: 'cuDNN now depends on the cuBLASLt library for certain primitive linear algebra "
        "operators' (https://docs.nvidia.com/deeplearning/cudnn/release-notes.html). Measured: libcudnn_adv.so.9 and "
        "libcudnn_engines_precompiled.so.9 of nvidia-cudnn-cu12 9.10.2.21 and 9.11.0.98 name 'libcublasLt.so.12'"
    ),
    "cudnn-9-nvrtc": (
        "cuDNN 9 loads NVRTC at run time and declares no dependency on it: jax-ml/jax#29462 (hawkinsp, 'Works around "
        "a bug in CUDNN where it does not declare or locate its own NVRTC dependency'), NixOS/nixpkgs#471394 ('cudnn "
        "uses nvrtc at runtime. this dependency wasn't specified anywhere'). Measured 2026-11-26 in the PyPI wheels "
        "(nvidia/cudnn/lib/libcudnn_graph.so.9 read by HTTP range requests, readelf -d and strings): nvidia-cudnn-cu12 "
        "9.10.2.21 'Library runpath: [$ORIGIN:$ORIGIN/../../cublas/lib:$ORIGIN/../../nvrtc/lib]', 9.11.0.98 "
        "'[$ORIGIN:$ORIGIN/../../cublas/lib:$ORIGIN/../../cuda_nvrtc/lib]', both with the strings 'libnvrtc.so' and "
        "'libnvrtc.so.%d' and no DT_NEEDED on NVRTC; the NVRTC wheels' folders as in nvrtc-wheels"
    ),
    "cudnn-zlib": (
        "cupy/cupy#6226: 'cuDNN 8.3.0+ requires zlib as a dependency. This is not a problem for most Linux "
        "environments (because zlib often comes with the default installation), but Windows users are required to "
        "install the DLL by hand', citing https://docs.nvidia.com/deeplearning/cudnn/install-guide/index.html"
        "#install-zlib-windows ('Add the directory path of zlibwapi.dll to the environment variable'), and 'the only "
        "possible location to install zlibwapi.dll is C:\\Windows\\System32 or the directory where python.exe "
        "resides, because the DLL search path has been restricted in Python 3.8+'; the message 'Could not locate "
        "zlibwapi.dll. Please make sure it is in your library path!' in microsoft/onnxruntime#17510 (cuDNN 8.5.0.96). "
        "Measured: libcudnn_cnn_infer.so.8 of the 8.7.0.84 wheel and every sub-library of the 9.10.2.21 and "
        "9.11.0.98 wheels have DT_NEEDED libz.so.1"
    ),
    "python-38-dll": (
        "Python 3.8 changelog (bpo-36085): DLL dependencies of extension modules and ctypes are resolved only from "
        "the application folder, System32 and os.add_dll_directory folders, no longer PATH; "
        "tensorflow/tensorflow#48868"
    ),
    "torch-pypi-wheels": (
        "The manylinux x86_64 cp311 wheels of torch 2.0.0 to 2.15.0 on PyPI (and the cp310 manylinux1 wheels of 1.13.0 "
        "and 1.13.1, read 2026-11-26: 'nvidia-cudnn-cu11 (==8.5.0.96)', 'nvidia-cuda-runtime-cu11 (==11.7.99)', "
        "\"__version__ = '1.13.1+cu117'\", NVCC_FLAGS_EXTRA sm_37 to sm_86) (the CUDA variant PyPI carries), read "
        "2026-11-22 by HTTP range requests into each wheel: *.dist-info/METADATA ('Requires-Dist: "
        "nvidia-cudnn-cu12 (==9.1.0.70)', 'nvidia-cuda-runtime-cu12 (==12.4.127)' for 2.5.1; 'cuda-toolkit[cublas,"
        "cudart,...]==13.2.2', 'nvidia-cudnn-cu13==9.26.0.51' for 2.15.0), torch/version.py (\"__version__ = "
        "'2.5.1+cu124'\", \"cuda: Optional[str] = '12.4'\"), torch/include/ATen/cuda/CUDAConfig.h ('#define "
        'NVCC_FLAGS_EXTRA "-gencode;arch=compute_50,code=sm_50;..."\') and, from 2.8.0, '
        'torch/include/caffe2/core/macros.h (\'{"CUDNN_VERSION", "9.8.0"}\'). The cu118/cu126/... variants on '
        "download.pytorch.org could not be reached from here"
    ),
    "cuda-toolkit-13-extras": (
        "METADATA of cuda-toolkit 13.0.3.0 from PyPI, installed with torch 2.14.1, read 2026-11-29: each component "
        "wheel under the extra of its name (\"nvidia-cuda-runtime==13.0.96.*; ... extra == 'cudart'\", "
        "\"nvidia-cublas==13.1.1.3.*; ... extra == 'cublas'\", cufft, cufile, cupti (nvidia-cuda-cupti), curand, "
        "cusolver, cusparse, nvjitlink, nvrtc (nvidia-cuda-nvrtc), nvtx); torch 2.14.1 pins "
        "'cuda-toolkit[cublas,cudart,cufft,cufile,cupti,curand,cusolver,cusparse,nvjitlink,nvrtc,nvtx]==13.0.3'"
    ),
    "cuda-toolkit-extras": (
        "METADATA of the PyPI wheels cuda-toolkit 13.0.2, 13.0.3 (published as 13.0.3.0) and 13.2.2 "
        "(cuda_toolkit-*-py2.py3-none-any.whl), read 2026-11-26 with pip --use-feature=fast-deps --dry-run --report: "
        "\"nvidia-cuda-runtime==13.0.96.*; ... extra == 'cudart'\" (13.0.2, 13.0.3.0), "
        '"nvidia-cuda-runtime==13.2.86.*; ... extra == \'cudart\'" (13.2.2), "nvidia-curand==10.4.0.35.*; ... extra '
        "== 'curand'\" (13.0.x). torch pins the meta-package from 2.11: "
        "'cuda-toolkit[cublas,cudart,cufft,cufile,cupti,curand,cusolver,cusparse,nvjitlink,nvrtc,nvtx]==13.0.3' "
        "(2.14.1), 'cuda-toolkit[cublas,cudart,cufft,cufile,cupti,cusolver,cusparse,nvjitlink,nvrtc,nvtx]==13.2.2' "
        "(2.15.0, no curand); and of cuda-toolkit 13.3.0, 13.3.1, 13.4.1.0, 13.4.3 and 13.5.0, downloaded and read "
        '2026-11-29: "nvidia-cuda-runtime==13.3.29.*" (13.3.0, 13.3.1), "==13.4.49.*" (13.4.1.0), '
        '"==13.4.92.*" (13.4.3), "==13.5.37.*" (13.5.0), each for the \'cudart\' extra; the index has no '
        "cuda-toolkit 13.4.0 (13.4 GA is versioned 13.4.1)"
    ),
    "torch-preload-2.15": (
        "torch/__init__.py of the torch 2.15.0 wheel from PyPI (cp312 manylinux_2_28_x86_64, read 2026-11-26 by HTTP "
        "range requests): _preload_cuda_deps' cuda_libs list is cublas (libcublasLt, libcublas), cudnn, cuda_nvrtc "
        "(libnvrtc, libnvrtc-builtins), cuda_runtime, cuda_cupti, cufft, nvjitlink, cusparse, cusparselt, cusolver, "
        "nccl, nvshmem, cufile, then nvtx libnvToolsExt.so.*[0-9]: no curand (2.14.1 has ('curand', "
        "'libcurand.so.*[0-9]'))"
    ),
    "torch-arch-list": (
        "pytorch/pytorch torch/cuda/__init__.py get_arch_list(): 'arch_flags = torch._C._cuda_getArchFlags()' ... "
        "'return arch_flags.split()'; torch/csrc/cuda/Module.cpp THCPModule_getArchFlags: 'static const char* flags "
        "= C10_STRINGIZE(CUDA_ARCH_FLAGS)'; pytorch/pytorch#198204: TORCH_CUDA_ARCH_LIST='8.0;8.6+PTX' gives "
        "'sm_80 sm_86 compute_86'; pytorch/pytorch#41212 (malfet) added it as 'list of architecture torch_cuda were "
        "compiled with'; .ci/manywheel/build_cuda.sh @ 799d09f215740cc4fb78e0bd278dce469e33ddcb sets the wheels' "
        "TORCH_CUDA_ARCH_LIST (13.0: '7.5;8.0;8.6;9.0;10.0;12.0+PTX'). Measured on a lent H200, torch "
        "2.11.0+cu130: get_arch_list() ['sm_75', 'sm_80', 'sm_86', 'sm_90', 'sm_100', 'sm_120'], the one such "
        "string in libtorch_python.so's .rodata, while libtorch_cuda.so's fatbin holds sm_89, sm_90a, sm_100a, "
        "sm_103a, sm_120a and sm_121a besides"
    ),
    "torch-cudnn-rule": (
        "torch/backends/cudnn/__init__.py in the torch wheels 2.5.1, 2.6.0, 2.7.1, 2.8.0, 2.9.0, 2.10.0, 2.11.0 and "
        "2.15.0 from PyPI: 'if runtime_major != compile_major: cudnn_compatible = False / elif runtime_major < 7 or "
        "not _cudnn.is_cuda: cudnn_compatible = runtime_minor == compile_minor / else: cudnn_compatible = "
        "runtime_minor >= compile_minor'; from 2.10.0 (not in 2.9.0): 'if __cudnn_version >= 91100 and min_cc < "
        '(7, 5): raise RuntimeError(f"cuDNN version {__cudnn_version} is not compatible with devices with SM < '
        '7.5. ...")\'; \'if not cudnn_compatible: if os.environ.get("PYTORCH_SKIP_CUDNN_COMPATIBILITY_CHECK", '
        '"0") == "1": return True\' comes before that check (the 2.15.0 wheel, compat-audit D2; pytorch/pytorch '
        "torch/backends/cudnn/__init__.py), so the variable skips the SM check too when the versions disagree, and "
        "changes nothing when they agree"
    ),
    "jax-plugin-pins": (
        'Requires-Dist ...; extra == "with-cuda" in the METADATA of the manylinux x86_64 wheels of '
        "jax-cuda12-plugin 0.6.0, 0.7.0, 0.8.0, 0.9.0, 0.10.2, 0.11.0, 0.11.1, 0.11.2, 0.12.0, 0.12.0.1 and "
        "jax-cuda13-plugin 0.7.2, 0.8.0, 0.10.2, 0.11.0, 0.12.0 on PyPI (read 2026-11-22 by HTTP range requests): "
        "'nvidia-cudnn-cu12<10.0,>=9.8', 'nvidia-cuda-runtime-cu12>=12.1.105', 'nvidia-cublas-cu12>=12.1.3.1'; "
        'cuDNN from 0.11.2: \'nvidia-cudnn-cu12<10.0,>=9.10.2.21; sys_platform == "linux" and extra == '
        "\"with-cuda\"' in 0.11.2, 0.12.0 and 0.12.0.1, '>=9.8' still in 0.11.1 (read again 2026-11-26 with pip "
        "--use-feature=fast-deps --dry-run --report; from 0.11 the wheels say Requires-Python '>=3.12'); "
        "'nvidia-cudnn-cu13<10.0,>=9.12.0.46', 'nvidia-cuda-runtime>=13.0.48', 'nvidia-cublas>=13.0.0.19'. "
        "jax_plugins/cuda/plugin_setup.py in jax-ml/jax only has placeholders filled at build time"
    ),
    "jax-check-cuda-versions": (
        "jax-ml/jax jax_plugins/cuda/__init__.py, _check_cuda_versions, identical checks at jax-v0.7.0 "
        "(8bc0ae6da4f6d334d03be7b76be841d72a56d330) to jax-v0.11.0 (a1521744c6dc074443fe549f19f48d7197abf759), "
        "with jaxlib/cuda/versions.cc ('m.def(\"cudnn_build_version\", []() { return CUDNN_VERSION; })') and "
        "versions_helpers.cc (cudnnGetVersion(), cudaRuntimeGetVersion() unscaled; compute capability 'major * 10 "
        "+ minor'): 'min_supported_version = build_version // scale_for_comparison', 'passed = "
        "min_supported_version <= version'; CUDA 'scale_for_comparison=10, min_supported_version=12010'; cuDNN "
        "'scale_for_comparison=100'; cuBLAS 'min_supported_version=120100'; cuSPARSE 12100; cuPTI 18; "
        "'cudnn_version == 91000 and cuda_versions.cudnn_build_version() != 91000'; 'cudnn_version < 91001 and "
        "cublas_version is not None and cublas_version >= 120900 and local_device_count > 1'; from jax-v0.9.1 "
        "(58cb6e556c996bf0361bca9e64890a551e513280, absent at jax-v0.9.0) the warning '120800 <= cublas_version < "
        "130200 and any(100 <= cc < 120 for cc in compute_capabilities)'. The two refusals (cuDNN 9.10.0 and the "
        "multi-GPU cuBLASLt 12.9 one) are there from jax-v0.6.2 (1ad05bb26105f23ee7728b36cca12901fe70e187) and "
        "absent at jax-v0.6.1 (382506f1705db9c9ac348b9783497e310feef6a5); local_device_count is "
        "'cuda_versions.cuda_device_count()' when xb.CUDA_VISIBLE_DEVICES (the flag 'jax_cuda_visible_devices', "
        "default 'all') is 'all', else the number of its comma-separated entries"
    ),
    "jax-xla-cudnn-rule": (
        "JAX's CUDA plugin embeds XLA's stream executor, whose cuDNN check binds: openxla/xla (and tensorflow/"
        "tensorflow third_party/xla @ 00de4e7b45bda74220089bca48f4d5d2287f79b4) xla/stream_executor/cuda/"
        "cuda_dnn.cc, IsSourceCompatibleWithCudnnLibrary: 'return loaded_version.major_version() == "
        "source_version.major_version() && loaded_version.minor_version() >= source_version.minor_version();' "
        "('Patch releases are always forward and backward compatible and therefore need not match'). Hit by JAX: "
        "jax-ml/jax#16901 (hawkinsp: 'You installed a version of jax that needs CuDNN 8.6, but CuDNN 8.5 was found'), "
        "jax-ml/jax#24180 with cuDNN 9 ('Loaded runtime CuDNN library: 9.0.0 but source was compiled with: 9.1.1 ... "
        "XlaRuntimeError: FAILED_PRECONDITION: DNN library initialization failed'), conda-forge/jaxlib-feedstock#329 "
        "('cuda_dnn.cc:456] Loaded runtime CuDNN library: 9.10.1 but source was compiled with: 9.13.1. CuDNN library "
        "needs to have matching major version and equal or higher minor version'); jax-ml/jax#15361"
    ),
    "jax-check-cuda-versions-060": (
        "jax-ml/jax jax/_src/xla_bridge.py @ jax-v0.6.0 (127aa7621868cb77e552b5d1f90e4a42b09c13fa), "
        "_check_cuda_versions: cuDNN checked with 'scale_for_comparison=100, min_supported_version=9100' against the "
        "unscaled cudnnGetVersion() (the 9110-versus-90110 encoding slip of jax-ml/jax#24069)"
    ),
    "jax-preload": (
        "jax-ml/jax jax_plugins/cuda/__init__.py, _load_nvidia_libraries ('We prefer the Python packages, if "
        "present. If not, we fall back to loading them from LD_LIBRARY_PATH'): _load(module, libraries) loads "
        "pathlib.Path(nvidia.<module>.__path__[0]) / 'lib' / lib with ctypes, errors ignored; the list: "
        "cuda_runtime libcudart.so.12, cu13 libcudart.so.13, cuda_nvrtc libnvrtc.so.12, cu13 libnvrtc.so.13, cublas "
        "libcublas.so.12 and libcublasLt.so.12, cu13 libcublas.so.13 and libcublasLt.so.13, nccl libnccl.so.2, "
        "cuda_cupti libcupti.so.12, cu13 libcupti.so.13, cusparse libcusparse.so.12, cu13 libcusparse.so.12, "
        "cusolver libcusolver.so.11, cu13 libcusolver.so.12, cufft libcufft.so.11, cu13 libcufft.so.12, nvshmem "
        "libnvshmem_host.so.3, cudnn libcudnn.so.9; jax-ml/jax#19604"
    ),
    "tf-dlopen-list": (
        "tensorflow/tensorflow third_party/xla/xla/tsl/platform/default/dlopen_checker.cc, TryDlopenCUDALibraries: "
        "GetCudaRuntimeDsoHandle, GetCublasDsoHandle, GetCublasLtDsoHandle, GetCufftDsoHandle, "
        "GetCusolverDsoHandle, GetCusparseDsoHandle, GetCudnnDsoHandle; any failure returns 'Cannot dlopen all CUDA "
        "libraries.' (logged as 'Cannot dlopen some GPU libraries ... Skipping registering GPU devices')"
    ),
    "tf-dlopen-list-cuda11": (
        "tensorflow/tensorflow tensorflow/tsl/platform/default/dlopen_checker.cc @ "
        "29cfb2f404315df45a97003bd508da6546c69d26, TryDlopenCUDALibraries: 'auto curand_status = "
        "CachedLoader::GetCurandDsoHandle();' ... '!cufft_status.status().ok() || !curand_status.status().ok() || ...' "
        "-> 'Cannot dlopen all CUDA libraries.' (the earlier tensorflow/stream_executor/platform/default/"
        "dlopen_checker.cc the same; the later third_party/xla/.../tsl/platform/default/dlopen_checker.cc has no "
        "cuRAND). The CUDA 11 soname: a CUDA 11.4 toolkit's lib64 lists 'libcurand.so.10' -> "
        "'libcurand.so.10.2.5.120' (sony/nnabla#1063)"
    ),
    "glibc-already-loaded": (
        "glibc elf/dl-load.c, _dl_map_object: 'Look for this name among those already loaded.' ... 'If the "
        "requested name matches the soname of a loaded object, use that object.' (walked in load order; a path "
        "matches only the same file, so a load by absolute path maps a second copy that requests by name never "
        "reach); measured on an H100, tests/data/real-gpu/h100-facts.json (two_cudnns)"
    ),
    "framework-import-objects": (
        "torch/__init__.py in the torch wheels on PyPI, _load_global_deps: ctypes.CDLL(libtorch_global_deps.so), "
        "re-raising an OSError that names no CUDA library; torch._C links libtorch.so, which links libtorch_cuda.so "
        "(pytorch/pytorch#165812 and #104259: 'from torch._C import *' fails with 'ImportError: libcudnn.so.9 "
        "(.8): cannot open shared object file'). tensorflow/python/pywrap_tensorflow.py imports "
        "_pywrap_tensorflow_internal, linked against libtensorflow_framework.so.2: tensorflow/tensorflow#30488 and "
        "deepmodeling/deepmd-kit#248 "
        "('libtensorflow_framework.so.2: cannot open shared object file: No such file or directory')"
    ),
    "torch-preload": (
        "torch/__init__.py in the torch wheels on PyPI, _load_global_deps: ctypes.CDLL(libtorch_global_deps.so); "
        "on OSError naming a CUDA library, for each (lib_folder, lib_name): _preload_cuda_deps, 'Preloads cuda deps "
        "if they could not be found otherwise', loading the first glob of os.path.join(path, 'nvidia', lib_folder, "
        "'lib', lib_name) over sys.path"
    ),
    "torch-preload-2.14": (
        "torch/__init__.py of the torch 2.14.1+cu130 wheel from PyPI, read 2026-11-22 in an installed copy: "
        "_load_global_deps loads libtorch_global_deps.so, then, if /proc/self/maps shows libcudart.so, calls "
        "_preload_cuda_deps(required=False) ('front-load any component wheels that ARE present now ... so they win "
        "libtorch_cpu's DT_NEEDED soname lookups'); _preload_cuda_lib takes, per sys.path entry, "
        "glob(path/nvidia/<lib_folder>/lib/<lib_name>) + glob(path/nvidia/cu<major>/lib/<lib_name>) + "
        "glob(path/<lib_folder>/lib/<lib_name>), the first entry with a match, its first match; the list: cublas "
        "libcublasLt.so.*[0-9], cublas libcublas.so.*[0-9], cudnn, cuda_nvrtc (libnvrtc, libnvrtc-builtins), "
        "cuda_runtime, cuda_cupti, cufft, curand, nvjitlink, cusparse, cusparselt, cusolver, nccl, nvshmem, cufile, "
        "then nvtx libnvToolsExt.so.*[0-9]. Confirmed by /proc/self/maps after import torch (tox -e frameworks)"
    ),
    "cupy-no-cudnn": (
        "CuPy's upgrade guide, CuPy v14, 'Dropping cuDNN Support': 'CuPy v14 no longer supports cuDNN. All "
        "cuDNN-related functionality has been completely removed from CuPy.' (https://docs.cupy.dev/en/latest/"
        "upgrade.html)"
    ),
    "cupy-static-cudart": (
        "CuPy 14 links the CUDA runtime statically: cupy-cuda13x 14.2.0 on an H100 had no libcudart mapped after "
        "cupy.ones(4).sum(), and cupy.cuda.runtime.runtimeGetVersion() said 13020 on a driver whose CUDA is 13.0 "
        "(tests/data/real-gpu/h100-facts.json, README.md beside it); docs/loading.md, 'CuPy'"
    ),
    "cupy-install-ctk": (
        "CuPy's wheel description on PyPI (cupy-cuda13x, cupy-cuda12x 14.x): 'You need to install CUDA Toolkit 13.x "
        "locally to use these packages. Alternatively, you can install this package together with all needed CUDA "
        "components from PyPI by passing the [ctk] tag: pip install cupy-cuda13x[ctk]'; "
        "https://docs.cupy.dev/en/stable/install.html, 'Installing CuPy from PyPI'"
    ),
    "cupy-pathfinder-loads": (
        "cupy/cupy cupy_backends/cuda/libs/__init__.py @ 1f8c4cf0afcb8369e572bdfa23de07deb08870f1: the submodules "
        "'cublas', 'cusolver', 'cusparse', 'curand', 'cufft', 'nccl' call _pathfinder.load_nvidia_dynamic_lib(name) "
        'before their import and raise ImportError on DynamicLibNotFoundError; \'Do NOT add "nvrtc" here. It is '
        "run-time linked ... its loading is further deferred (to inside SoftLink)'. Field test (issue 20 case 4): "
        "'DynamicLibNotFoundError: Failure finding \"libnvrtc.so.13 or libnvrtc.so.12\"'"
    ),
    "pathfinder-search": (
        "NVIDIA/cuda-python cuda_pathfinder, cuda/pathfinder/_dynamic_libs/load_nvidia_dynamic_lib.py (release "
        "1.9.0, PyPI cuda-pathfinder): load_nvidia_dynamic_lib's 'Search order': 0. already loaded in the current "
        "process, 1. NVIDIA Python wheels (site-packages), 2. Conda environment (CONDA_PREFIX), 3. OS default "
        "mechanisms (dlopen), 4. environment variables (CUDA_PATH, then CUDA_HOME); _load_lib_no_cache loads a "
        "descriptor's dependencies before the library. search_steps.py: EARLY_FIND_STEPS (find_in_site_packages, "
        "find_in_conda), then system search, then LATE_FIND_STEPS; _utils/find_sub_dirs.py: the site-packages "
        "folders are site.getsitepackages(), the user site inserted after a venv's own when site.ENABLE_USER_SITE"
    ),
    "pathfinder-descriptors": (
        "NVIDIA/cuda-python cuda_pathfinder, cuda/pathfinder/_dynamic_libs/descriptor_catalog.py (release 1.9.0): "
        "nvrtc ('libnvrtc.so.13', 'libnvrtc.so.12'; site_packages_linux 'nvidia/cu13/lib', "
        "'nvidia/cuda_nvrtc/lib'), cublas (dependencies ('cublasLt',)), cublasLt, cufft, curand, cusolver "
        "(dependencies nvJitLink, cusparse, cublasLt, cublas), cusparse ('libcusparse.so.12'; dependencies "
        "('nvJitLink',)), nvJitLink; default anchor_rel_dirs_linux ('lib64', 'lib')"
    ),
    "ort-cuda-ep-requirements": (
        "ONNX Runtime docs, CUDA Execution Provider, 'Requirements': "
        "https://onnxruntime.ai/docs/execution-providers/CUDA-ExecutionProvider.html ('ONNX Runtime built with cuDNN "
        "8.x is not compatible with cuDNN 9.x, and vice versa'; 'Because of Nvidia CUDA Minor Version Compatibility, "
        "ONNX Runtime built with CUDA 11.8 are compatible with any CUDA 11.x version; ONNX Runtime built with CUDA "
        "12.x are compatible with any CUDA 12.x version'; CUDA 12.x table: '1.19.x 12.x 9.x', '1.18.1 12.x 9.x', "
        "'1.18.0 12.x 8.x', '1.17.x 12.x 8.x'; CUDA 11.x table: '1.19.x 11.8 8.x', '1.18.x 11.8 8.x', '1.17 1.16 "
        "1.15 11.8 8.2.4 (Linux)'), as published on onnxruntime.ai and in its copies read 2026-11-26. Which build "
        "PyPI carries, read 2026-11-29 in the page's copies: 'Note: Starting with version 1.19, CUDA 12.x becomes "
        "the default version when distributing ONNX Runtime GPU packages in PyPI'; CUDA 12.x table '1.20.x | 12.x | "
        "9.x | Avaiable in PyPI. Compatible with PyTorch >= 2.4.0 for CUDA 12.x.', '1.19.x | 12.x | 9.x | Avaiable "
        "in PyPI. ...'; CUDA 11.x table '1.20.x | 11.8 | 8.x | Not available in PyPI.', '1.19.x | 11.8 | 8.x | Not "
        "available in PyPI.', '1.18.x | 11.8 | 8.x | Available in PyPI.'; an older edition, row '1.17 | 12.2 | "
        "8.9.2.26': 'The default CUDA version for ORT 1.17 is CUDA 11.8. To install CUDA 12 package, please look at "
        "Install ORT.' The PyPI wheels before 1.21 have no capi/build_and_package_info.py (compat audit D2; it "
        "arrived with microsoft/onnxruntime#23674, 'save cuda version to capi/build_and_package_info.py'). Not "
        "encoded: a newer edition (2026-09-29), seen only as a quote in a public repository's notes, reads 'Starting "
        "with version 1.27, GPU packages published to PyPI ... are built with CUDA 13.0 by default' (the wheels agree "
        "from 1.27.0: ort-wheels-cuda-versions) and 'ONNX Runtime built with CUDA 12.8 require CUDA 12.8 or newer'; "
        "the latter was not read first-hand, so the 'any CUDA 12.x' reading above still judges the 12.8 builds "
        "(1.24-1.26)"
    ),
    "ort-wheels-cuda-versions": (
        "The onnxruntime-gpu wheels from PyPI (cp311 manylinux_2_27/2_28 x86_64) of every release from 1.21.0 to "
        "1.31.1 (1.21.0, 1.21.1, 1.22.0, 1.23.0, 1.23.2, 1.24.1, 1.24.4, 1.25.0, 1.25.1, 1.26.0, 1.27.0, 1.28.0, "
        "1.29.0, 1.30.0, 1.31.0, 1.31.1), read 2026-11-29: onnxruntime/capi/build_and_package_info.py "
        "\"cuda_version = '12.2'\" (1.21.0 to 1.23.2), \"cuda_version = '12.8'\" (1.24.1 to 1.26.0), "
        "\"cuda_version = '13.0'\" (1.27.0 to 1.31.1); METADATA extras 'cuda' ('nvidia-cuda-runtime-cu12~=12.0; "
        "extra == \"cuda\"' to 1.26.0, 'nvidia-cuda-runtime-cu13~=13.0' in 1.27.0, 'nvidia-cuda-runtime~=13.0' from "
        "1.28.0) and 'cudnn' ('nvidia-cudnn-cu12~=9.0; extra == \"cudnn\"' to 1.26.0, 'nvidia-cudnn-cu13~=9.0' from "
        "1.27.0)"
    ),
    "ort-wheel-1.31.1": (
        "The onnxruntime-gpu 1.31.1 wheel from PyPI (cp311 manylinux_2_28_x86_64), read 2026-11-26: "
        'onnxruntime/capi/build_and_package_info.py ("package_name = \'onnxruntime-gpu\'", "__version__ = '
        "'1.31.1'\", \"cuda_version = '13.0'\", no cuDNN version); METADATA 'Requires-Dist: nvidia-cudnn-cu13~=9.0; "
        'extra == "cudnn"\' and nvidia-cuda-runtime~=13.0, nvidia-curand~=10.0, nvidia-cufft~=12.0, '
        "nvidia-cuda-nvrtc~=13.0 for extra 'cuda'; readelf -d onnxruntime/capi/libonnxruntime_providers_cuda.so: "
        "NEEDED libcublasLt.so.13, libcublas.so.13, libcurand.so.10, libcudart.so.13, libcuda.so.1, no RPATH or "
        "RUNPATH; the name libcudnn.so.9 is built in its code (dlopened when the provider first uses cuDNN)"
    ),
    "ort-preload-dlls": (
        "onnxruntime/__init__.py of the onnxruntime-gpu 1.31.1 wheel, preload_dlls(): 'When the installed PyTorch is "
        "compatible (using same major version of CUDA and cuDNN), there is no need to call this function if `import "
        "torch` is done before `import onnxruntime`'; on Linux it loads by absolute path, from the site-packages "
        "folder that holds onnxruntime, nvidia/cu13/lib/{libcublasLt,libcublas,libnvrtc,libcurand,libcufft,libcudart}"
        " (CUDA 13; nvidia/<component>/lib for CUDA 12) and nvidia/cudnn/lib/libcudnn.so.9, then by name what was "
        "not found (microsoft/onnxruntime#23674 'Preload dependent DLLs')"
    ),
    "cuda-forward-compat": (
        "NVIDIA CUDA Compatibility guide, 'Forward Compatibility': 'Forward Compatibility is applicable only for "
        "systems with: NVIDIA Data Center GPUs. Select NGC Server Ready SKUs of RTX cards. Jetson boards.' and 'The "
        "CUDA forward compatibility package is available ... as cuda-compat-<cuda_major_version>-<cuda_minor_version>"
        "' (installed into /usr/local/cuda-X.Y/compat), 'this package is generated from the NVIDIA driver that matches "
        "with the CUDA release for which the compatibility is requested. For example, the cuda-compat-12-8 package is "
        "built using the NVIDIA driver libraries version 570': "
        "https://docs.nvidia.com/deploy/cuda-compatibility/forward-compatibility.html; its FAQ: 'Users can upgrade the "
        "kernel mode driver within the same branch. Sometimes this may require updating the cuda-compat-* package. "
        "This use-case is supported only for drivers on LLB and LTS branches of driver for select GPUs': "
        "https://docs.nvidia.com/deploy/cuda-compatibility/frequently-asked-questions.html"
    ),
    "datacenter-driver-branches": (
        "NVIDIA Data Center GPU Driver documentation, 'Supported Drivers and CUDA Toolkit Versions', Table 2 'CUDA and "
        "Drivers'; each edition replaces the table of the one before. The 620 edition: 'R580 | R595 | R620', 'End of "
        "Life | June 2028 | March 2027 | September 2029' (R580 and R620 Long Term Support Branch, R595 Production "
        "Branch), 'Only Long Term Support and Production branches are listed. New Feature Branches are short-lived "
        "and do not have an end-of-life date.': "
        "https://docs.nvidia.com/datacenter/tesla/drivers/620/supported-drivers-and-cuda-toolkit-versions.html; the "
        "615 edition: 'R535 | R580 | R595 | R610', 'End of Life | June 2026 | June 2028 | March 2027 | August 2026' "
        "(R535 and R580 Long Term Support Branch, R595 Production Branch, R610 New Feature Branch), R570 no longer "
        "listed: https://docs.nvidia.com/datacenter/tesla/drivers/615/supported-drivers-and-cuda-toolkit-versions.html"
        "; the unversioned page (the R580-era edition): 'R535 | R570 | R580', 'End of Life | June 2026 | February "
        "2026 | August 2028' (R570 Production Branch), and 'All other previous driver branches not listed in the "
        "table above (such as R575, R565, R560, R550, R525, R515, R510, R495, R465, R460, R455, R450, R440, R418, "
        "R410) are end of life': "
        "https://docs.nvidia.com/datacenter/tesla/drivers/supported-drivers-and-cuda-toolkit-versions.html"
    ),
    "cuda-compat-errors": (
        "NVIDIA's driver_types.h, enum cudaError, as the PyPI wheels nvidia-cuda-runtime 13.0.96 "
        "(nvidia/cu13/include/driver_types.h) and nvidia-cuda-runtime-cu12 12.9.79 "
        "(nvidia/cuda_runtime/include/driver_types.h) ship it, read 2026-11-29: 'cudaErrorSystemDriverMismatch = 803: "
        "This error indicates that there is a mismatch between the versions of the display driver and the CUDA "
        "driver. Refer to the compatibility documentation for supported versions.' and "
        "'cudaErrorCompatNotSupportedOnDevice = 804: This error indicates that the system was upgraded to run with "
        "forward compatibility but the visible hardware detected by CUDA does not support this configuration. Refer "
        "to the compatibility documentation for the supported hardware matrix or ensure that only supported hardware "
        "is visible during initialization via the CUDA_VISIBLE_DEVICES environment variable.'; the same enum on "
        "https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html"
    ),
    "container-toolkit-variables": (
        "NVIDIA Container Toolkit, 'Specialized Configurations with Docker', 'Environment Variables (OCI Spec)': "
        "NVIDIA_VISIBLE_DEVICES 'all ... the default value in base CUDA container images', 'none: No GPU is "
        "accessible, but driver capabilities are enabled', 'void or empty or unset: nvidia-container-runtime has the "
        "same behavior as runc (that is, neither GPUs nor capabilities are exposed)'; GPUs are given 'using either the "
        "--gpus option starting with Docker 19.03 or the environment variable NVIDIA_VISIBLE_DEVICES': "
        "https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/docker-specialized.html; "
        "NVIDIA_DRIVER_CAPABILITIES 'controls which driver libraries/binaries will be mounted inside the container': "
        "'compute: required for CUDA and OpenCL applications', 'utility: required for using nvidia-smi and NVML', "
        "empty or unset: the toolkit's default, 'utility,compute' since v1.4.0 (NVIDIA/nvidia-container-toolkit "
        "CHANGELOG.md, 'v1.4.0: Add 'compute' capability to list of defaults', "
        "https://github.com/NVIDIA/nvidia-container-toolkit/blob/main/CHANGELOG.md; its "
        "internal/config/image/capabilities.go: "
        "'DefaultDriverCapabilities = NewDriverCapabilities(\"utility,compute\")'; "
        "the 'utility' alone of older READMEs is that of releases before 1.4.0). How the values are matched: "
        "internal/config/image/cuda_image.go DevicesFromEnvvars (each comma-separated entry trimmed of spaces, empty "
        "entries dropped; 'Environment variable unset or empty or \"void\": return nil') and "
        "internal/config/image/devices.go NewVisibleDevices ('case envvar == \"none\"', 'case envvar == \"all\"': "
        "exact and case-sensitive, 'The order of precedence for the special values is void > none > all'; any other "
        "entry is a device ID), capabilities.go NewDriverCapabilities (entries trimmed, compared as written). Legacy "
        "images, NVIDIA/nvidia-container-toolkit @ d34b3046758cb1a5db606b2a39519c731bbf9f56: cuda_image.go IsLegacy "
        "('An image is considered legacy if it has a CUDA_VERSION environment variable defined and no "
        "NVIDIA_REQUIRE_CUDA environment variable defined'), '// Environment variable unset with legacy image: "
        "default to \"all\".', and cmd/nvidia-container-runtime-hook/container_config.go 'if !capsEnvSpecified && "
        "legacyImage { // Environment variable unset with legacy image: set all capabilities.'"
    ),
    "cudnn-wheel-first-releases": (
        "The release lists of nvidia-cudnn-cu13 and nvidia-cudnn-cu12 on the package index, read 2026-11-26 with "
        "`pip index versions`: nvidia-cudnn-cu13's oldest release is 9.12.0.46 (compat-audit F1: 'the first is "
        "9.12.0.46'); nvidia-cudnn-cu12's oldest listed is 8.8.0.121"
    ),
    "cuda-on-wsl": (
        "NVIDIA 'CUDA on WSL User Guide' (https://docs.nvidia.com/cuda/wsl-user-guide/index.html), as copied verbatim "
        "in many public repositories (the stored page is cut before this section): 'Once a Windows NVIDIA GPU driver "
        "is installed on the system, CUDA becomes available within WSL 2. The CUDA driver installed on Windows host "
        "will be stubbed inside the WSL 2 as libcuda.so, therefore users must not install any NVIDIA GPU Linux driver "
        "within WSL 2.'; its known limitations, as quoted in NVIDIA/cudf#9955: 'NVML (nvidia-smi) does not support "
        "all the queries yet'. Where the stub lives: microsoft/WSL#8587 ('libcuda.so is not in found but "
        "libcuda.so.1 is.': ldconfig -p lists 'libcuda.so.1 => /usr/lib/wsl/lib/libcuda.so.1', loading fails until "
        "LD_LIBRARY_PATH=/usr/lib/wsl/lib/; '/usr/lib/wsl/lib is mounted from C:\\Windows\\system32\\lxss'), "
        "microsoft/WSL#5548 and #11229 ('ldconfig: /usr/lib/wsl/lib/libcuda.so.1 is not a symbolic link'). The GPU: "
        "Microsoft's 'DirectX heart Linux' (https://devblogs.microsoft.com/directx/directx-heart-linux/): 'Dxgkrnl is "
        "a brand-new kernel driver for Linux that exposes the /dev/dxg device to user mode Linux'. The kernel release: "
        "'5.4.72-microsoft-standard-WSL2' (twpayne/chezmoi#1193), 'WSL2 will soon (TM) include the \"WSL2\" string in "
        "/proc/sys/kernel/osrelease' (systemd/systemd#15614); WSL 1's '4.4.0-19041-Microsoft' (powersj/whatsthis#10)"
    ),
    "driver-architecture-matrix": (
        "NVIDIA 'CUDA Toolkit, Driver, and Architecture Matrix' "
        "(https://docs.nvidia.com/datacenter/tesla/drivers/cuda-toolkit-driver-and-architecture-matrix.html): "
        "'Volta | 7.0 | CUDA 9.0 | CUDA 12.x | R580', 'Pascal | 6.0 6.1 | CUDA 8.0 | CUDA 12.x | R580', 'Maxwell | "
        "5.0 5.2 5.3 | CUDA 6.5 | CUDA 12.x | R580' (Last Driver), Turing and newer 'Ongoing'. The kernel log of a "
        "595 driver on such a GPU, NixOS/nixos-hardware#1880: 'NVRM: The NVIDIA NVIDIA GeForce GTX 1050 GPU installed "
        "in this system is supported through the NVIDIA 580.xx Legacy drivers. ... The 595.71.05 NVIDIA driver will "
        "ignore this GPU. Continuing probe... NVRM: No NVIDIA GPU found.' How the GPUs are read without NVML: "
        "NVIDIA/open-gpu-kernel-modules @ 1739a20efc4acb55fd1dc53dcc66057b70c2613c kernel-open/nvidia/nv-procfs.c "
        "('Model: \\t\\t %s', 'Bus Location: \\t %04x:%02x:%02x.%x' in /proc/driver/nvidia/gpus/<address>/information) "
        "and nv-pci-table.c (vendor PCI_VENDOR_ID_NVIDIA with class PCI_CLASS_DISPLAY_VGA or PCI_CLASS_DISPLAY_3D; "
        "Linux include/linux/pci_ids.h: 0x10de, 0x0300, 0x0302); names from the host's pci.ids "
        "(https://pci-ids.ucw.cz/)"
    ),
    "jetson-l4t": (
        "The L4T release file /etc/nv_tegra_release ('# R36 (release), REVISION: 4.0, GCID: 37537400, BOARD: generic, "
        "EABI: aarch64, DATE: ...'), as jetson-stats reads it into '36.4.0' (rbonghi/jetson_stats @ "
        "b3eb2cb996bc10e4ed1e5b6f5e96ea5c15bb0319 jtop/core/jetson_l4t.py). NVML and the integrated GPU: "
        "triton-inference-server/server#714 ('NVML is not supported on Jetson', 'failed to initialize NVML: NVML_ERROR "
        "9'), OE4T/linux-tegra-5.10#17 (nvidia-smi prints 'Driver Version: N/A', memory 'Not Supported'). No NVIDIA "
        "page saying so was found; forward compatibility names 'Jetson boards' (cuda-forward-compat)"
    ),
    "cuda-ptx-jit": (
        "NVIDIA's driver_types.h as the nvidia-cuda-runtime-cu12 12.9.79 wheel ships it "
        "(nvidia/cuda_runtime/include/driver_types.h), read 2026-11-29: 'cudaErrorUnsupportedPtxVersion = 222: This "
        "indicates that the provided PTX was compiled with an unsupported toolchain. The most common reason for this, "
        "is the PTX was generated by a compiler newer than what is supported by the CUDA driver and PTX JIT "
        "compiler.'; NVIDIA CUDA Compatibility guide, 'Minor Version Compatibility', 'Application Considerations' "
        "(https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html, as copied verbatim in "
        "public repositories; the stored page is cut before it): 'Applications using PTX will see runtime issues. "
        "Applications that compile device code to PTX will not work on older drivers. If the application requires "
        "PTX then administrators have to upgrade the installed driver.'"
    ),
    "jax-skip-check": (
        "jax-ml/jax @ cec06d116c05f0d52adfceee3d3b730fdbcb0ce5 docs/installation.md: 'JAX checks the versions of your "
        "libraries, and will report an error if they are not sufficiently new. Setting the "
        "`JAX_SKIP_CUDA_CONSTRAINTS_CHECK` environment variable will disable the check, but using older versions of "
        "CUDA may lead to errors, or incorrect results.'; jax_plugins/cuda/__init__.py initialize(): 'elif "
        "os.getenv(\"JAX_SKIP_CUDA_CONSTRAINTS_CHECK\"):' logs 'Skipped CUDA versions constraints check due to the "
        "JAX_SKIP_CUDA_CONSTRAINTS_CHECK env var being set.', else '_check_cuda_versions(raise_on_first_error=True)': "
        "any non-empty value skips the whole check (cudart, cuDNN, cuFFT, cuPTI, cuBLAS, cuSPARSE minimums and the "
        "multi-GPU cuDNN refusal); XLA's own cuDNN rule (jax-xla-cudnn-rule) is not that check"
    ),
    "torch-cu126-variant": (
        "PyTorch's release RFCs and notes for its CUDA variants (Linux x86 and Windows): 2.11, "
        "pytorch/pytorch#172663, '12.6.3 | Maxwell(5.0), Pascal(6.0), Volta(7.0), Turing(7.5), Ampere(8.0, 8.6), "
        "Hopper(9.0)' against '13.0.x | Turing(7.5), Ampere(8.0, 8.6), Hopper(9.0), Blackwell(10.0, 12.0+PTX)'; 2.12 "
        "RELEASE.md (pytorch/pytorch#182849) keeps the 12.6 row; 2.14, pytorch/pytorch#190355, 12.6 'Legacy' with "
        "the same list; 2.15, pytorch/pytorch#190385, proposes removing cu126, which 'drops binary support for ... "
        "Maxwell, Pascal, Volta'. The variant's index: https://download.pytorch.org/whl/cu126"
    ),
    "nvml-state": (
        "nvml.h (NVML_API_VERSION 12, as TensorFlow 2.21's wheel vendors it: "
        "tensorflow/include/external/cuda_nvml/include/nvml.h), read 2026-11-29: nvmlDeviceGetComputeMode "
        "('NVML_COMPUTEMODE_DEFAULT = 0 ... multiple contexts per device', 'NVML_COMPUTEMODE_PROHIBITED = 2 ... no "
        "contexts per device', 'NVML_COMPUTEMODE_EXCLUSIVE_PROCESS = 3 ... only one context per device'); "
        "nvmlDeviceGetTotalEccErrors with NVML_MEMORY_ERROR_TYPE_UNCORRECTED and 'NVML_VOLATILE_ECC = 0 ... Volatile "
        "counts are reset each time the driver loads', 'NVML_AGGREGATE_ECC = 1 ... persist across reboots'; "
        "nvmlDeviceGetRetiredPagesPendingStatus ('Check if any pages are pending retirement and need a reboot to "
        "fully retire'); nvmlDeviceGetRemappedRows ('isPending indicates whether or not there are pending "
        "remappings. A reset will be required to actually remap the row. failureOccurred will be set if a row "
        "remapping ever failed in the past', 'For Ampere or newer', 'NVML_ERROR_NOT_SUPPORTED If MIG is enabled'); "
        "nvmlDeviceGetCurrentClocksEventReasons (nvmlClocksEventReasonGpuIdle 0x1, SwPowerCap 0x4, HwSlowdown 0x8, "
        "SwThermalSlowdown 0x20, HwThermalSlowdown 0x40, HwPowerBrakeSlowdown 0x80); "
        "nvmlDeviceGetTemperatureThreshold NVML_TEMPERATURE_THRESHOLD_SLOWDOWN; "
        "nvmlDeviceGetCurr/MaxPcieLinkGeneration and Width; nvmlDeviceGetPersistenceMode; nvmlDeviceGetNvLinkState "
        "(NVML_NVLINK_MAX_LINKS 18); nvmlDeviceGetTopologyCommonAncestor (NVML_TOPOLOGY_INTERNAL 0, SINGLE 10, "
        "MULTIPLE 20, HOSTBRIDGE 30, NODE 40, SYSTEM 50) and nvmlDeviceGetP2PStatus (NVML_P2P_CAPS_INDEX_READ 0, "
        "WRITE 1, NVLINK 2; NVML_P2P_STATUS_OK 0 ... UNKNOWN 6). The settings the fixes name: nvidia-smi(1) '-c, "
        "--compute-mode', '-pm, --persistence-mode', '-r, --gpu-reset': "
        "https://docs.nvidia.com/deploy/nvidia-smi/index.html"
    ),
}
