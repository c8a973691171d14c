# build_info.py shape of tensorflow 2.21.0 (manylinux wheel), as recorded in shared/docs/field-notes.md;
# the fields beyond the CUDA ones are abridged (license header removed)
"""Auto-generated module providing information about the build."""
import collections

build_info = collections.OrderedDict([('cpu_compiler', 'clang'), ('cuda_compute_capabilities', ['sm_60', 'sm_70', 'sm_80', 'sm_89', 'compute_90']), ('cuda_version', '12.5.1'), ('cudnn_version', '9'), ('is_cuda_build', True), ('is_rocm_build', False), ('is_tensorrt_build', False)])
