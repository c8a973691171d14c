# build_info.py as shipped in tensorflow_cpu-2.15.0-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl (license header removed)
"""Auto-generated module providing information about the build."""
import collections

build_info = collections.OrderedDict([('is_cuda_build', False), ('is_rocm_build', False), ('is_tensorrt_build', False)])
