"""``jsonscan.scan``: json.loads's value, or its very exception, for every document (issue 17's hot path)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness.documents.jsonscan import scan
from harness.documents.strictload import DocumentError, _decoder, load_json
from harness.wire.codecs_common import arguments_from_text

#: Documents the fast path returns itself, and documents it must hand to json.loads (whitespace
#: first, a BOM, trailing data, no value, errors at the start, in the middle and at the end).
DOCUMENTS = [
    '{}', '[]', '{"a": 1}', '[1, 2.5, "x", null, true, false]', '"text"', '12', '-0.5e3', 'NaN', '-Infinity',
    '{"a": [1, {"b": "c"}]}\n', '[1]  \r\n\t', ' {"a": 1}', '\n[1]', '\ufeff{"a": 1}', '', '   ', 'x',
    '{"a": 1}x', '{"a": 1} {"b": 2}', '[1, 2] ,', '[1, x]', '{"a": 1,}', '{"a": }', '{"a" 1}', '[1,',
    '"unterminated', '{"a": "\\q"}', '{"a": 1} \x0b', '[' * 100_000, '{"a": 1, "a": 2}',
]


def _outcome(parse: Any, text: Any) -> tuple[str, Any]:
    try:
        return "value", parse(text)
    except (ValueError, RecursionError) as exc:
        return type(exc).__name__, str(exc)


@pytest.mark.parametrize("text", DOCUMENTS, ids=range(len(DOCUMENTS)))
def test_scan_gives_what_json_loads_gives(text: str) -> None:
    got, expected = _outcome(scan, text), _outcome(json.loads, text)
    if expected == ("value", expected[1]) and expected[1] != expected[1]:  # NaN is not equal to itself
        assert got[0] == "value" and got[1] != got[1]
        return
    assert got == expected


def test_bytes_go_to_json_loads_which_guesses_their_encoding() -> None:
    text = '{"a": "é"}'.encode("utf-16")
    assert scan(text) == json.loads(text) == {"a": "é"}  # type: ignore[arg-type]


@pytest.mark.parametrize("text", ['{"x": {"a": 1, "a": 2}}', '{"a": NaN}', ' {"a": 1, "a": 2}',
                                  '{"a": 1}\n', '{"a": 1} x', '[1, {"b": }]'])
def test_scan_with_the_strict_decoder_refuses_as_its_decode_does(text: str) -> None:
    decoder = _decoder()
    assert _outcome(lambda t: scan(t, decoder, decoder.decode), text) == _outcome(decoder.decode, text)


def test_the_strict_loader_still_refuses_a_duplicate_key_anywhere() -> None:
    for text in (b'{"a": 1, "a": 2}', b'{"x": [{"k": 1, "k": 1}]}\n', b'  {"a": {"b": 1, "b": 2}}'):
        with pytest.raises(DocumentError, match="duplicate key"):
            load_json(text)


@pytest.mark.parametrize("raw", ['{"order_id": "A-1001"}', '[1]', '', '{"a": 1} trailing', ' {"a": 2}', "1"])
def test_tool_arguments_read_as_before(raw: str) -> None:
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        value = None
    assert arguments_from_text(raw) == (value if isinstance(value, dict) else {"_raw": raw})
