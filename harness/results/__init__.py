"""The result record of a run: one iteration record, the run summary, their writer.

Holds ``record`` (the iteration record: one ``to_json``/``from_json``; ``summary`` and
``slim`` are projections of it), ``behavior`` (its one-line actual behaviour),
``runsummary``, ``aggregates`` and ``recordwriter`` (``records.jsonl``, ``run.json``).
Plain data used by running, recording and the reports alike, so it sits below them. May
import the stages up to ``load``.
"""
