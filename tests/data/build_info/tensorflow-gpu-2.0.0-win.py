# build_info.py as shipped in tensorflow_gpu-2.0.0-cp37-cp37m-win_amd64.whl (license header removed)
"""Generates a Python module containing information about the build."""
from __future__ import absolute_import
from __future__ import division
from __future__ import print_function

is_rocm_build = False
is_cuda_build = True

cuda_version_number = '10.0'
cudnn_version_number = '7'
msvcp_dll_name = 'msvcp140.dll'
nvcuda_dll_name = 'nvcuda.dll'
cudart_dll_name = 'cudart64_100.dll'
cudnn_dll_name = 'cudnn64_7.dll'
