"""Detectors of secrets and personal data, each a pattern plus a validator that keeps it precise.

A detector that fires on every digit run gets allowlisted into silence, so
numbers are only reported when their structure holds: cards pass Luhn and
carry a known issuer prefix, CPF and CNPJ pass their check digits, phones have
a plausible digit count, emails do not use a domain reserved for examples
(RFC 2606), and tokens mix letters and digits the way generated keys do.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass

_B = r"(?<![A-Za-z0-9_])"
_E = r"(?![A-Za-z0-9_])"
_NUM_B = r"(?<![\w.+/-])"
_NUM_E = r"(?![\w/]|[.-]\d)"
#: Whitespace that does not end a line (``str.splitlines`` boundaries): detectors scan a whole
#: file at once, and a value must still never span two lines.
_WS = r"[^\S\n\r\v\f\x1c-\x1e\x85\u2028\u2029]"
_LINE_BREAKS = frozenset("\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029")
#: Ten digits, each at most three characters from the next: every card, CPF, CNPJ and phone
#: number holds such a run, so a text without one is not scanned for them.
_DIGIT_RUN = re.compile(r"\d(?:\D{0,3}\d){9}")
#: Letters that IGNORECASE matches to ASCII letters but str.lower() does not map to them.
_FOLDS_ODDLY = frozenset("\u0130\u0131\u017f\u212a")
_RESERVED_DOMAINS = ("example", "invalid", "test", "localhost", "example.com", "example.net",
                     "example.org")
_FILE_SUFFIXES = {"png", "jpg", "jpeg", "gif", "svg", "webp", "ico", "pdf"}


@dataclass(frozen=True)
class Detector:
    """``kind`` names what was found; ``accept`` returns the reported value, or ``None`` to drop it."""

    kind: str
    pattern: re.Pattern[str]
    accept: Callable[[str], str | None]
    needs: tuple[str, ...] = ()
    """Literals of which every match holds one: a text without any is not scanned (a substring
    search is a hundred times cheaper than a pattern that starts with a lookbehind)."""
    numeric: bool = False
    """Every accepted value has ten digits or more, at most three other characters apart."""
    needs_folded: tuple[str, ...] = ()
    """Like ``needs``, for a case-insensitive pattern: one of these is in the lowered text."""


def _digits(value: str) -> str:
    return "".join(c for c in value if c.isdigit())


def _mixed(value: str) -> str | None:
    """Generated tokens mix letters and digits; prose and identifiers mostly do not."""
    has_digit = any(c.isdigit() for c in value)
    has_alpha = any(c.isalpha() for c in value)
    return value if has_digit and has_alpha else None


def _any(value: str) -> str | None:
    return value


def luhn_ok(digits: str) -> bool:
    """The Luhn (mod 10) checksum of a card number."""
    total = 0
    for index, char in enumerate(reversed(digits)):
        digit = int(char)
        if index % 2:
            digit = digit * 2 - 9 if digit > 4 else digit * 2
        total += digit
    return total % 10 == 0


def _issuer_ok(d: str) -> bool:
    """A known issuer prefix (IIN) with a length that issuer uses."""
    n, p2, p4 = len(d), int(d[:2]), int(d[:4])
    return any((
        d[0] == "4" and n in (13, 16, 19),                                    # Visa
        (51 <= p2 <= 55 or 2221 <= p4 <= 2720) and n == 16,                   # Mastercard
        p2 in (34, 37) and n == 15,                                           # American Express
        (p4 == 6011 or 644 <= int(d[:3]) <= 649 or p2 in (62, 65)) and 16 <= n <= 19,  # Discover, UnionPay
        (300 <= int(d[:3]) <= 305 or p2 in (36, 38, 39)) and 14 <= n <= 19,   # Diners Club
        3528 <= p4 <= 3589 and 16 <= n <= 19,                                 # JCB
        p4 in (5018, 5020, 5038, 5893, 6304, 6759, 6761, 6762, 6763) and 12 <= n <= 19,  # Maestro
    ))


def card_ok(value: str) -> str | None:
    d = _digits(value)
    return value if 12 <= len(d) <= 19 and _issuer_ok(d) and luhn_ok(d) else None


def _check_digit(digits: str, weights: range | list[int]) -> int:
    remainder = sum(int(c) * w for c, w in zip(digits, weights, strict=False)) % 11
    return 0 if remainder < 2 else 11 - remainder


def cpf_ok(value: str) -> str | None:
    """Brazilian CPF: 11 digits, two mod-11 check digits, not one repeated digit."""
    d = _digits(value)
    if len(d) != 11 or len(set(d)) == 1:
        return None
    first = _check_digit(d[:9], range(10, 1, -1))
    second = _check_digit(d[:10], range(11, 1, -1))
    return value if d[9:] == f"{first}{second}" else None


def cnpj_ok(value: str) -> str | None:
    """Brazilian CNPJ: 14 digits, two mod-11 check digits, not one repeated digit."""
    d = _digits(value)
    if len(d) != 14 or len(set(d)) == 1:
        return None
    weights = [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]
    first = _check_digit(d[:12], weights)
    second = _check_digit(d[:13], [6, *weights])
    return value if d[12:] == f"{first}{second}" else None


def phone_ok(value: str) -> str | None:
    """10 to 15 digits (E.164 allows 15), trailing groups trimmed; fictional US 555-01XX excluded."""
    groups = re.findall(r"\D*\d+", value)
    kept = ""
    for group in groups:
        if len(_digits(kept + group)) > 15:
            break
        kept += group
    d = _digits(kept)
    if not 10 <= len(d) <= 15 or len(set(d)) == 1:
        return None
    national = d[1:] if len(d) == 11 and d[0] == "1" else d
    if len(national) == 10 and national[3:6] == "555" and national[6:8] == "01":
        return None  # 555-0100..0199 are reserved for fiction
    return kept.strip()


def email_ok(value: str) -> str | None:
    domain = value.rsplit("@", 1)[1].lower()
    if domain.rsplit(".", 1)[1] in _FILE_SUFFIXES:
        return None  # icon@2x.png is a file name
    if any(domain == r or domain.endswith(f".{r}") for r in _RESERVED_DOMAINS):
        return None  # RFC 2606 reserved: cannot belong to anyone
    return value


DETECTORS: tuple[Detector, ...] = (
    Detector("private key block", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"), _any,
             ("-----BEGIN ",)),
    Detector("Anthropic API key", re.compile(rf"{_B}sk-ant-[a-z]+\d*-[A-Za-z0-9_-]{{20,}}"), _any,
             ("sk-ant-",)),
    Detector("OpenAI API key",
             re.compile(rf"{_B}sk-(?!ant-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{{20,}}"), _mixed,
             ("sk-",)),
    Detector("AWS access key id", re.compile(rf"{_B}(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{{16}}{_E}"), _any,
             ("AKIA", "ASIA", "ABIA", "ACCA")),
    Detector("AWS secret access key", re.compile(
        rf"(?i:aws_?secret_?(?:access_?)?key)[\"']?{_WS}*[:=]{_WS}*[\"']?([A-Za-z0-9/+=]{{40}})(?![A-Za-z0-9/+=])"),
        _mixed, needs_folded=("secret",)),
    Detector("GitHub token",
             re.compile(rf"{_B}(?:gh[pousr]_[A-Za-z0-9]{{36,255}}|github_pat_[A-Za-z0-9_]{{22,255}}){_E}"),
             _any, ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")),
    Detector("Slack token", re.compile(
        r"(?<![A-Za-z0-9_-])(?:xox[abposr]-[A-Za-z0-9-]{10,}|https://hooks\.slack\.com/services/[A-Za-z0-9_/]{20,})"),
        _any, ("xox", "https://hooks.slack.com/services/")),
    Detector("bearer token", re.compile(rf"(?i:\bbearer){_WS}+([A-Za-z0-9._~+/-]{{20,}}=*)"), _mixed,
             needs_folded=("bearer",)),
    Detector("email address", re.compile(
        r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}(?![A-Za-z0-9-])"),
        email_ok, ("@",)),
    Detector("card number", re.compile(rf"{_NUM_B}\d(?:[ -]?\d){{11,18}}{_NUM_E}"), card_ok,
             numeric=True),
    Detector("CNPJ", re.compile(
        rf"{_NUM_B}(?:\d{{2}}\.\d{{3}}\.\d{{3}}/\d{{4}}-\d{{2}}|\d{{14}}){_NUM_E}"), cnpj_ok, numeric=True),
    Detector("CPF", re.compile(rf"{_NUM_B}(?:\d{{3}}\.\d{{3}}\.\d{{3}}-\d{{2}}|\d{{11}}){_NUM_E}"), cpf_ok,
             numeric=True),
    Detector("phone number", re.compile(
        rf"{_NUM_B}(?:\+\d{{1,3}}(?:[ .-]?\(?\d{{1,5}}\)?){{2,6}}"
        rf"|(?:\(\d{{2,3}}\){_WS}?|\d{{2,3}}[ .-])\d{{3,5}}[ .-]\d{{4}}){_NUM_E}"), phone_ok,
        numeric=True),
)


@dataclass(frozen=True)
class Hit:
    """One detected value on one line (``start`` is the 0-based column)."""

    kind: str
    value: str
    start: int


def detect(line: str) -> list[Hit]:
    """Every detection in ``line``; where two detectors overlap, the earlier (more specific) wins."""
    hits: list[Hit] = []
    taken: list[tuple[int, int]] = []
    for detector in DETECTORS:
        for match in detector.pattern.finditer(line):
            group = 1 if match.groups() else 0
            value = detector.accept(match.group(group))
            span = match.span(group)
            if value is None or any(s < span[1] and span[0] < e for s, e in taken):
                continue
            taken.append(span)
            hits.append(Hit(detector.kind, value, span[0]))
    return sorted(hits, key=lambda h: h.start)


def detect_lines(text: str) -> list[tuple[int, Hit]]:
    """``(line number, hit)`` for every detection in ``text``: what :func:`detect` finds on each
    of its lines (``str.splitlines``), found without running every pattern over every line.

    A detector whose literals (``needs``) the text lacks is skipped; the others scan the
    whole text once, except the numeric ones, which scan only the lines holding a run of
    ten digits. Detectors still apply in order, so the earlier one wins an overlap.
    """
    lines: list[tuple[int, str]] | None = None  # (start offset, text) of each line, on demand
    hits: list[tuple[int, Hit]] = []
    taken: dict[int, list[tuple[int, int]]] = {}
    lowered: str | None = None
    candidates: list[int] | None = None  # the lines a numeric detector may match

    def line_table() -> list[tuple[int, str]]:
        nonlocal lines
        if lines is None:
            lines, offset = [], 0
            for raw in text.splitlines(keepends=True):
                lines.append((offset, raw.splitlines()[0] if raw.splitlines() else ""))
                offset += len(raw)
        return lines

    def add(number: int, kind: str, value: str, column: int, end: int) -> None:
        spans = taken.setdefault(number, [])
        if any(s < end and column < e for s, e in spans):
            return
        spans.append((column, end))
        hits.append((number + 1, Hit(kind, value, column)))

    for detector in DETECTORS:
        if detector.needs and not any(literal in text for literal in detector.needs):
            continue
        if detector.needs_folded:
            if lowered is None:
                lowered = "" if _FOLDS_ODDLY.intersection(text) else text.lower()
            if lowered and not any(literal in lowered for literal in detector.needs_folded):
                continue
        if detector.numeric:
            if candidates is None:
                candidates = ([n for n, (_, line) in enumerate(line_table()) if _DIGIT_RUN.search(line)]
                              if _DIGIT_RUN.search(text) else [])
            for number in candidates:
                line = line_table()[number][1]
                for match in detector.pattern.finditer(line):
                    group = 1 if match.groups() else 0
                    value = detector.accept(match.group(group))
                    if value is not None:
                        add(number, detector.kind, value, *match.span(group))
            continue
        for match in detector.pattern.finditer(text):
            group = 1 if match.groups() else 0
            if _LINE_BREAKS.intersection(match.group(0)):
                continue  # a whole-text match that a per-line scan could not make
            value = detector.accept(match.group(group))
            if value is None:
                continue
            start, end = match.span(group)
            table = line_table()
            number = bisect_right([offset for offset, _ in table], start) - 1
            offset = table[number][0]
            add(number, detector.kind, value, start - offset, end - offset)
    return sorted(hits, key=lambda h: (h[0], h[1].start))


def mask(value: str) -> str:
    """Enough to find the value in the file, never the value itself: first 4 chars and the length."""
    return f"{value[:4]}…({len(value)} chars)"
