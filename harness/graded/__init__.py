"""One graded call: a judge model asked about one iteration's response, its answer read back.

Judges (a 1-5 score, aggregated as a mean) and rubric items (pass or fail,
aggregated as a pass rate) are the same thing asked two ways, so everything
but the verdict and the aggregate lives here, once:

- :mod:`~harness.graded.prompt`: the grading request (the grader's prompt as the
  system message, the case as the user message) and its placeholders;
- :mod:`~harness.graded.grader`: which provider and model grade an item, and the
  one wording of the error when none is declared;
- :mod:`~harness.graded.answer`: reading the grader's answer (fences, a JSON
  object inside prose, a prose line) into a verdict or an ``inconclusive`` reason;
- :mod:`~harness.graded.honesty`: a scripted answer grades only the response it names;
- :mod:`~harness.graded.call`: the cached call itself (through the iteration's
  cache-backed client, ``purpose: <kind>:<name>``), its failure policy (no answer
  is ``not_evaluated`` with a warning, never raised) and ``--batch`` deferral.

A kind (:class:`~harness.graded.kind.GradedKind`) supplies only its verdict
parser and how a verdict becomes its result record; :mod:`harness.judges` and
:mod:`harness.rubric` each declare one. This package imports neither of them.

Stage ``score`` (with judges, rubric, mutants): may import every stage up to ``assert``.
"""

from harness.graded.kind import GradedKind

__all__ = ["GradedKind"]
