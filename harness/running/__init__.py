"""One run: the library API the front ends call, its options, its clients and its steps.

Holds ``api`` (``run_evals``, ``plan_run``: a whole run scheduled), ``session``
(``EvalSession``: one run, step by step), ``iteration`` (one iteration run and asserted:
``run_iteration``), ``optionspec`` and ``options`` (the run
options declared once, ``RunOptions``), ``factory`` (one caching client per agent for the
run's mode), ``scoring`` (the step after the assertions), ``shards``, ``replay``,
``provenance_gate``, and the refresh steps that drive whole runs: ``plan`` (the dry-run
plan), ``batch`` (batch rounds), ``progress`` (the progress line). May import every
stage up to ``report``.
"""
