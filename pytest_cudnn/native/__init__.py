"""Code that runs in the probe's child processes: it imports nothing of pytest-cudnn beyond this package, so the
child starts in milliseconds. The parent side (:class:`isolation.Child`) lives here too, to keep the protocol in one
place.
"""
