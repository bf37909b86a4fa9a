"""Rubric items: named rules (``{name, rule}``) the judge model grades pass or fail, with a reason.

A rubric item is one kind of graded call (:mod:`harness.graded`: prompt layout,
grader model, answer reading, honesty check and cached call are shared with the
judges); what is its own is the verdict parser (pass or fail,
:mod:`harness.rubric.parse`), the rule appended to the case, ``when``, the
layered declaration (:mod:`harness.rubric.items`) and the aggregate (a pass rate,
:mod:`harness.rubric.tally`).

Where a hard assertion cannot decide a rule (options that push toward one
answer, a refusal that explains its trigger, a question that is not
self-contained), a rubric item states it in words and the agent's judge model
grades it. Like judge scores, rubric outcomes are reported and trended per rule
and NEVER change the exit code: a judge is a model, and a model's opinion must
not gate a merge. An answer that cannot be read as pass or fail is
``inconclusive``, never a pass.

Items are declared in ``agent.yaml``, ``tenant.yaml`` or a scenario file
(``rubric:``); a more specific file's item replaces one of the same name.
``when`` restricts an item to the iterations it is about (test types, tags,
expected or actual decision, tools called), so no call is paid for a rule that
cannot apply.

Stage ``score``: may import every stage up to ``assert``, and :mod:`harness.graded`.
"""

from harness.rubric.grade import PURPOSE_PREFIX, RUBRIC, grade_rubric
from harness.rubric.items import check_rubric, merge_rubric
from harness.rubric.parse import parse_verdict

__all__ = ["PURPOSE_PREFIX", "RUBRIC", "check_rubric", "grade_rubric", "merge_rubric",
           "parse_verdict"]
