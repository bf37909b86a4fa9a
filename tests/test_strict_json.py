"""The strict JSON loader with its decoder built once per thread: same refusals, same values."""

from __future__ import annotations

import json
import threading

import pytest

from harness.documents.strictload import DocumentError, load_json


def test_duplicate_keys_refused_on_every_call_not_only_the_first() -> None:
    for _ in range(3):  # the decoder is reused: its hook must still fire
        with pytest.raises(DocumentError, match="duplicate key 'a'"):
            load_json(b'{"x": {"a": 1, "a": 2}}')
        assert load_json(b'{"x": {"a": 1, "b": 2}}') == {"x": {"a": 1, "b": 2}}


@pytest.mark.parametrize("text", ['{"a": NaN}', '[Infinity]', '[-Infinity]'])
def test_constants_that_are_not_json_refused(text: str) -> None:
    with pytest.raises(DocumentError, match="is not a JSON value"):
        load_json(text)


def _error_of(parse: object, text: str | bytes) -> str:
    try:
        parse(text)  # type: ignore[operator]
    except (ValueError, UnicodeDecodeError) as exc:
        return f"{type(exc).__name__}: {exc}"
    raise AssertionError(f"{text!r} parsed")


@pytest.mark.parametrize("text", ['\ufeff{"a": 1}', '{"a": }', b'\xff\xfe{\x00"\x00', b'{"a": "\xff"}',
                                  b'\xef\xbb\xbf{"a": }'])
def test_errors_word_as_json_loads_words_them(text: str | bytes) -> None:
    assert _error_of(load_json, text) == _error_of(json.loads, text)


def test_threads_parsing_at_once_get_their_own_values() -> None:
    wrong: list[object] = []

    def parse(n: int) -> None:
        for i in range(300):
            text = json.dumps({f"k{j}": [n, i, {"n": n}] for j in range(20)})
            if load_json(text.encode()) != json.loads(text):
                wrong.append((n, i))

    threads = [threading.Thread(target=parse, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not wrong
