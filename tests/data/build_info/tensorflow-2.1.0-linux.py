# build_info.py as shipped in tensorflow-2.1.0-cp37-cp37m-manylinux2010_x86_64.whl (license header removed)
"""Generates a Python module containing information about the build."""
from __future__ import absolute_import
from __future__ import division
from __future__ import print_function

is_rocm_build = False
is_cuda_build = True

cuda_version_number = '10.1'
cudnn_version_number = '7'
