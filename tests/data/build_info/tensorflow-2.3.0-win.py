# build_info.py as shipped in tensorflow-2.3.0-cp38-cp38-win_amd64.whl (license header removed)
"""Auto-generated module providing information about the build."""
from __future__ import absolute_import
from __future__ import division
from __future__ import print_function

build_info = {'cuda_version': '64_101', 'cudnn_version': '64_7', 'cuda_compute_capabilities': ['sm_35', 'sm_37', 'sm_52', 'sm_60', 'sm_61', 'compute_70'], 'cpu_compiler': 'C:/Program Files (x86)/Microsoft Visual Studio/2019/Community/VC/Tools/MSVC/14.26.28801/bin/HostX64/x64/cl.exe', 'is_rocm_build': False, 'is_cuda_build': True, 'msvcp_dll_names': 'msvcp140.dll,msvcp140_1.dll', 'nvcuda_dll_name': 'nvcuda.dll', 'cudart_dll_name': 'cudart64_101.dll', 'cudnn_dll_name': 'cudnn64_7.dll'}
