"""The pytest entry point (``-p no:cudnn`` disables it).

Markers, fixtures, the session header and the skip-or-fail policy are built on the environment model and
the diagnosis; until they land this module deliberately registers nothing, so installing pytest-cudnn
changes no test run and probes nothing.
"""
