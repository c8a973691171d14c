# build_info.py as shipped in tensorflow_cpu-2.3.0-cp38-cp38-manylinux2010_x86_64.whl (license header removed)
"""Auto-generated module providing information about the build."""
from __future__ import absolute_import
from __future__ import division
from __future__ import print_function

build_info = {'is_rocm_build': False, 'is_cuda_build': False}
