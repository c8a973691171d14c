"""Read what a shared object says about itself without loading it.

A framework's CUDA-using library names the libraries it needs (DT_NEEDED), where the loader should look for
them (DT_RPATH, DT_RUNPATH) and the GPU code it carries (the ``.nv_fatbin`` section). Loading it to ask would
run its constructors and, for torch's libtorch_cuda.so, map 500 MB; so these modules read the headers only,
with positioned reads, and answer found, absent or error with the reason. Nothing here loads or imports a
library, and nothing raises on a malformed file.

* :mod:`.elf`: the dynamic section (soname, needed libraries, search paths) and the place of a section.
* :mod:`.fatbin`: the SASS and PTX architectures in a ``.nv_fatbin`` section.
"""
