# build_info.py as shipped in tensorflow-2.2.0-cp38-cp38-win_amd64.whl (license header removed)
"""Generates a Python module containing information about the build."""
from __future__ import absolute_import
from __future__ import division
from __future__ import print_function

is_rocm_build = False
is_cuda_build = True

cuda_version_number = '10.1'
cudnn_version_number = '7'
msvcp_dll_names = 'msvcp140.dll,msvcp140_1.dll'
nvcuda_dll_name = 'nvcuda.dll'
cudart_dll_name = 'cudart64_101.dll'
cudnn_dll_name = 'cudnn64_7.dll'
