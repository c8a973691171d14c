# build_info.py as shipped in tensorflow_gpu-1.13.1-cp37-cp37m-win_amd64.whl (license header removed)
"""Generates a Python module containing information about the build."""
from __future__ import absolute_import
from __future__ import division
from __future__ import print_function

is_cuda_build = True

msvcp_dll_name = 'msvcp140.dll'
