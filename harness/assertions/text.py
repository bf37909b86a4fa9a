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
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterator, Mapping
from functools import lru_cache
from typing import Any, Literal

from harness.assertions import jsonpath
from harness.assertions.fold import Finder, fold, has_word_characters, needle_finder
from harness.assertions.structured import (
    LABEL_LIMIT,
    Kind,
    Result,
    Subject,
    document_problem,
    label_quote,
    reasons_wanted,
    show,
)

#: A per-text test: (passed, reason).
_Test = Callable[[str], tuple[bool, str]]

_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL}


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


_Form = Literal["NFC", "NFD", "NFKC", "NFKD"]
_FORMS: dict[Any, _Form | None] = {
    "NFC": "NFC", "NFD": "NFD", "NFKC": "NFKC", "NFKD": "NFKD",
    True: "NFKC", False: None, None: None, "none": None,
}


def _form(spec: dict[str, Any]) -> _Form | None:
    """The normalisation form of a spec: NFKC unless told otherwise."""
    return _FORMS[spec.get("normalize", "NFKC")]


def _prepare(text: str, spec: dict[str, Any]) -> str:
    """Normalise (and casefold) one side of a comparison."""
    return _normalised(text, _form(spec), bool(spec.get("ignore_case", False)))


@lru_cache(maxsize=256)
def _normalised(text: str, form: _Form | None, fold: bool) -> str:
    """One answer is prepared once for all its assertions (a str caches its hash)."""
    if form:
        text = unicodedata.normalize(form, text)
    if fold:
        text = text.casefold()
        if form:  # casefold can un-normalise a few characters
            text = unicodedata.normalize(form, text)
    return text


def _snippet(text: str, start: int, length: int) -> str:
    """The found text around a match, so a reject shows the offending context."""
    lo, hi = max(0, start - 40), min(len(text), start + length + 40)
    return ("…" if lo else "") + text[lo:hi] + ("…" if hi < len(text) else "")


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


def _check_equals(raw: Any, subject: Subject) -> Result:
    """The trimmed, normalised text equals the value: for fixed answers and labels."""
    spec = _opts(raw)
    folding = bool(spec.get("fold", False))
    expected = fold(spec["value"]) if folding else _prepare(spec["value"], spec).strip()

    def test(text: str) -> tuple[bool, str]:
        found = fold(text) if folding else _prepare(text, spec).strip()
        if found == expected:
            return True, f"equals {show(spec['value'])}"
        return False, f"expected {show(spec['value'])}, found {show(text.strip())}"

    return _run(spec, subject, "equals", test)


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


def _check_contains(raw: Any, subject: Subject) -> Result:
    """The text holds the value, one of ``any`` or every one of ``all``."""
    spec = _opts(raw)
    mode, values = _needles(spec)
    finders = _finders(values, spec, default_fold=False)

    def test(text: str) -> tuple[bool, str]:
        hits = list(_search(finders, text, spec))
        found = [v for v, hit in hits if hit is not None]
        missing = [v for v, hit in hits if hit is None]
        if mode == "all" and missing:
            return False, f"missing {', '.join(map(show, missing))} in {show(text)}"
        if not found and mode == "value":
            return False, f"{show(values[0])} not found in {show(text)}"
        if not found:
            return False, f"none of {show(values)} found in {show(text)}"
        return True, f"found {', '.join(map(show, found))}"

    return _run(spec, subject, "contains", test)


def _check_not_contains(raw: Any, subject: Subject) -> Result:
    """None of the values appear; the reject quotes the text around the first hit."""
    spec = _opts(raw)
    mode, values = _needles(spec)
    finders = _finders(values, spec, default_fold=mode != "value")

    def test(text: str) -> tuple[bool, str]:
        for value, hit in _search(finders, text, spec):
            if hit is not None:
                haystack, start, end = hit
                return False, f"found {show(value)} in {show(_snippet(haystack, start, end - start))}"
        return True, _none_found(tuple(values)) if reasons_wanted() else ""

    return _run(spec, subject, "not_contains", test)


@lru_cache(maxsize=1024)
def _none_found(values: tuple[str, ...]) -> str:
    """The pass reason of a term list, worded once: the same lists pass in almost every answer,
    and quoting a list of forty terms cost more than searching for them."""
    if len(values) == 1:
        return f"{show(values[0])} not found"
    return f"none of {show(list(values))} found"


#: One term's finder and whether it runs on the folded text (else on the prepared text).
_Term = tuple[str, Finder | str, bool]


def _finders(values: list[str], spec: dict[str, Any], *, default_fold: bool) -> list[_Term]:
    """How to find each term: folded (words of a term list), or as written after
    ``normalize``/``ignore_case`` (folding off, or a marker with no letter or digit)."""
    folding = bool(spec.get("fold", default_fold))
    try:
        return list(_terms(tuple(values), folding, _form(spec), bool(spec.get("ignore_case", False))))
    except TypeError:  # a value that is not hashable (never from a valid item): built uncached
        return [(value, needle_finder(value), True) if folding and has_word_characters(value)
                else (value, _prepare(value, spec), False) for value in values]


@lru_cache(maxsize=1024)
def _terms(values: tuple[str, ...], folding: bool, form: _Form | None,
           ignore_case: bool) -> tuple[_Term, ...]:
    """The finders of one term list, built once: the same lists are searched in every answer
    and every counterexample (2,189 builds for a few dozen lists in the committed examples)."""
    return tuple((value, needle_finder(value), True) if folding and has_word_characters(value)
                 else (value, _normalised(value, form, ignore_case), False) for value in values)


def _search(terms: list[_Term], text: str,
            spec: dict[str, Any]) -> Iterator[tuple[str, tuple[str, int, int] | None]]:
    """Each term with where it was found: (the text searched, start, end), or ``None``; lazily,
    so ``not_contains`` stops searching at its first hit."""
    prepared: str | None = None  # made when a term needs it: most lists are all folded words
    folded: str | None = None
    for value, finder, on_folded in terms:
        if on_folded and not isinstance(finder, str):
            folded = fold(text) if folded is None else folded
            span = finder(folded)
            yield value, ((folded, span[0], span[1]) if span else None)
        else:
            prepared = _prepare(text, spec) if prepared is None else prepared
            at = prepared.find(str(finder))
            yield value, ((prepared, at, at + len(str(finder))) if at >= 0 else None)


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


def _check_regex(raw: Any, subject: Subject) -> Result:
    """``re.search`` on the raw text, with the ``i``/``m``/``s`` flags of the spec."""
    spec = _regex_spec(raw)
    compiled = _compile(spec)
    folding = bool(spec.get("fold", False))

    def test(text: str) -> tuple[bool, str]:
        match = compiled.search(fold(text) if folding else text)
        if match is None:
            return False, f"no match for /{_cut_pattern(spec['pattern'])}/ in {show(text)}"
        return True, f"matched {show(match.group())}"

    return _run(spec, subject, "regex", test)


def _not_regex_label(raw: Any) -> str:
    return "not_" + _regex_label(raw)


def _check_not_regex(raw: Any, subject: Subject) -> Result:
    """No match anywhere: "the summary never asks" (no question mark, no question word) and
    other absences that a fixed list of phrases cannot pin down."""
    spec = _regex_spec(raw)
    compiled = _compile(spec)
    folding = bool(spec.get("fold", False))

    def test(text: str) -> tuple[bool, str]:
        match = compiled.search(fold(text) if folding else text)
        if match is not None:
            return False, f"/{_cut_pattern(spec['pattern'])}/ matched {show(match.group())} in {show(text)}"
        return True, f"no match for /{_cut_pattern(spec['pattern'])}/"

    return _run(spec, subject, "not_regex", test)


# --- max_chars --------------------------------------------------------------------


def _max_chars_label(raw: Any) -> str:
    spec = _opts(raw)
    return f"max_chars {spec['value']}{_at(spec)}"


def _check_max_chars(raw: Any, subject: Subject) -> Result:
    """At most ``value`` code points: a length budget (SMS, UI cards...)."""
    spec = _opts(raw)
    limit = int(spec["value"])

    def test(text: str) -> tuple[bool, str]:
        if len(text) <= limit:
            return True, f"{len(text)} characters <= {limit}"
        return False, f"expected at most {limit} characters, found {len(text)}: {show(text)}"

    return _run(spec, subject, "max_chars", test)


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
    "equals": Kind(_check_equals, _equals_label, _path_lint),
    "contains": Kind(_check_contains, _contains_label, _path_lint),
    "not_contains": Kind(_check_not_contains, _not_contains_label, _path_lint),
    "regex": Kind(_check_regex, _regex_label, _regex_problems),
    "not_regex": Kind(_check_not_regex, _not_regex_label, _regex_problems),
    "max_chars": Kind(_check_max_chars, _max_chars_label, _path_lint),
}


#: For the kinds of other modules (``counting``, ``language``) that read texts the same way.
run_on_texts = _run
at_label = _at
path_lint = _path_lint
