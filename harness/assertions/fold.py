"""Text folding: the normalisation that lets a list of forbidden terms survive rewording.

A leak list written as ``status_summary`` must also catch ``status summary``,
``StatusSummary`` and ``status-summary``; a handle ``maria.souza`` must catch
``Maria Souza``; a commit hash must catch its abbreviation. Comparing raw
substrings walks past all of them, which is how a strict reviewer's rewordings
got through the example assertions (issue 18). :func:`fold` maps a text to one
canonical spelling, and :func:`needle_finder` matches a term against it:

* NFKC (full-width and compatibility characters become their plain forms),
  camelCase and PascalCase boundaries become separators, then ``casefold``;
* every run of separators (whitespace, ``_``, hyphens and dashes, ``/``, ``\\``,
  ``.``, ``·``) becomes one space;
* a term matches with or without the separators between its words
  (``status summary`` also finds ``statussummary``), but never across a
  separator the term does not have (``note`` does not find ``no telling``);
* a term of 12 or more hex digits (a hash) also matches its first 7 (git's short form);
* a separator at the start or end of a term is kept as a word boundary
  (``ERR_`` finds ``ERR_CODE`` and ``err code``, never ``error`` or ``preferred``);
* a term with no letter or digit (``**``, ``](``, ``# ``: Markdown markers) is
  matched as written, after NFKC only: folding would erase what it looks for.

Folding is on by default for ``not_contains`` with a list (``any``/``all``) and
opt-in (``fold: true``) for ``equals``, ``contains``, ``not_contains: {value}``,
``regex`` and ``not_regex`` (whose pattern then runs on the folded text).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from functools import lru_cache

__all__ = ["fold", "needle_finder", "needle_key", "has_word_characters"]

#: A case boundary inside a word: lower to upper (``statusSummary``), and the last capital of
#: a run before a lower-case letter (``HTTPServer``). Never after a digit: an upper-case hash
#: (``3BE1F0C9``) or a code (``ERR2X``) stays one word, as its lower-case spelling is.
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SEPARATORS = re.compile(r"[\s_\-\u2010-\u2015\u2212/\\.\u00b7\u30fb]+")
_HEX = re.compile(r"[0-9a-f]{12,}")
#: How long the short form of a hash is (git's default abbreviation).
SHORT_HASH = 7

#: Finds a term in a text: the (start, end) of the first match, or ``None``.
Finder = Callable[[str], tuple[int, int] | None]


@lru_cache(maxsize=1024)
def fold(text: str) -> str:
    """The canonical spelling of ``text``: NFKC, camel case split, casefolded, one space per
    run of separators, trimmed. Memoised: every term list of an answer's items folds the same
    field again (a str caches its hash, so a hit costs a dictionary look-up)."""
    text = unicodedata.normalize("NFKC", text)
    text = _CAMEL.sub(" ", text)
    text = unicodedata.normalize("NFKC", text.casefold())
    return _SEPARATORS.sub(" ", text).strip()


def has_word_characters(term: str) -> bool:
    """Whether a term has a letter or digit (else it is a marker, matched as written)."""
    return any(ch.isalnum() for ch in term)


def needle_finder(term: str) -> Finder:
    """A finder of ``term`` in a text already passed through :func:`fold` (one per term: the
    same lists are checked on every iteration and every generated mutant)."""
    return _needle(term)[1]


def needle_key(term: str) -> str:
    """A substring of the folded text that every match of :func:`needle_finder` holds: a folded
    text without it holds no match, so a term list can be screened in one search of its keys."""
    return _needle(term)[0]


@lru_cache(maxsize=4096)
def _needle(term: str) -> tuple[str, Finder]:
    """(key, finder) of ``term``: built together, as the finder's own first test is the key."""
    folded = fold(term)
    words = folded.split(" ")
    pattern = " ?".join(re.escape(word) for word in words)
    # Every match holds the first word (the short form of a hash: its first SHORT_HASH
    # characters): a text without it is answered by a substring test, not a regex search
    # (most texts hold none of a list's terms).
    first = words[0]
    plain = unicodedata.normalize("NFKC", term)
    literal = len(words) == 1  # one word, no short form, no boundary: the pattern is the word
    if _HEX.fullmatch(folded.replace(" ", "")):
        pattern = f"(?:{pattern}|{re.escape(folded.replace(' ', '')[:SHORT_HASH])})"
        first, literal = first[:SHORT_HASH], False
    if _SEPARATORS.match(plain[-1:]):  # "ERR_" is a prefix followed by a separator, not "error"
        pattern += "(?: |$)"
        literal = False
    if _SEPARATORS.match(plain[:1]):
        pattern = "(?:^| )" + pattern
        literal = False
    if literal:  # its first match is str.find's: no regex to compile (119 of the examples' 289)
        def find_word(text: str) -> tuple[int, int] | None:
            at = text.find(first)
            return (at, at + len(first)) if at >= 0 else None

        return first, find_word
    compiled: list[re.Pattern[str]] = []  # compiled at the first text holding the first word:
    # most texts hold none of a list's terms, and a compile costs 50 to 100 us

    def find(text: str) -> tuple[int, int] | None:
        if first not in text:
            return None
        if not compiled:
            compiled.append(re.compile(pattern))
        match = compiled[0].search(text)
        return (match.start(), match.end()) if match else None

    return first, find
