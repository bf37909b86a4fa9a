"""Finding the terms of a ``contains``/``not_contains`` item in an answer, under Unicode rules.

Split from :mod:`harness.assertions.text`, which words the verdicts: this module
only says where (or whether) a term occurs. A term is searched on one of two
haystacks of the same text: its fold (:mod:`harness.assertions.fold`: case, NFKC
and separators, for the words of a term list) or its ``normalize``/``ignore_case``
form (markers, and every term when folding is off). :class:`TermList` prepares an
item's terms once and screens each text with one substring pass per haystack
before any ordered search, because almost every answer holds none of a list's
forbidden terms.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import lru_cache
from typing import Any, Literal

from harness.assertions.fold import Finder, fold, has_word_characters, needle_finder, needle_key

_Form = Literal["NFC", "NFD", "NFKC", "NFKD"]
_FORMS: dict[Any, _Form | None] = {
    "NFC": "NFC", "NFD": "NFD", "NFKC": "NFKC", "NFKD": "NFKD",
    True: "NFKC", False: None, None: None, "none": None,
}


def form_of(spec: dict[str, Any]) -> _Form | None:
    """The normalisation form of a spec: NFKC unless told otherwise."""
    return _FORMS[spec.get("normalize", "NFKC")]


@lru_cache(maxsize=256)
def normalised(text: str, form: _Form | None, fold: bool) -> str:
    """One answer is prepared once for all its assertions (a str caches its hash)."""
    if form:
        text = unicodedata.normalize(form, text)
    if fold:
        text = text.casefold()
        if form:  # casefold can un-normalise a few characters
            text = unicodedata.normalize(form, text)
    return text


def snippet(text: str, start: int, length: int) -> str:
    """The found text around a match, so a reject shows the offending context."""
    lo, hi = max(0, start - 40), min(len(text), start + length + 40)
    return ("…" if lo else "") + text[lo:hi] + ("…" if hi < len(text) else "")


#: One term's finder and whether it runs on the folded text (else on the prepared text).
_Term = tuple[str, Finder | str, bool]
#: Where a term was found: (the text searched, start, end).
_Hit = tuple[str, int, int]


def term_list(values: list[str], spec: dict[str, Any], *, default_fold: bool) -> TermList:
    """How to find each term: folded (words of a term list), or as written after
    ``normalize``/``ignore_case`` (folding off, or a marker with no letter or digit)."""
    folding = bool(spec.get("fold", default_fold))
    form, ignore_case = form_of(spec), bool(spec.get("ignore_case", False))
    terms = [(value, needle_finder(value), True) if folding and has_word_characters(value)
             else (value, normalised(value, form, ignore_case), False) for value in values]
    return TermList(terms, form, ignore_case)


def literal_screen(needles: Iterable[str]) -> Callable[[str], bool] | None:
    """Whether a text holds any of ``needles`` as a substring (``None``: no needle, nothing can
    be found). A loop of ``in`` tests, each a C search: measured on the examples' lists, twice
    as fast as one search of a compiled alternation, which also cost 0.2 ms to compile per list."""
    distinct = tuple(dict.fromkeys(needles))
    if not distinct:
        return None

    def holds_any(text: str) -> bool:
        for needle in distinct:  # noqa: SIM110 - any() of a generator costs a frame per term
            if needle in text:
                return True
        return False

    return holds_any


class TermList:
    """The terms of one ``contains``/``not_contains`` item, prepared once, with a screen.

    A term is found on one of two haystacks of a text: its fold (a term list's words) or its
    ``normalize``/``ignore_case`` form (markers, folding off). Every match of a folded term
    holds that term's key (:func:`~harness.assertions.fold.needle_key`) and every match of the
    other kind is the prepared term itself, so one search for all the keys of a haystack
    (:attr:`screen`) says "none can be found" for most texts: the exact, ordered matching runs
    only when it says "maybe". The screen only ever skips work that would have found nothing.
    """

    __slots__ = ("terms", "form", "ignore_case", "screens")

    def __init__(self, terms: Sequence[_Term], form: _Form | None, ignore_case: bool,
                 screen: Callable[[Iterable[str]], Callable[[str], bool] | None] = literal_screen
                 ) -> None:
        self.terms = tuple(terms)
        self.form, self.ignore_case = form, ignore_case
        keys = [needle_key(value) if on_folded else str(finder) for value, finder, on_folded in terms]
        folded = [key for key, (_, _, on_folded) in zip(keys, terms, strict=True) if on_folded]
        plain = [key for key, (_, _, on_folded) in zip(keys, terms, strict=True) if not on_folded]
        self.screens = (screen(folded), screen(plain)) if len(terms) > 1 else (None, None)
        """(folded, plain): each haystack's screen; none for a single term (its own test is one
        substring test already)."""

    def maybe(self, text: str) -> bool:
        """False only when no term can be found in ``text`` (the screen); true otherwise."""
        on_folded, on_plain = self.screens
        if on_folded is None and on_plain is None:
            return bool(self.terms)
        return bool((on_folded is not None and on_folded(fold(text)))
                    or (on_plain is not None
                        and on_plain(normalised(text, self.form, self.ignore_case))))

    def first_hit(self, text: str) -> tuple[str, _Hit] | None:
        """The first term (in list order) found in ``text``, with where; one pass, stopping at
        it: ``not_contains``."""
        if self.maybe(text):
            for value, hit in self._search(text):
                if hit is not None:
                    return value, hit
        return None

    def hits(self, text: str) -> list[tuple[str, _Hit | None]]:
        """Every term with where it was found (``None``: not found): ``contains``."""
        if not self.maybe(text):
            return [(value, None) for value, _, _ in self.terms]
        return list(self._search(text))

    def _search(self, text: str) -> Iterator[tuple[str, _Hit | None]]:
        """Each term with where it was found, lazily, each haystack made when a term needs it."""
        prepared: str | None = None
        folded: str | None = None
        for value, finder, on_folded in self.terms:
            if on_folded and not isinstance(finder, str):
                folded = fold(text) if folded is None else folded
                span = finder(folded)
                yield value, ((folded, span[0], span[1]) if span else None)
            else:
                if prepared is None:
                    prepared = normalised(text, self.form, self.ignore_case)
                at = prepared.find(str(finder))
                yield value, ((prepared, at, at + len(str(finder))) if at >= 0 else None)
