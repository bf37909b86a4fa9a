"""The hard-assertion engine: turn a scenario's ``expect`` items into verdicts.

Each ``expect`` item names exactly one assertion kind (see ``docs/formats.md``,
"Assertions"). :func:`evaluate` runs every item, even after a reject, so a
report shows everything that is wrong at once, and it never raises: an item
that is malformed or whose check crashes becomes a ``reject`` with the reason,
because a crash must neither stop the run nor pass silently. A crash is marked as
one (``crashed=True``, reason ``assertion crashed: ...``): it is not a verdict on
the answer, so ``check`` reports it and a counterexample it rejects is not caught.

The kinds live in small modules (``text``, ``structured``, ``tools``, ``counting``,
``language``), each
exporting ``KINDS``; :data:`REGISTRY` merges them. What a kind is (:class:`Kind`, the
:class:`Subject` it looks at) is ``kind``; how a reason quotes a value, ``reasons``.

Stage ``assert`` (tests/test_import_graph.py, STAGES): also ``counterexamples`` (known-wrong
answers judged by the same verdicts) and ``metrics`` (deterministic metrics over the
verdicts). May import: core, documents, requests, cache, refresh, clients, providers, wire,
execute (an answer is parsed as the agent's output).
"""

from __future__ import annotations

import copy
import difflib
import json
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

# No stubs ship with jsonschema; "unused-ignore" keeps this clean once types-jsonschema is added.
from jsonschema import Draft202012Validator  # type: ignore[import-untyped, unused-ignore]
from jsonschema.exceptions import (  # type: ignore[import-untyped, unused-ignore]
    ValidationError,
    best_match,
)

from harness.assertions import counting, jsonpath, language, structured, text, tools
from harness.assertions.kind import Checker, Kind, OutputKind, Subject
from harness.core.entities import AgentOutput, Outcome, Verdict
from harness.documents.fastkeywords import Check
from harness.documents.fastschema import compile_schema

__all__ = [
    "ASSERTION_KINDS",
    "CRASH_PREFIX",
    "assertion_label",
    "CheckedItem",
    "EXPECT_SCHEMA_FILE",
    "REGISTRY",
    "check_item",
    "evaluate",
    "expect_schema",
    "overall",
]

#: The reason prefix of a verdict whose check raised (:attr:`Verdict.crashed` is set too).
CRASH_PREFIX = "assertion crashed: "

#: Assertion kind -> implementation (check, label, lint).
REGISTRY: Mapping[str, Kind] = MappingProxyType(
    {**text.KINDS, **structured.KINDS, **tools.KINDS, **counting.KINDS, **language.KINDS}
)

#: Every assertion kind an ``expect`` item may use.
ASSERTION_KINDS: frozenset[str] = frozenset(REGISTRY)

#: JSON Schema of one ``expect`` item (``$id: expect.schema.json``).
EXPECT_SCHEMA_FILE = Path(__file__).resolve().parent.parent / "schemas" / "expect.schema.json"


@cache
def _schema() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(EXPECT_SCHEMA_FILE.read_text(encoding="utf-8"))
    return loaded


@cache
def _validator() -> Draft202012Validator:
    return Draft202012Validator(_schema())


@cache
def _fast_check() -> Check | None:
    return compile_schema(_schema())


def expect_schema() -> dict[str, Any]:
    """A fresh copy of the ``expect`` item schema (callers may mutate it)."""
    return copy.deepcopy(_schema())


#: The conditions of an item that has none: shared (an empty dict per item held 64 bytes per
#: scenario for nothing).
_NO_WHEN: Mapping[str, Any] = MappingProxyType({})


class CheckedItem(dict[str, Any]):
    """An ``expect`` item that :func:`check_item` found valid when its dataset was loaded.

    :func:`evaluate` checks every other item before running it (a malformed item
    rejects); a checked one runs at once, so a run does not validate the same
    items again for every iteration. Treat it as immutable.
    """

    __slots__ = ("evaluated", "kind_label", "origin", "prepared", "when")

    def __init__(self, *args: Any, origin: str = "scenario", when: Mapping[str, Any] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.kind_label = ""
        """The verdict label (its ``name``, else one built from the spec), once computed."""
        self.origin = origin
        """Where the item was declared: ``agent``, ``tenant`` or ``scenario`` (rules declared once)."""
        self.prepared: Checker | None = None
        """Its kind's checker of its spec (:attr:`Kind.prepare`), kept from its second
        evaluation on: an item evaluated once (one iteration, no counterexample; most items of
        a large suite) keeps nothing, so 10,000 held checkers do not add 8 MB to the peak."""
        self.evaluated = False
        """Whether a checker was made for it once already (the next one is kept)."""
        self.when: Mapping[str, Any] = when or _NO_WHEN
        """Per-answer conditions of an inherited item (``actual``, ``present``, ``tools``)."""

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its item, origin and conditions (a scenario loaded by a forked helper of
        ``run --jobs``: :mod:`harness.core.forked`); the checker is made again when needed."""
        return (_checked_again, (dict(self), self.origin, dict(self.when), self.kind_label))


def _checked_again(item: dict[str, Any], origin: str, when: dict[str, Any], label: str) -> CheckedItem:
    """A :class:`CheckedItem` back from its pickle."""
    checked = CheckedItem(item, origin=origin, when=when or None)
    checked.kind_label = label
    return checked


def check_item(item: Any, *, schema_checked: bool = False) -> list[str]:
    """Every problem of one ``expect`` item; empty when it is valid.

    Covers the schema plus what a schema cannot see: JSON path syntax, regex
    syntax and the validity of an inline ``json_schema``. Meant for the
    dataset loader, so a typo is reported at load time rather than as a reject.
    ``schema_checked``: the item already passed ``expect.schema.json`` (as part of
    its scenario), so only what the schema cannot see is checked.
    """
    if not isinstance(item, Mapping):
        return [f"an expect item must be a mapping with one assertion kind, found {item!r:.80}"]
    kinds = [key for key in item if key in REGISTRY]
    problems = [_unknown(key) for key in item if key not in REGISTRY and key != "name"]
    if len(kinds) > 1:
        problems.append(
            f"one assertion kind per item, found {', '.join(kinds)}: split them into items"
        )
    elif not kinds and not problems:
        kinds_list = ", ".join(sorted(ASSERTION_KINDS))
        problems.append(f"no assertion kind (expected one of: {kinds_list})")
    if problems:
        return problems
    fast = _fast_check()
    if not schema_checked and (fast is None or not fast(item)):  # jsonschema says what is wrong
        errors = sorted(_validator().iter_errors(dict(item)), key=lambda e: e.json_path)
        if errors:
            return [_describe(error) for error in errors]
    return REGISTRY[kinds[0]].lint(item[kinds[0]])


def _unknown(key: Any) -> str:
    """An unknown key, with the kind it was probably meant to be."""
    close = difflib.get_close_matches(str(key), sorted(ASSERTION_KINDS), n=1)
    hint = f"did you mean {close[0]!r}?" if close else (
        f"expected one of: {', '.join(sorted(ASSERTION_KINDS))}, name")
    return f"unknown key {key!r} ({hint})"


def _describe(error: ValidationError) -> str:
    """One readable line per schema error; a shorthand-or-mapping choice is narrowed."""
    if error.context:
        narrowed = best_match(error.context)
        if narrowed is not None:
            error = narrowed
    where = error.json_path.removeprefix("$").removeprefix(".")
    message = error.message if len(error.message) <= 200 else error.message[:200] + "…"
    return f"{where}: {message}" if where else message


def assertion_label(item: Mapping[str, Any]) -> str:
    """The label a valid ``expect`` item's verdicts carry: its ``name``, else one built from it."""
    name = item.get("name")
    if isinstance(name, str):
        return name
    kind = next(key for key in item if key in REGISTRY)
    return REGISTRY[kind].label(item[kind])


def _fallback_label(item: Any) -> str:
    if isinstance(item, Mapping):
        if isinstance(item.get("name"), str):
            return str(item["name"])
        kinds = [str(key) for key in item if key in REGISTRY]
        if kinds:
            return " + ".join(kinds)
    return "invalid assertion"


def evaluate(
    expect: Sequence[Mapping[str, Any]],
    output: AgentOutput,
    *,
    output_kind: OutputKind,
    output_schema: Mapping[str, Any] | None,
    selections: jsonpath.Selections | None = None,
    origins: bool = False,
) -> list[Verdict]:
    """One verdict per ``expect`` item, in order; every item runs, nothing raises.
    ``selections``: the memo of ``output.parsed``'s paths the caller already filled.
    ``origins``: each verdict carries its item's level (``scenario`` for a plain mapping), so
    that a caller recording them does not build every verdict a second time to add it."""
    if selections is None or selections.doc is not output.parsed:
        selections = jsonpath.Selections(output.parsed)
    subject = Subject(output, output_kind, output_schema, selections)
    return [_evaluate_checked(item, subject, item.origin if origins else "")
            if type(item) is CheckedItem
            else _evaluate_one(item, subject, "scenario" if origins else "") for item in expect]


def _evaluate_checked(item: CheckedItem, subject: Subject, origin: str) -> Verdict:
    """A checked item's verdict: its label and checker are made at its first evaluation."""
    try:
        checker = item.prepared if item.prepared is not None else _prepare(item)
        outcome, reason = checker(subject)
    except Exception as exc:  # noqa: BLE001 - a crashing check must reject, not stop the run
        return Verdict(item.kind_label or _fallback_label(item), "reject",
                       f"{CRASH_PREFIX}{type(exc).__name__}: {exc}", origin, crashed=True)
    return Verdict(item.kind_label, outcome, reason, origin)


def _prepare(item: CheckedItem) -> Checker:
    """Label a checked item and make its checker: both depend on the item alone. The checker
    is kept from the second evaluation on. A preparation that raises keeps nothing, so every
    evaluation crashes alike."""
    kind_name = next(key for key in item if key in REGISTRY)
    kind, spec = REGISTRY[kind_name], item[kind_name]
    if not item.kind_label:
        name = item.get("name")
        item.kind_label = name if isinstance(name, str) else kind.label(spec)
    checker = kind.checker(spec)
    if item.evaluated:
        item.prepared = checker
    item.evaluated = True
    return checker


def _evaluate_one(item: Mapping[str, Any], subject: Subject, origin: str = "") -> Verdict:
    """An item no loader checked: checked first (a malformed one rejects), then run."""
    label = _fallback_label(item)
    try:
        problems = check_item(item)
        if problems:
            return Verdict(label, "reject", "invalid assertion: " + "; ".join(problems), origin)
        kind_name = next(key for key in item if key in REGISTRY)
        kind, spec = REGISTRY[kind_name], item[kind_name]
        name = item.get("name")
        label = name if isinstance(name, str) else kind.label(spec)
        outcome, reason = kind.check(spec, subject)
    except Exception as exc:  # noqa: BLE001 - a crashing check must reject, not stop the run
        return Verdict(label, "reject", f"{CRASH_PREFIX}{type(exc).__name__}: {exc}", origin,
                       crashed=True)
    return Verdict(label, outcome, reason, origin)


def overall(verdicts: Iterable[Verdict]) -> Outcome:
    """``reject`` if any verdict rejects, else ``pass`` if any passes, else ``not_evaluated``."""
    outcomes = {verdict.outcome for verdict in verdicts}
    if "reject" in outcomes:
        return "reject"
    if "pass" in outcomes:
        return "pass"
    return "not_evaluated"
