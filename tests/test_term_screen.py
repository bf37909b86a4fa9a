"""Prepared assertions and the term-list screen: a faster check must give the same verdicts.

``contains`` / ``not_contains`` with a list of terms first ask a cheap screen ("can any term be
in this text at all?") and run the exact matching (fold, or ``normalize`` + ``ignore_case``)
only when it says maybe. The screen may only skip work that finds nothing: these properties
compare verdicts with a reference written here, term by term and without any screen, on texts
built from the characters where case and normalisation go wrong (ß and ẞ, İ and ı, the ﬁ
ligature, the Kelvin sign, combining marks, full-width letters, separators). Two deliberately
wrong screens are run through the same property and must be caught, so the property has teeth.

Every kind is also checked to give the same verdict prepared once (``Kind.prepare``, kept on
the checked item) as run from its spec, and a checked item prepares once.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from harness.assertions import REGISTRY, CheckedItem, check_item, evaluate
from harness.assertions import terms as term_search
from harness.assertions.fold import fold, needle_finder, needle_key
from harness.assertions.jsonpath import Selections
from harness.assertions.kind import Subject
from harness.assertions.reasons import show
from harness.core.entities import AgentOutput, ChatResponse, ToolCall

#: Pieces of texts and terms: the characters whose case or normal form changes their length
#: or their spelling, the separators folding merges, and plain words.
PIECES = ("ß", "ss", "SS", "ẞ", "İ", "i", "I", "ı", "i\u0307", "ﬁ", "fi", "FI", "\u212a", "k", "K",
          "e\u0301", "é", "É", "\u0301", "ä", "a\u0308", "ＡＢ", "ab", "Ⅻ", "xii", "_", "-", " ",
          ".", "/", "status", "Summary", "ERR", "#", "**", "](", "3be1f0c9a1b2", "3BE1F0C")

#: How a writer might spell a term again: other case, other normal form.
SPELLINGS: tuple[Callable[[str], str], ...] = (
    str, str.upper, str.lower, str.casefold, str.title,
    lambda s: unicodedata.normalize("NFD", s), lambda s: unicodedata.normalize("NFKC", s),
    lambda s: s.replace(" ", "_"), lambda s: s.replace(" ", ""),
)

pieces = st.sampled_from(PIECES)
terms_of = st.lists(st.lists(pieces, min_size=1, max_size=3).map("".join), min_size=1, max_size=4)
options = st.fixed_dictionaries({}, optional={
    "fold": st.booleans(), "ignore_case": st.booleans(),
    "normalize": st.sampled_from(["NFKC", "NFC", "NFD", "NFKD", "none", True, False]),
})


@st.composite
def cases(draw: st.DrawFn) -> tuple[list[str], str, dict[str, Any]]:
    """A term list, a text that often holds one of its terms respelled, and the item's options."""
    terms = draw(terms_of)
    around = st.lists(pieces, max_size=4).map("".join)
    inner = ""
    if draw(st.booleans()):
        inner = draw(st.sampled_from(SPELLINGS))(draw(st.sampled_from(terms)))
    return terms, draw(around) + inner + draw(around), draw(options)


def _form(spec: Mapping[str, Any]) -> str | None:
    form = spec.get("normalize", "NFKC")
    return {True: "NFKC", False: None, "none": None, None: None}.get(form, form)


def _as_written(value: str, spec: Mapping[str, Any]) -> str:
    """The docs' ``normalize`` then ``casefold`` (then normalise again), written out here."""
    form = _form(spec)
    if form:
        value = unicodedata.normalize(form, value)  # type: ignore[arg-type]
    if spec.get("ignore_case", False):
        value = value.casefold()
        if form:
            value = unicodedata.normalize(form, value)  # type: ignore[arg-type]
    return value


def reference(terms: list[str], body: str, spec: Mapping[str, Any], default_fold: bool
              ) -> list[tuple[str, tuple[str, int, int] | None]]:
    """Each term with where the exact matching finds it: term by term, no screen."""
    folding = spec.get("fold", default_fold)
    found: list[tuple[str, tuple[str, int, int] | None]] = []
    for term in terms:
        if folding and any(ch.isalnum() for ch in term):
            haystack = fold(body)
            span = needle_finder(term)(haystack)
            found.append((term, (haystack, *span) if span else None))
        else:
            haystack, needle = _as_written(body, spec), _as_written(term, spec)
            at = haystack.find(needle)
            found.append((term, (haystack, at, at + len(needle)) if at >= 0 else None))
    return found


def verdict_of(item: Mapping[str, Any], body: str) -> tuple[str, str]:
    assert check_item(item) == [], check_item(item)
    (found,) = evaluate([CheckedItem(item)], AgentOutput(ChatResponse(body), body, None),
                        output_kind="text", output_schema=None)
    assert not found.crashed, found
    return found.outcome, found.reason


# --- the screen never changes a verdict ---------------------------------------------------


@settings(max_examples=400, deadline=None)
@given(cases())
@example((["STRASSE"], "die straße", {"ignore_case": True}))
@example((["ﬁle", "x"], "a file", {}))
@example((["\u212aelvin", "x"], "kelvin", {"fold": True}))
@example((["İstanbul", "x"], "i\u0307stanbul", {}))
@example((["café", "x"], "cafe\u0301", {"normalize": "NFC"}))
def test_not_contains_gives_the_verdict_of_the_term_by_term_match(
        case: tuple[list[str], str, dict[str, Any]]) -> None:
    terms, body, spec = case
    first = next(((t, hit) for t, hit in reference(terms, body, spec, True) if hit), None)
    outcome, reason = verdict_of({"not_contains": {"any": terms, **spec}}, body)
    if first is None:
        assert (outcome, reason) == ("pass", f"none of {show(terms)} found" if len(terms) > 1
                                     else f"{show(terms[0])} not found")
    else:
        term, (haystack, start, end) = first
        snippet = term_search.snippet(haystack, start, end - start)
        assert (outcome, reason) == ("reject", f"found {show(term)} in {show(snippet)}")


@settings(max_examples=300, deadline=None)
@given(cases(), st.sampled_from(["any", "all"]))
@example((["STRASSE", "x"], "straße", {"ignore_case": True}), "any")
def test_contains_gives_the_verdict_of_the_term_by_term_match(
        case: tuple[list[str], str, dict[str, Any]], mode: str) -> None:
    terms, body, spec = case
    hits = reference(terms, body, spec, False)
    found = [t for t, hit in hits if hit]
    outcome, reason = verdict_of({"contains": {mode: terms, **spec}}, body)
    holds = bool(found) if mode == "any" else len(found) == len(terms)
    assert outcome == ("pass" if holds else "reject")
    if holds:
        assert reason == f"found {', '.join(map(show, found))}"


@settings(max_examples=300, deadline=None)
@given(st.lists(pieces, min_size=1, max_size=3).map("".join), st.lists(pieces, max_size=6).map("".join))
def test_every_match_of_a_folded_term_holds_its_key(term: str, body: str) -> None:
    """The lemma the folded screen rests on: no key in the folded text, no match."""
    if needle_finder(term)(fold(body)) is not None:
        assert needle_key(term) in fold(body)


# --- a wrong screen is caught ---------------------------------------------------------------

#: Something that answers "can a term of this list be in this text?" for one item's spec.
Screen = Callable[[list[str], dict[str, Any]], Callable[[str], bool]]


def screen_is_sound(screen: Screen) -> Callable[[], None]:
    """The property every screen must have: when a term is found, the screen said maybe."""
    @settings(max_examples=400, deadline=None, derandomize=True, database=None)
    @given(cases())
    def sound(case: tuple[list[str], str, dict[str, Any]]) -> None:
        terms, body, spec = case
        if any(hit for _, hit in reference(terms, body, spec, True)):
            assert screen(terms, spec)(body), (terms, body, spec)

    return sound


def the_screen(terms: list[str], spec: dict[str, Any]) -> Callable[[str], bool]:
    return term_search.term_list(terms, spec, default_fold=True).maybe


def lowered_raw_text(terms: list[str], spec: dict[str, Any]) -> Callable[[str], bool]:
    """Wrong: ``lower()`` on the raw text skips folding, NFKC and casefold (ß, ﬁ, é, ``_``)."""
    return lambda body: any(term.lower() in body.lower() for term in terms)


def last_key_dropped(terms: list[str], spec: dict[str, Any]) -> Callable[[str], bool]:
    """Wrong: the real term list and haystacks, with a screen that forgets the last key."""
    def short(needles: Iterable[str]) -> Callable[[str], bool] | None:
        return term_search.literal_screen(list(needles)[:-1])

    prepared = term_search.term_list(terms, spec, default_fold=True)
    return term_search.TermList(prepared.terms, prepared.form, prepared.ignore_case, screen=short).maybe


def test_the_screen_is_sound() -> None:
    screen_is_sound(the_screen)()


@pytest.mark.parametrize("wrong", [lowered_raw_text, last_key_dropped])
def test_a_wrong_screen_is_caught(wrong: Screen) -> None:
    with pytest.raises(AssertionError):
        screen_is_sound(wrong)()


# --- prepared once, same verdicts -------------------------------------------------------------

ITEMS: list[dict[str, Any]] = [
    {"equals": {"value": "STRASSE", "ignore_case": True}},
    {"equals": {"value": "status summary", "fold": True}},
    {"contains": {"all": ["ﬁle", "\u212a"], "fold": True}},
    {"contains": {"any": ["nope", "Straße"], "path": "notes[*]"}},
    {"not_contains": {"any": ["status_summary", "**", "3be1f0c9a1b2c3"]}},
    {"not_contains": {"value": "secret", "tool": "send"}},
    {"regex": {"pattern": "^ans", "flags": ["i"]}},
    {"not_regex": {"pattern": "\\?", "path": "notes[*]"}},
    {"max_chars": 12},
    {"words": {"max": 3, "path": "notes[*]"}},
    {"sentences": {"min": 1}},
    {"questions": 0},
    {"json_path": {"path": "answer", "equals": "Answer"}},
    {"json_path": {"path": "missing", "exists": False}},
    {"json_schema": {"type": "object", "required": ["answer"]}},
    {"json_schema": True},
    {"tool_called": "send"},
    {"tool_not_called": "drop"},
    {"tool_args": {"name": "send", "args": {"to": "a"}}},
]

OUTPUTS = [
    AgentOutput(ChatResponse('{"answer": "Answer", "notes": ["Die Straße", "a ﬁle? \u212a"]}',
                             (ToolCall("send", {"to": "a", "body": "no secret"}),)),
                '{"answer": "Answer", "notes": ["Die Straße", "a ﬁle? \u212a"]}',
                {"answer": "Answer", "notes": ["Die Straße", "a ﬁle? \u212a"]}),
    AgentOutput(ChatResponse("Answer: StatusSummary **bold**"), "Answer: StatusSummary **bold**",
                None),
]


@pytest.mark.parametrize("item", ITEMS, ids=lambda item: next(iter(item)))
@pytest.mark.parametrize("output", OUTPUTS, ids=["json", "text"])
def test_a_prepared_spec_gives_the_verdict_of_its_check(item: dict[str, Any],
                                                          output: AgentOutput) -> None:
    assert check_item(item) == [], check_item(item)
    (kind_name,) = item
    kind = REGISTRY[kind_name]
    kind_of = "json" if output.parsed is not None else "text"
    subject = Subject(output, kind_of, {"type": "object"}, Selections(output.parsed))
    assert kind.checker(item[kind_name])(subject) == kind.check(item[kind_name], subject)
    plain = evaluate([item], output, output_kind=kind_of, output_schema={"type": "object"})
    checked = CheckedItem(item)
    twice = [evaluate([checked], output, output_kind=kind_of, output_schema={"type": "object"})
             for _ in range(2)]
    assert twice == [plain, plain]


def test_a_checked_item_keeps_its_checker_from_the_second_evaluation_and_a_failed_one_never(
        monkeypatch: pytest.MonkeyPatch) -> None:
    output = OUTPUTS[1]
    item = CheckedItem({"not_contains": {"any": ["x", "y"]}})
    first = evaluate([item], output, output_kind="text", output_schema=None)
    assert item.prepared is None  # evaluated once: nothing held for the rest of the run
    assert evaluate([item], output, output_kind="text", output_schema=None) == first
    kept = item.prepared
    assert kept is not None
    assert evaluate([item], output, output_kind="text", output_schema=None) == first
    assert item.prepared is kept

    def boom(values: Any, spec: Any, *, default_fold: bool) -> Any:
        raise RuntimeError("no terms today")

    monkeypatch.setattr(term_search, "term_list", boom)
    fresh = CheckedItem({"not_contains": {"any": ["x", "y"]}})
    for _ in range(2):  # raises again at each evaluation: nothing half-made was kept
        (verdict,) = evaluate([fresh], output, output_kind="text", output_schema=None)
        assert verdict.crashed and "no terms today" in verdict.reason
        assert verdict.assertion == "not_contains 'x', 'y'"
    assert fresh.prepared is None


def test_origins_are_given_as_verdicts_are_made() -> None:
    output = OUTPUTS[1]
    items = [CheckedItem({"max_chars": 500}, origin="agent"), {"max_chars": 1}]
    kept = evaluate(items, output, output_kind="text", output_schema=None, origins=True)
    assert [(v.origin, v.outcome) for v in kept] == [("agent", "pass"), ("scenario", "reject")]
    bare = evaluate(items, output, output_kind="text", output_schema=None)
    assert [v.origin for v in bare] == ["", ""]
