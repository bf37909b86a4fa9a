"""JSON assertions (``json_path``, ``json_schema``) and the pieces every kind shares.

The shared pieces live here rather than in the package ``__init__`` so that the
kind modules can import them without an import cycle: ``jsonpath`` <- this
module <- ``text`` / ``tools`` <- ``__init__``.

Every check is a pure function ``(spec, subject) -> (outcome, reason)``: the
spec is the item's value exactly as written (shorthand or mapping, already
validated against ``expect.schema.json``), and the subject is what the agent
produced plus its declared contract.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

# No stubs ship with jsonschema; "unused-ignore" keeps this clean once types-jsonschema is added.
from jsonschema.exceptions import best_match  # type: ignore[import-untyped, unused-ignore]

from harness.assertions import jsonpath
from harness.core.entities import AgentOutput, Outcome
from harness.documents.compiled import compiled
from harness.documents.fastschema import Check
from harness.documents.schemarefs import remote_refs

OutputKind = Literal["text", "json"]

#: What a check returns: the outcome and a reason saying what was expected and found.
Result = tuple[Outcome, str]

#: How much of a found value a reason quotes; a reason is read in a terminal table.
FOUND_LIMIT = 120
#: How much of a value a label quotes; labels name an assertion, they don't show data.
LABEL_LIMIT = 40


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


#: False inside :func:`outcomes_only`: reasons are not worded (``show`` quotes nothing).
_REASONS: ContextVar[bool] = ContextVar("harness_assertion_reasons", default=True)
#: What :func:`show` gives inside :func:`outcomes_only`.
UNSHOWN = "…"


@contextmanager
def outcomes_only() -> Iterator[None]:
    """Within: every check decides its outcome as always, but quotes no value in its reason.

    For judging known-wrong answers (counterexamples), where only which assertions reject
    is kept: quoting the found value (rendering a parsed answer, wording a schema error)
    was a fifth of their cost. Labels never depend on it (:func:`label_quote`).
    """
    token = _REASONS.set(False)
    try:
        yield
    finally:
        _REASONS.reset(token)


def reasons_wanted() -> bool:
    """False inside :func:`outcomes_only`: a check may skip work that only words its reason."""
    return _REASONS.get()


def show(value: Any, limit: int = FOUND_LIMIT) -> str:
    """Quote a found or expected value for a reason, cut to ``limit`` characters.

    Strings are ``repr``-quoted so whitespace and empty strings stay visible;
    other JSON values read as in YAML/JSON (``true``, ``null``, ``[1, 'a']``),
    the way scenario authors wrote them. Inside :func:`outcomes_only`: :data:`UNSHOWN`.
    """
    if not _REASONS.get():
        return UNSHOWN
    return label_quote(value, limit)


def label_quote(value: Any, limit: int = LABEL_LIMIT) -> str:
    """:func:`show`, whatever the context: labels name an assertion and must never change."""
    if isinstance(value, str):
        if len(value) + 2 > limit:  # its repr cannot fit: never quote a whole long answer
            return repr(value[:limit] + "…")
        text = repr(value)
        return text if len(text) <= limit else repr(value[:limit] + "…")
    text = _render_prefix(value, limit)  # a whole parsed answer is rendered only as far as shown
    if len(text) <= limit:
        return text
    return text[:limit] + "…"


def _render_prefix(value: Any, limit: int) -> str:
    """``_render(value)``, or a prefix of it longer than ``limit`` (all that ``show`` needs)."""
    parts: list[str] = []
    _emit(value, parts, [limit + 1])
    return "".join(parts)


def _emit(value: Any, parts: list[str], budget: list[int]) -> bool:
    """Append the rendering of ``value`` to ``parts`` until ``budget[0]`` characters are spent;
    false once they are (the caller stops: the rest would be cut anyway)."""
    if isinstance(value, Mapping):
        parts.append("{")
        budget[0] -= 1
        for n, (k, v) in enumerate(value.items()):
            if n:
                parts.append(", ")
                budget[0] -= 2
            if budget[0] <= 0 or not _emit(k, parts, budget):
                return False
            parts.append(": ")
            budget[0] -= 2
            if budget[0] <= 0 or not _emit(v, parts, budget):
                return False
        parts.append("}")
        budget[0] -= 1
    elif isinstance(value, list | tuple):
        parts.append("[")
        budget[0] -= 1
        for n, item in enumerate(value):
            if n:
                parts.append(", ")
                budget[0] -= 2
            if budget[0] <= 0 or not _emit(item, parts, budget):
                return False
        parts.append("]")
        budget[0] -= 1
    else:
        text = _render(value)
        parts.append(text)
        budget[0] -= len(text)
    return budget[0] > 0


def _render(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{_render(k)}: {_render(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_render(item) for item in value) + "]"
    return repr(value)


def json_equal(a: Any, b: Any) -> bool:
    """JSON equality: like ``==`` but ``true`` is not ``1`` and ``false`` is not ``0``.

    Python's ``True == 1`` would let a model answering ``1`` pass ``equals: true``.
    Numbers still compare by value (``1 == 1.0``), as in JSON.
    """
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, Mapping | list | tuple) or isinstance(b, Mapping | list | tuple):
        return False
    return bool(a == b)


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


# --- json_path ---------------------------------------------------------------

_CONDITIONS = ("exists", "equals", "in", "min_items", "max_items")


def _json_path_label(spec: Any) -> str:
    parts = []
    if "exists" in spec:
        parts.append("exists" if spec["exists"] else "does not exist")
    if "equals" in spec:
        parts.append(f"== {_short(spec['equals'])}")
    if "in" in spec:
        parts.append(f"in {_short(spec['in'])}")
    if "min_items" in spec:
        parts.append(f"min_items {spec['min_items']}")
    if "max_items" in spec:
        parts.append(f"max_items {spec['max_items']}")
    return f"json_path {spec['path']} {', '.join(parts) or 'exists'}"


def _short(value: Any) -> str:
    return label_quote(value, LABEL_LIMIT)


def _json_path_lint(spec: Any) -> list[str]:
    try:
        jsonpath.parse(spec["path"])
    except ValueError as exc:
        return [str(exc)]
    return []


def _prepare_json_path(spec: Any) -> Checker:
    """Every given condition must hold for every selected value.

    With no condition at all the item reads as "this field is present", so
    ``exists: true`` is implied. A path that selects nothing fails every
    condition but ``exists: false``.
    """
    path = spec["path"]
    exists = spec.get("exists", True if not any(c in spec for c in _CONDITIONS) else None)
    absence_only = len(spec.keys() & set(_CONDITIONS)) == 1

    def check(subject: Subject) -> Result:
        blocked = document_problem(subject, "json_path")
        if blocked:
            return blocked
        selected = subject.selections.with_paths(path)
        if exists is False:
            if selected:
                where, value = selected[0]
                return "reject", f"expected {path} not to exist, found {where} = {show(value)}"
            if absence_only:
                return "pass", f"{path} selects nothing"
        if not selected:
            return "reject", f"{path} selects nothing in {show(subject.output.parsed)}"
        failures = [f for where, value in selected if (f := _failure(spec, where, value))]
        if failures:
            more = f" (+{len(failures) - 3} more)" if len(failures) > 3 else ""
            return "reject", "; ".join(failures[:3]) + more
        if len(selected) == 1:
            return "pass", f"{selected[0][0]} = {show(selected[0][1])}"
        return "pass", f"all {len(selected)} values at {path} hold"

    return check


def _failure(spec: Any, where: str, value: Any) -> str | None:
    """The first condition ``value`` breaks, said as expected-vs-found."""
    if "equals" in spec and not json_equal(value, spec["equals"]):
        return f"{where}: expected {show(spec['equals'])}, found {show(value)}"
    if "in" in spec and not any(json_equal(value, option) for option in spec["in"]):
        return f"{where}: expected one of {show(spec['in'])}, found {show(value)}"
    if "min_items" in spec or "max_items" in spec:
        if not isinstance(value, list):
            return f"{where}: expected a list for min_items/max_items, found {show(value)}"
        if "min_items" in spec and len(value) < spec["min_items"]:
            return f"{where}: expected at least {spec['min_items']} items, found {len(value)}"
        if "max_items" in spec and len(value) > spec["max_items"]:
            return f"{where}: expected at most {spec['max_items']} items, found {len(value)}"
    return None


# --- json_schema ---------------------------------------------------------------


def _json_schema_label(spec: Any) -> str:
    return "json_schema (agent output schema)" if spec is True else "json_schema (inline)"


def compiled_schema(schema: Mapping[str, Any]) -> _Compiled:
    """The metaschema verdict and validators of ``schema``, checked once per content."""
    entry = compiled(schema)
    return _Compiled(None if entry.error is None else _schema_error(entry.error), entry.validator,
                     entry.fast)


class _Compiled(NamedTuple):
    problem: str | None
    """Why it is not a valid JSON Schema (``None``: it is one)."""
    validator: Any
    fast: Check | None


def _json_schema_lint(spec: Any) -> list[str]:
    if spec is True:
        return []
    problem = compiled_schema(spec).problem
    if problem is not None:
        return [f"inline json_schema is not a valid JSON Schema: {problem}"]
    refs = remote_refs(spec)
    if refs:  # jsonschema would fetch it: an offline run never opens a socket
        where, ref = refs[0]
        return [f"inline json_schema has a non-local reference {where}: {ref[:120]!r}; copy the "
                "referenced schema under $defs and refer to it as '#/$defs/<name>'"]
    return []


def _prepare_json_schema(spec: Any) -> Checker:
    """Validate the parsed output against the agent's schema or an inline one.

    ``json_schema: true`` on an agent without ``output_schema`` rejects rather
    than skips: the author asked for a check that cannot happen, and a
    skipped check must never look like a pass. ``format`` stays an annotation
    (the draft 2020-12 default), so results do not depend on optional packages.
    An inline schema is compiled at its first use (not at preparation: an answer
    that cannot be validated at all says so first), then kept.
    """
    inline: list[_Compiled] = []

    def check(subject: Subject) -> Result:
        blocked = document_problem(subject, "json_schema")
        if blocked:
            return blocked
        if spec is True:
            if subject.output_schema is None:
                return "reject", "json_schema: true, but the agent declares no output_schema"
            return _validate(compiled_schema(subject.output_schema), "the agent's output schema",
                             subject.output.parsed)
        if not inline:
            inline.append(compiled_schema(spec))
        return _validate(inline[0], "the inline schema", subject.output.parsed)

    return check


def _validate(compiled: _Compiled, which: str, parsed: Any) -> Result:
    """The verdict of one valid-or-not schema on a parsed answer; jsonschema words the errors."""
    if compiled.problem is not None:
        return "reject", f"{which} is not a valid JSON Schema: {compiled.problem}"
    if compiled.fast is not None and compiled.fast(parsed):
        return "pass", f"output validates against {which}"
    if not _REASONS.get():  # jsonschema has the last word, but nothing to word
        if compiled.validator.is_valid(parsed):
            return "pass", f"output validates against {which}"
        return "reject", f"output does not match {which}"
    errors = sorted(compiled.validator.iter_errors(parsed), key=lambda e: e.json_path)
    if not errors:
        return "pass", f"output validates against {which}"
    shown = "; ".join(f"{e.json_path}: {_cut(e.message)}" for e in errors[:3])
    more = f" (+{len(errors) - 3} more)" if len(errors) > 3 else ""
    return "reject", f"output does not match {which}: {shown}{more}"


def _schema_error(exc: Any) -> str:
    """The most specific part of a schema error (``anyOf`` alternatives are narrowed)."""
    error = best_match(exc.context) if exc.context else exc
    where = error.json_path.removeprefix("$").removeprefix(".")
    return f"{where}: {_cut(error.message)}" if where else _cut(error.message)


def _cut(text: str) -> str:
    return text if len(text) <= FOUND_LIMIT else text[:FOUND_LIMIT] + "…"


KINDS: dict[str, Kind] = {
    "json_path": prepared_kind(_prepare_json_path, _json_path_label, _json_path_lint),
    "json_schema": prepared_kind(_prepare_json_schema, _json_schema_label, _json_schema_lint),
}
