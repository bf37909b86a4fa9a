"""``json.loads`` of one document, without the two Python frames around the C scanner.

A replay parses three or four JSON documents per answered call (the SDK's request,
``entry.json``, the recorded body, a tool call's arguments). ``json.loads(text)`` goes
through ``JSONDecoder.decode`` and ``raw_decode``, two Python calls and two regular
expression matches, before and after the C scanner does the work: measured in one
process, alternating, 1.2 to 1.4 us of a 7 to 20 us parse, and 0.8 of 1.1 us for a small
tool-call argument object.

:func:`scan` calls the decoder's C scanner (``scan_once``) at position 0 and returns
its value when only JSON whitespace follows. Every other document (leading whitespace,
a BOM, trailing data, no value at all) is handed to the decoder's own entry point, so
the value, or the exception and its message, is always the one ``json.loads`` gives.
An exception the scanner raises itself (a malformed document, a hook's refusal, too
deep a nesting) is the one ``raw_decode`` would let through unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

#: What ``json.decoder.WHITESPACE`` matches after a document (``[ \t\n\r]*``).
_WHITESPACE = " \t\n\r"
_PLAIN = json.JSONDecoder()


def scan(text: str, decoder: json.JSONDecoder = _PLAIN,
         slow: Callable[[str], Any] | None = None) -> Any:
    """``slow(text)`` (default ``json.loads``; ``decoder.decode`` must give the same), faster.

    ``decoder`` is the one ``slow`` parses with: its scanner (and its hooks) build the value.
    """
    if type(text) is not str:  # bytes: json.loads guesses their encoding first
        return (slow or json.loads)(text)
    try:
        value, end = decoder.scan_once(text, 0)  # type: ignore[attr-defined]
    except StopIteration:  # nothing at position 0: whitespace first, a BOM, or no JSON value
        return (slow or json.loads)(text)
    if end != len(text) and text[end:].lstrip(_WHITESPACE):
        return (slow or json.loads)(text)  # "Extra data", worded and placed by json itself
    return value
