"""The ``language`` assertion: the text is written in one of the expected languages.

A reply in English to a user who writes Portuguese keeps every field and
every phrase list happy; only the language is wrong. Identification is done
offline by py3langid (its model ships inside the wheel: nothing is fetched at
run time), restricted to a candidate set, because telling six languages apart
in a short text is far more reliable than telling ninety-seven
(``tests/benchmarks/bench_language_id.py``: 72 of 72 short texts right). The model is
unpacked once into a cache outside the project (:mod:`harness.assertions.langmodel`).

Spec: ``language: pt`` (shorthand) or ``{in: [pt, es], among: [...], min_chars: 20,
path: ..., tool: ...}``. ``among`` is the candidate set (default: :data:`DEFAULT_AMONG`
plus the expected ones). A text shorter than ``min_chars`` (default 20) is too short
to identify and is skipped; when every selected text is skipped the verdict is
``not_evaluated``, never a guessed pass.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from harness.assertions.kind import Kind, Result, Subject
from harness.assertions.langmodel import full_identifier, identifier_for
from harness.assertions.reasons import show
from harness.assertions.text import at_label, path_lint, run_on_texts

#: Candidates when an item names none: the languages of the examples and their neighbours.
DEFAULT_AMONG = ("en", "pt", "es", "fr", "de", "it", "nl", "zh", "ja")
#: Shorter texts are skipped: a label of two words does not carry its language.
DEFAULT_MIN_CHARS = 20

_LOCK = threading.Lock()


def identify(text: str, among: tuple[str, ...] = DEFAULT_AMONG) -> str:
    """The most likely language of ``text`` among ``among`` (ISO 639-1 codes); the model
    loads once per process, whatever the sets (:mod:`harness.assertions.langmodel`)."""
    identifier = identifier_for(tuple(sorted(among)))
    with _LOCK:
        return str(identifier.classify(text)[0])


#: The 140 codes of the bundled model (a test checks them against the model), so checking
#: an item at load time does not load the model.
KNOWN = frozenset({
    "ace", "af", "am", "an", "ar", "ary", "arz", "as", "az", "ba", "bcl", "be", "bg", "bn",
    "br", "bs", "ca", "crh", "cs", "cy", "da", "de", "dz", "el", "en", "eo", "es", "et", "eu",
    "ext", "fa", "fi", "fo", "fr", "fuv", "fy", "ga", "gcf", "gcr", "gd", "gl", "gom", "grc",
    "gu", "gug", "guw", "ha", "hbo", "he", "hi", "hr", "ht", "hu", "hy", "id", "ig", "is",
    "it", "ja", "jv", "ka", "kab", "kik", "kk", "km", "kn", "ko", "ku", "ky", "la", "lb", "lg",
    "lij", "ln", "lo", "lt", "ltg", "lv", "mg", "mk", "ml", "mn", "mr", "ms", "mt", "my", "ne",
    "nl", "nn", "no", "nso", "oc", "om", "or", "pa", "pcm", "pl", "ps", "pt", "qu", "ro", "ru",
    "rw", "sa", "sdh", "se", "si", "sk", "sl", "sn", "so", "sq", "sr", "st", "sv", "sw", "ta",
    "te", "tg", "th", "tk", "tl", "tr", "tt", "ug", "uk", "ur", "uz", "uzs", "vec", "vi", "vo",
    "wa", "wuu", "xh", "yo", "yue", "zh", "zu", "zxx",
})


def model_languages() -> frozenset[str]:
    """Every code the bundled model knows (loads the model, once per process)."""
    return frozenset(full_identifier().nb_classes)


def _spec(raw: Any) -> dict[str, Any]:
    return dict(raw) if isinstance(raw, Mapping) else {"in": [raw]}


def _among(spec: dict[str, Any]) -> tuple[str, ...]:
    return tuple(sorted(set(spec.get("among") or DEFAULT_AMONG) | set(spec["in"])))


def _label(raw: Any) -> str:
    spec = _spec(raw)
    return f"language in {', '.join(spec['in'])}{at_label(spec)}"


def _lint(raw: Any) -> list[str]:
    spec = _spec(raw)
    problems = path_lint(raw)
    unknown = sorted((set(spec["in"]) | set(spec.get("among") or ())) - KNOWN)
    if unknown:
        problems.append(f"unknown language code(s) {', '.join(unknown)}: use ISO 639-1 codes "
                        f"the model knows, e.g. {', '.join(DEFAULT_AMONG)}")
    return problems


def _check(raw: Any, subject: Subject) -> Result:
    spec = _spec(raw)
    expected = set(spec["in"])
    among = _among(spec)
    minimum = int(spec.get("min_chars", DEFAULT_MIN_CHARS))
    judged = 0

    def test(text: str) -> tuple[bool, str]:
        nonlocal judged
        if len(text.strip()) < minimum:
            return True, f"too short to identify ({len(text.strip())} < {minimum} characters)"
        judged += 1
        found = identify(text, among)
        if found in expected:
            return True, f"written in {found}"
        return False, f"expected {' or '.join(sorted(expected))}, found {found} in {show(text)}"

    outcome, reason = run_on_texts(spec, subject, "language", test)
    if outcome == "pass" and judged == 0:
        return "not_evaluated", f"every text is shorter than {minimum} characters: {reason}"
    return outcome, reason


KINDS: dict[str, Kind] = {"language": Kind(_check, _label, _lint)}
