"""Adopting the harness in a repository: ``python -m harness init`` and its CI workflow.

Holds ``scaffold`` (``init``), ``workflow`` (the GitHub Actions workflow it writes) and
``install_source`` (where the running harness was installed from, PEP 610). May import
every stage up to ``check``.
"""
