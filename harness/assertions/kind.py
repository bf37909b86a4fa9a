"""What an assertion kind is, and what it looks at: the shared shape of every kind module.

A kind module (``text``, ``structured``, ``tools``, ``counting``, ``language``) exports a
``KINDS`` table of :class:`Kind` values; the engine in the package ``__init__`` merges them.
This module sits under all of them (``jsonpath`` <- this module <- the kind modules <-
``__init__``), so they share the shape without an import cycle.

Every check is a pure function ``(spec, subject) -> (outcome, reason)``: the spec is the
item's value exactly as written (shorthand or mapping, already validated against
``expect.schema.json``), and the :class:`Subject` is what the agent produced plus its
declared contract. How a reason quotes a value is :mod:`harness.assertions.reasons`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from harness.assertions import jsonpath
from harness.core.entities import AgentOutput, Outcome

OutputKind = Literal["text", "json"]

#: What a check returns: the outcome and a reason saying what was expected and found.
Result = tuple[Outcome, str]


@dataclass(frozen=True)
class Subject:
    """What an assertion looks at: the agent's output plus its declared contract."""

    output: AgentOutput
    output_kind: OutputKind
    output_schema: Mapping[str, Any] | None
    selections: jsonpath.Selections = field(compare=False, repr=False)
    """The parsed output's selections, made once per path for this answer (shared with the
    answer's ``when`` conditions); a memo of another document is refused."""

    def __post_init__(self) -> None:
        if self.selections.doc is not self.output.parsed:
            raise ValueError("a Subject's selections must be those of its output's parsed value")


def _no_problems(spec: Any) -> list[str]:
    return []


#: One spec turned into its test of an answer (see :attr:`Kind.prepare`).
Checker = Callable[[Subject], Result]


class Kind(NamedTuple):
    """One assertion kind of the registry."""

    check: Callable[[Any, Subject], Result]
    """Evaluate the assertion; may raise, the engine turns that into a reject."""
    label: Callable[[Any], str]
    """Short readable label built from the spec alone (used when no ``name`` is given)."""
    lint: Callable[[Any], list[str]] = _no_problems
    """Problems the schema cannot see (path syntax, regex syntax, inline schema validity)."""
    prepare: Callable[[Any], Checker] | None = None
    """The spec made into its checker once, so that ``check(spec, s) == prepare(spec)(s)``: what
    depends on the spec alone (a compiled regex, a folded term list, the bounds of a reason) is
    derived once per item rather than once per answer. ``None``: the checker calls ``check``."""

    def checker(self, spec: Any) -> Checker:
        """The checker of ``spec``: its prepared form, or ``check`` bound to it."""
        if self.prepare is not None:
            return self.prepare(spec)
        return functools.partial(self.check, spec)


def prepared_kind(prepare: Callable[[Any], Checker], label: Callable[[Any], str],
                  lint: Callable[[Any], list[str]] = _no_problems) -> Kind:
    """A kind written as ``prepare``: its ``check`` prepares the spec, then checks, so both
    ways of running a spec are one code path and cannot disagree."""
    def check(spec: Any, subject: Subject) -> Result:
        return prepare(spec)(subject)

    return Kind(check, label, lint, prepare)


def document_problem(subject: Subject, what: str) -> Result | None:
    """Why the parsed JSON output cannot be used (``None`` when it can).

    A text agent has no JSON to look at, so the assertion is ``not_evaluated``
    (the scenario then fails as unchecked if nothing else checks it). A json
    agent whose output does not parse broke its contract: that is a ``reject``.
    """
    if subject.output_kind != "json":
        return "not_evaluated", f"{what} needs output: json (this agent's output is text)"
    if subject.output.parse_error is not None:
        return "reject", f"output is not valid JSON: {subject.output.parse_error}"
    return None
