"""The two thin front ends over :mod:`harness.running.api`: the CLI and the pytest plugin.

Holds ``cli`` (``python -m harness ...``), ``pytest_entry`` (options only, until
``--evals``), ``pytest_plugin`` (the offline eval node as pytest items) and ``output``
(stdout into a closed pipe). May import every stage; nothing imports it but
``harness.__main__``.
"""
