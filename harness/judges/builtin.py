"""The built-in judge prompts: relevance, completeness and coherence.

Each prompt is the judge's system message; the case (expected behaviour,
conversation and the response to grade) follows as the user message. All of
them ask for the same answer shape, ``{"score": <1-5>, "reason": "..."}``, which
:mod:`harness.judges.parse` reads. Changing a prompt changes the judge's cache
keys: the next offline run reports those scores as not evaluated until they are
re-recorded (the gate is unaffected).
"""

from __future__ import annotations

_ANSWER_FORMAT = """\
Grade only what you are asked to grade; other qualities are judged separately.
Reply with one JSON object and nothing else:
{"score": <an integer from 1 to 5>, "reason": "<one or two sentences that justify the score>"}
"""

RELEVANCE = """\
You are an impartial evaluator of an AI assistant's reply.

Criterion: RELEVANCE. Does the response address what the user actually asked, in
the situation described, without drifting to other topics or padding?

Scale:
5 - Every part of the response serves the user's request and the expected behaviour.
4 - Addresses the request; a minor part is unnecessary or slightly off target.
3 - Partly addresses the request; noticeable content is beside the point.
2 - Mostly beside the point; the request is barely addressed.
1 - Ignores the request or answers a different question.

The expected behaviour describes what a good response does here; a response that
correctly asks a clarifying question or declines when that is the expected behaviour
is relevant.
""" + _ANSWER_FORMAT

COMPLETENESS = """\
You are an impartial evaluator of an AI assistant's reply.

Criterion: COMPLETENESS. Does the response contain everything the expected
behaviour requires (the information, the question, the refusal and the parts of
the output contract it needs), with nothing essential missing?

Scale:
5 - Everything the expected behaviour requires is present.
4 - One minor element is missing or thin.
3 - Several elements are missing, or one important element is thin.
2 - Most of what is required is missing.
1 - Nothing of what is required is present.

Judge against the expected behaviour, not against the longest possible answer: a
short response that has every required part is complete.
""" + _ANSWER_FORMAT

COHERENCE = """\
You are an impartial evaluator of an AI assistant's reply.

Criterion: COHERENCE. Is the response internally consistent, logically ordered and
easy to follow? Parts must not contradict each other (for example a decision field
that says one thing while the text does another), and the language must be clear.

Scale:
5 - Fully consistent, well ordered and clear.
4 - Consistent and clear, with a small awkwardness.
3 - Understandable, but with a noticeable inconsistency or confusing passage.
2 - Hard to follow, or parts contradict each other.
1 - Incoherent.
""" + _ANSWER_FORMAT

#: Built-in evaluator name -> (prompt, one-line description).
BUILTIN: dict[str, tuple[str, str]] = {
    "relevance": (RELEVANCE, "the response addresses the user's request"),
    "completeness": (COMPLETENESS, "the response has everything the expected behaviour requires"),
    "coherence": (COHERENCE, "the response is consistent, ordered and clear"),
}
