"""Code that runs in the probe's child processes: it imports nothing of pytest-cudnn beyond this package, so the
child starts in milliseconds. What the caller and the child say to each other is :mod:`.protocol` (the jobs, their
answers, the kinds of failure); :mod:`.calls` runs each kind of job; :mod:`.isolation` carries them and holds the
parent side (:class:`isolation.Child`). Imports run one way: isolation -> calls -> protocol.
"""
