"""Code that runs in the probe's child processes: it imports nothing of pytest-cudnn beyond this package, so the
child starts in milliseconds. The parent side (:func:`run_in_child`) lives here too, to keep the protocol in one
place.
"""
