"""Names that are safe on every operating system.

Agent, tenant and scenario names become folders of the committed cache. A
name that Linux accepts but Windows cannot check out (``CON``, ``a:b``,
``name.``) or that macOS folds onto another (``Greeting`` vs ``greeting``)
breaks the clone of a colleague, so it is refused at load time.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

_WINDOWS_RESERVED = {
    "CON",
    "PRN",
    "AUX",
    "NUL",
    *(f"COM{i}" for i in range(1, 10)),
    *(f"LPT{i}" for i in range(1, 10)),
}
_ILLEGAL_CHARS = re.compile(r'[<>:"/\\|?*\x00-\x1f]')
#: Bidirectional controls: a right-to-left override makes ``evil\u202egnp.yaml`` print as
#: another name in every terminal, report and diff (the "Trojan Source" trick).
_BIDI_CONTROLS = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def name_problem(name: str) -> str | None:
    """Why ``name`` is unsafe as a path segment on some OS, or ``None`` when it is safe."""
    if not name:
        return "is empty"
    if not is_utf8(name):
        shown = name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        return (f"'{shown}' is not valid UTF-8 (the file system gave bytes no scenario id, key "
                "or report can carry)")
    if not unicodedata.is_normalized("NFC", name):
        return (f"'{name}' is not in Unicode NFC form (accents stored as separate combining "
                "marks): the same-looking name in NFC would be another scenario id and another key")
    if name in {".", ".."}:
        return f"'{name}' is a relative path segment (path traversal)"
    bidi = _BIDI_CONTROLS.findall(name)
    if bidi:
        shown = name.encode("ascii", "backslashreplace").decode("ascii")
        codes = ", ".join(sorted({f"U+{ord(c):04X}" for c in bidi}))
        return (f"'{shown}' contains bidirectional control characters ({codes}) that make it "
                "display as another name")
    if ".." in name:
        return (f"'{name}' contains '..', which reads as a parent-folder step in scenario ids, "
                "globs and cache paths")
    bad = sorted(set(_ILLEGAL_CHARS.findall(name)))
    if bad:
        shown = ", ".join(repr(c) for c in bad)
        return f"'{name}' contains characters illegal on Windows or in paths: {shown}"
    if name[-1] in {".", " "}:
        return f"'{name}' ends with a dot or a space, which Windows silently strips"
    if name[0] == " ":
        return f"'{name}' starts with a space"
    stem = name.split(".", 1)[0].upper()
    if stem in _WINDOWS_RESERVED:
        return f"'{name}' is a reserved device name on Windows ({stem})"
    return None


def is_utf8(name: str) -> bool:
    """Whether a name decoded from the file system is real text (undecodable bytes come back
    as lone surrogates, which no UTF-8 encoder accepts)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def case_collisions(names: Iterable[str]) -> list[tuple[str, str]]:
    """Pairs of names that differ only by case or Unicode normalisation: one folder on macOS
    and Windows (``café`` composed and decomposed look identical and are one file on macOS)."""
    seen: dict[str, str] = {}
    pairs: list[tuple[str, str]] = []
    for name in sorted(names):
        folded = unicodedata.normalize("NFC", name).casefold()
        if folded in seen:
            pairs.append((seen[folded], name))
        else:
            seen[folded] = name
    return pairs
