# build_info.py as shipped in tensorflow_gpu-1.12.0-cp36-cp36m-win_amd64.whl (license header removed)
"""Generates a Python module containing information about the build."""
from __future__ import absolute_import
from __future__ import division
from __future__ import print_function

is_cuda_build = True
