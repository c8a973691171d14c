# build_info.py as shipped in tensorflow-2.3.0-cp38-cp38-manylinux2010_x86_64.whl (license header removed)
"""Auto-generated module providing information about the build."""
from __future__ import absolute_import
from __future__ import division
from __future__ import print_function

build_info = {'cuda_version': '10.1', 'cudnn_version': '7', 'cuda_compute_capabilities': ['sm_35', 'sm_37', 'sm_52', 'sm_60', 'sm_61', 'compute_70'], 'cpu_compiler': '/usr/bin/gcc-5', 'is_rocm_build': False, 'is_cuda_build': True}
