"""Sourced compatibility knowledge: published tables as data, with pure lookups. No I/O.

Every row names its source in :data:`pytest_cudnn.compat.sources.SOURCES`.
"""
