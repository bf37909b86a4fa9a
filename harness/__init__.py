"""Offline eval harness for LLM skills: replay a committed response cache, gate on hard assertions.

The public library API lives in :mod:`harness.running.api`; the CLI (:mod:`harness.frontends.cli`) and
the pytest plugin are thin layers over it. This module stays import-light so that
``python -m harness --help`` starts fast.
"""

__version__ = "0.1.0"
