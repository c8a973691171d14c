# build_info.py as shipped in tensorflow_gpu-1.14.0-cp37-cp37m-manylinux1_x86_64.whl (license header removed)
"""Generates a Python module containing information about the build."""
from __future__ import absolute_import
from __future__ import division
from __future__ import print_function

is_cuda_build = True

cuda_version_number = '10.0'
cudnn_version_number = '7'
