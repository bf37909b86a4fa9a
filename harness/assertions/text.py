"""Text assertions: ``equals``, ``contains``, ``not_contains``, ``regex``, ``not_regex``,
``max_chars``.

They look at the response text, or, with ``path``, at every string that path
selects in a JSON output (each selected string must pass). Choices made where
the spec is silent, so a reader does not have to guess:

* ``path`` on a text agent is ``not_evaluated`` (there is no JSON to walk),
  like the JSON kinds; on a json agent whose output does not parse it rejects.
* ``path`` selecting nothing, or selecting a non-string (number, list,
  object, null), rejects with the value found: text assertions compare text,
  and silently stringifying ``3`` or ``null`` would hide a contract break.
* ``equals`` trims both the text and the value.
* ``normalize`` (default NFKC) and ``ignore_case`` (``casefold``) apply to
  both sides of ``equals`` / ``contains`` / ``not_contains``.
* ``not_contains`` passes when the text contains *none* of the values, with
  ``value``, ``any`` or ``all`` alike (the spec's "contains none of the values").
* ``fold`` (see :mod:`harness.assertions.fold`: case, NFKC and separators, so
  ``status_summary`` also finds ``StatusSummary``) is on by default for
  ``not_contains`` with a list (``any``/``all``: lists of forbidden terms) and
  opt-in elsewhere; ``fold: false`` turns it off.
* ``regex`` searches the raw text with ``re.search`` (no normalisation, which
  could turn full-width characters of a pattern into regex syntax; with
  ``fold: true`` it searches the folded text instead); ``not_regex``
  passes when the pattern matches nowhere in any selected text;
  ``max_chars`` counts code points of the raw, untrimmed text.

Where a term of ``contains``/``not_contains`` occurs (normalising, folding, the
screen of a term list) is :mod:`harness.assertions.terms`; this module words the verdicts.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from harness.assertions import jsonpath, terms
from harness.assertions.fold import fold
from harness.assertions.kind import Checker, Kind, Result, Subject, document_problem, prepared_kind
from harness.assertions.reasons import LABEL_LIMIT, label_quote, reasons_wanted, show

#: A per-text test: (passed, reason).
_Test = Callable[[str], tuple[bool, str]]

#: Plain ints: ``0 | re.IGNORECASE`` goes through ``enum.Flag.__ror__`` (Python code) per item.
_FLAGS = {"i": int(re.IGNORECASE), "m": int(re.MULTILINE), "s": int(re.DOTALL)}


def _opts(spec: Any) -> dict[str, Any]:
    """The mapping form of a spec (shorthand becomes ``{value: ...}``)."""
    return dict(spec) if isinstance(spec, Mapping) else {"value": spec}


def _tool_texts(spec: dict[str, Any], subject: Subject) -> list[tuple[str, str]] | Result:
    """Strings in the arguments of every call of ``spec['tool']`` (all string leaves, or ``path``).

    A tool that was not called leaves nothing to check: ``not_evaluated``, so a
    ``tool_called`` assertion beside it decides whether the call was required.
    Arguments are often optional, so a call without ``path`` is skipped; when no
    call has it, the verdict is ``not_evaluated`` too (``tool_args`` checks presence).
    """
    tool = spec["tool"]
    calls = [c for c in subject.output.tool_calls if c.name == tool]
    if not calls:
        return "not_evaluated", f"{tool} was not called: no arguments to check"
    path = spec.get("path")
    texts: list[tuple[str, str]] = []
    for number, call in enumerate(calls):
        where = f"{tool}#{number}"
        selected = (jsonpath.select_with_paths(call.arguments, path) if path
                    else list(_string_leaves(call.arguments, "")))
        for inner, value in selected:
            if not isinstance(value, str):
                return "reject", f"{where}.{inner} is not a string: found {show(value)}"
            texts.append((f"{where}.{inner}" if inner else where, value))
    if not texts:
        return "not_evaluated", f"no call of {tool} has {path or 'a string argument'}"
    return texts


def _string_leaves(value: Any, where: str) -> list[tuple[str, Any]]:
    """Every string inside a JSON value, with its path."""
    if isinstance(value, str):
        return [(where, value)]
    if isinstance(value, Mapping):
        return [leaf for key, item in value.items()
                for leaf in _string_leaves(item, f"{where}.{key}" if where else str(key))]
    if isinstance(value, list):
        return [leaf for i, item in enumerate(value) for leaf in _string_leaves(item, f"{where}[{i}]")]
    return []


def _texts(spec: dict[str, Any], subject: Subject, kind: str) -> list[tuple[str, str]] | Result:
    """The texts to test, each with where it came from, or the verdict that stops us."""
    if "tool" in spec:
        return _tool_texts(spec, subject)
    path = spec.get("path")
    if path is None:
        return [("text", subject.output.text)]
    blocked = document_problem(subject, f"{kind} with path")
    if blocked:
        return blocked
    selected = subject.selections.with_paths(path)
    if not selected:
        return "reject", f"{path} selects nothing in {show(subject.output.parsed)}"
    for where, value in selected:
        if not isinstance(value, str):
            return "reject", f"{where} is not a string: found {show(value)}"
    return selected


def _run(spec: dict[str, Any], subject: Subject, kind: str, test: _Test) -> Result:
    """Apply ``test`` to every text; the first failure rejects, naming where it was."""
    texts = _texts(spec, subject, kind)
    if isinstance(texts, tuple):
        return texts
    reason = ""
    for where, text in texts:
        passed, reason = test(text)
        prefix = f"{where}: " if "path" in spec or "tool" in spec else ""
        if not passed:
            return "reject", prefix + reason
        reason = prefix + reason
    if len(texts) > 1:
        return "pass", f"all {len(texts)} strings at {_at(spec).removeprefix(' at ')} pass"
    return "pass", reason


def _runner(spec: dict[str, Any], kind: str, test: _Test) -> Checker:
    """The checker that applies a prepared per-text ``test`` to the texts ``spec`` selects.

    Without ``path`` or ``tool`` the one text is the response's: tested at once, with what
    :func:`_run` would answer for a single text without a prefix (most items are such)."""
    if "path" in spec or "tool" in spec:
        def check(subject: Subject) -> Result:
            return _run(spec, subject, kind, test)

        return check

    def check_response(subject: Subject) -> Result:
        passed, reason = test(subject.output.text)
        return ("pass" if passed else "reject"), reason

    return check_response


def _q(value: str) -> str:
    return label_quote(value, LABEL_LIMIT)


def _at(spec: dict[str, Any]) -> str:
    if "tool" in spec:
        return f" in {spec['tool']} arguments" + (f" at {spec['path']}" if "path" in spec else "")
    return f" at {spec['path']}" if "path" in spec else ""


# --- equals ---------------------------------------------------------------------


def _equals_label(raw: Any) -> str:
    spec = _opts(raw)
    return f"equals {_q(spec['value'])}{_at(spec)}"


def _prepare_equals(raw: Any) -> Checker:
    """The trimmed, normalised text equals the value: for fixed answers and labels."""
    spec = _opts(raw)
    value = spec["value"]
    folding = bool(spec.get("fold", False))
    form, ignore_case = terms.form_of(spec), bool(spec.get("ignore_case", False))
    expected = fold(value) if folding else terms.normalised(value, form, ignore_case).strip()

    def test(text: str) -> tuple[bool, str]:
        found = fold(text) if folding else terms.normalised(text, form, ignore_case).strip()
        if found == expected:
            return True, f"equals {show(value)}"
        return False, f"expected {show(value)}, found {show(text.strip())}"

    return _runner(spec, "equals", test)


# --- contains / not_contains ------------------------------------------------------


def _needles(spec: dict[str, Any]) -> tuple[str, list[str]]:
    """(mode, values): mode is ``value``, ``any`` or ``all``."""
    for mode in ("value", "any", "all"):
        if mode in spec:
            values = spec[mode]
            return mode, [values] if isinstance(values, str) else list(values)
    raise ValueError("contains needs value, any or all")


def _contains_label(raw: Any) -> str:
    spec = _opts(raw)
    mode, values = _needles(spec)
    quoted = ", ".join(_q(v) for v in values)
    return f"contains {quoted if mode == 'value' else f'{mode} of {quoted}'}{_at(spec)}"


def _not_contains_label(raw: Any) -> str:
    spec = _opts(raw)
    _, values = _needles(spec)
    return f"not_contains {', '.join(_q(v) for v in values)}{_at(spec)}"


def _prepare_contains(raw: Any) -> Checker:
    """The text holds the value, one of ``any`` or every one of ``all``."""
    spec = _opts(raw)
    mode, values = _needles(spec)
    found_in = terms.term_list(values, spec, default_fold=False)

    def test(text: str) -> tuple[bool, str]:
        hits = found_in.hits(text)
        found = [v for v, hit in hits if hit is not None]
        missing = [v for v, hit in hits if hit is None]
        if mode == "all" and missing:
            return False, f"missing {', '.join(map(show, missing))} in {show(text)}"
        if not found and mode == "value":
            return False, f"{show(values[0])} not found in {show(text)}"
        if not found:
            return False, f"none of {show(values)} found in {show(text)}"
        return True, f"found {', '.join(map(show, found))}"

    return _runner(spec, "contains", test)


def _prepare_not_contains(raw: Any) -> Checker:
    """None of the values appear; the reject quotes the text around the first hit (the first
    term of the list that is found, whatever comes first in the text)."""
    spec = _opts(raw)
    mode, values = _needles(spec)
    found_in = terms.term_list(values, spec, default_fold=mode != "value")
    passed: list[str] = []  # the pass reason, worded at its first use

    def test(text: str) -> tuple[bool, str]:
        found = found_in.first_hit(text)
        if found is not None:
            value, (haystack, start, end) = found
            return False, f"found {show(value)} in {show(terms.snippet(haystack, start, end - start))}"
        if not reasons_wanted():
            return True, ""
        if not passed:
            passed.append(_none_found(values))
        return True, passed[0]

    return _runner(spec, "not_contains", test)


def _none_found(values: list[str]) -> str:
    """The pass reason of a term list: worded once per item, as the same lists pass in almost
    every answer and quoting a list of forty terms cost more than searching for them."""
    if len(values) == 1:
        return f"{show(values[0])} not found"
    return f"none of {show(list(values))} found"


# --- regex ------------------------------------------------------------------------


def _regex_spec(raw: Any) -> dict[str, Any]:
    return dict(raw) if isinstance(raw, Mapping) else {"pattern": raw}


def _compile(spec: dict[str, Any]) -> re.Pattern[str]:
    flags = 0
    for flag in spec.get("flags", []):
        flags |= _FLAGS[flag]
    return re.compile(spec["pattern"], flags)


def _cut_pattern(pattern: str) -> str:
    return pattern if len(pattern) <= LABEL_LIMIT else pattern[:LABEL_LIMIT] + "…"


def _regex_label(raw: Any) -> str:
    spec = _regex_spec(raw)
    return f"regex /{_cut_pattern(spec['pattern'])}/{''.join(spec.get('flags', []))}{_at(spec)}"


def _regex_lint(raw: Any) -> list[str]:
    try:
        _compile(_regex_spec(raw))
    except re.error as exc:
        return [f"invalid regex {show(_regex_spec(raw)['pattern'])}: {exc}"]
    return []


def _prepare_regex(raw: Any) -> Checker:
    """``re.search`` on the raw text, with the ``i``/``m``/``s`` flags of the spec."""
    spec = _regex_spec(raw)
    search = _compile(spec).search
    folding = bool(spec.get("fold", False))
    shown = _cut_pattern(spec["pattern"])

    def test(text: str) -> tuple[bool, str]:
        match = search(fold(text) if folding else text)
        if match is None:
            return False, f"no match for /{shown}/ in {show(text)}"
        return True, f"matched {show(match.group())}"

    return _runner(spec, "regex", test)


def _not_regex_label(raw: Any) -> str:
    return "not_" + _regex_label(raw)


def _prepare_not_regex(raw: Any) -> Checker:
    """No match anywhere: "the summary never asks" (no question mark, no question word) and
    other absences that a fixed list of phrases cannot pin down."""
    spec = _regex_spec(raw)
    search = _compile(spec).search
    folding = bool(spec.get("fold", False))
    shown = _cut_pattern(spec["pattern"])

    def test(text: str) -> tuple[bool, str]:
        match = search(fold(text) if folding else text)
        if match is not None:
            return False, f"/{shown}/ matched {show(match.group())} in {show(text)}"
        return True, f"no match for /{shown}/"

    return _runner(spec, "not_regex", test)


# --- max_chars --------------------------------------------------------------------


def _max_chars_label(raw: Any) -> str:
    spec = _opts(raw)
    return f"max_chars {spec['value']}{_at(spec)}"


def _prepare_max_chars(raw: Any) -> Checker:
    """At most ``value`` code points: a length budget (SMS, UI cards...)."""
    spec = _opts(raw)
    limit = int(spec["value"])

    def test(text: str) -> tuple[bool, str]:
        if len(text) <= limit:
            return True, f"{len(text)} characters <= {limit}"
        return False, f"expected at most {limit} characters, found {len(text)}: {show(text)}"

    return _runner(spec, "max_chars", test)


def _path_lint(raw: Any) -> list[str]:
    if isinstance(raw, Mapping) and isinstance(raw.get("path"), str):
        try:
            jsonpath.parse(raw["path"])
        except ValueError as exc:
            return [str(exc)]
    return []


def _regex_problems(raw: Any) -> list[str]:
    return _path_lint(raw) + _regex_lint(raw)


KINDS: dict[str, Kind] = {
    "equals": prepared_kind(_prepare_equals, _equals_label, _path_lint),
    "contains": prepared_kind(_prepare_contains, _contains_label, _path_lint),
    "not_contains": prepared_kind(_prepare_not_contains, _not_contains_label, _path_lint),
    "regex": prepared_kind(_prepare_regex, _regex_label, _regex_problems),
    "not_regex": prepared_kind(_prepare_not_regex, _not_regex_label, _regex_problems),
    "max_chars": prepared_kind(_prepare_max_chars, _max_chars_label, _path_lint),
}


#: For the kinds of other modules (``counting``, ``language``) that read texts the same way.
run_on_texts = _run
texts_checker = _runner
at_label = _at
path_lint = _path_lint
