"""JSON assertions: ``json_path`` and ``json_schema``, and the JSON equality they judge by.

``json_path`` selects values of the parsed output (:mod:`harness.assertions.jsonpath`)
and holds each to its conditions; ``json_schema`` validates the parsed output against the
agent's output schema or an inline one. :func:`json_equal` is JSON's equality, which
``tool_args`` compares by too. What a kind is and what it looks at is
:mod:`harness.assertions.kind`; how a reason quotes a value, :mod:`harness.assertions.reasons`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

# No stubs ship with jsonschema; "unused-ignore" keeps this clean once types-jsonschema is added.
from jsonschema.exceptions import best_match  # type: ignore[import-untyped, unused-ignore]

from harness.assertions import jsonpath
from harness.assertions.kind import Checker, Kind, Result, Subject, document_problem, prepared_kind
from harness.assertions.reasons import FOUND_LIMIT, LABEL_LIMIT, label_quote, reasons_wanted, show
from harness.documents.compiled import compiled
from harness.documents.fastkeywords import Check
from harness.documents.schemarefs import remote_refs


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
    if not reasons_wanted():  # jsonschema has the last word, but nothing to word
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
