"""The CUDA libraries TensorFlow loads: libtensorflow_framework.so.2 dlopens each by name (compat/loading.py's rows
for its CUDA major, and the cuDNN of its build's major), through that object's DT_RUNPATH."""

from __future__ import annotations

from ..._base.versions import major_of
from ...compat.loading import LOADS
from ...environment import FrameworkBuild, LoadedLibrary
from ...probe.loads import Search, by_name, cuda_major, framework_object

__all__ = ["tensorflow_loads"]


def tensorflow_loads(build: FrameworkBuild, search: Search) -> tuple[LoadedLibrary, ...]:
    major = cuda_major(build)
    framework = framework_object(build, "libtensorflow_framework.so.2")
    if framework is None or major is None:
        return ()
    names = [row.soname for row in LOADS if row.framework == "tensorflow" and row.cuda_major == major]
    cudnn_major = major_of(build.cudnn.value if build.cudnn else None)
    if cudnn_major is not None:
        names.append(f"libcudnn.so.{cudnn_major}")
    return tuple(by_name(name, framework, "dlopen", True, search) for name in names)
