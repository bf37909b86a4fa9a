"""Loading a project: ``[tool.harness]``, and every dataset file validated, all errors at once.

Holds ``config`` (``[tool.harness]``), ``datasets`` (discover, load and validate every
agent, tenant and scenario), ``discovery`` (what the walk may list), ``selecting``
(filters that select nothing) and ``project`` (finding the project). The loader checks
every file with the checkers of the stages it feeds (assertion kinds, judges, rubric,
metrics, entry points), so it sits above them: it may import every stage up to
``score``; nothing below it imports it.
"""
