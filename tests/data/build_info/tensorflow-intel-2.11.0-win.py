# build_info.py as shipped in tensorflow_intel-2.11.0-cp310-cp310-win_amd64.whl (license header removed)
"""Auto-generated module providing information about the build."""
import collections

build_info = collections.OrderedDict([('is_cuda_build', False), ('is_rocm_build', False), ('is_tensorrt_build', False), ('msvcp_dll_names', 'msvcp140.dll,msvcp140_1.dll')])
