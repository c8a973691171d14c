"""Reading a host's files and asking its libraries, the parts: where libraries and distributions are found
(:mod:`.discovery`, :mod:`.distributions`), what each framework's files say (:mod:`.torch`, :mod:`.jax`,
:mod:`.cupy`, :mod:`.tensorflow`), which copies its search gives it (:mod:`.loads`, :mod:`.pathfinder`), the ELF
reads of its objects (:mod:`.objects`), the wheels' RECORDs (:mod:`.wheels`), the kernel driver (:mod:`.kernel`),
the child's jobs and answers (:mod:`.answers`) and what files said in earlier runs (:mod:`.facts`).

None of it asks the framework registry: the registry's entries point at these readers, and the probe of a whole
host, which walks the registry, is :mod:`pytest_cudnn.probing.host`.
"""
