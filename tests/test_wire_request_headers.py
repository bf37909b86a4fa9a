"""The SDK's request headers as the binding reads them: decoded as httpx decodes them, names lower-cased.

``_wire_request`` decodes the headers as ASCII in one pass (every SDK request is ASCII)
instead of asking httpx's ``Headers.encoding`` first, which decodes every header once more
to choose; a header that is not ASCII still gets httpx's own choice (UTF-8, else ISO-8859-1).
"""

from __future__ import annotations

from types import ModuleType

import httpx
import pytest

from harness.wire.intercept import _wire_request

try:
    import httpx2
except ImportError:  # pragma: no cover - httpx2 ships with current SDKs
    httpx2 = None

MODULES = [m for m in (httpx, httpx2) if m is not None]
HEADERS = [
    [(b"Content-Type", b"application/json"), (b"X-Stainless-Lang", b"python"), (b"anthropic-beta", b"a,b")],
    [(b"X-Title", "caf\u00e9 \u2603".encode()), (b"Accept", b"*/*")],  # UTF-8
    [(b"X-Title", b"caf\xe9"), (b"Accept", b"*/*")],  # ISO-8859-1: no UTF-8
    [(b"X-A", b"1"), (b"x-a", b"2"), (b"X-B", b"")],  # repeated names keep their order
]


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
@pytest.mark.parametrize("headers", HEADERS, ids=range(len(HEADERS)))
def test_headers_read_as_httpx_decodes_them(module: ModuleType, headers: list[tuple[bytes, bytes]]) -> None:
    def built() -> object:
        return module.Request("POST", "https://api.example.test/v1/chat/completions", headers=headers,
                              content=b'{"model": "m"}')

    request = built()
    expected = tuple((name.lower(), value) for name, value in built().headers.multi_items())  # type: ignore[attr-defined]
    wire = _wire_request(request)
    assert wire.headers == expected
    assert (wire.method, wire.path, wire.host, wire.body) == ("POST", "/v1/chat/completions",
                                                               "api.example.test", b'{"model": "m"}')


def test_a_utf8_header_is_not_read_as_latin1() -> None:
    request = httpx.Request("POST", "https://x.test/v1/messages", headers=[(b"X-Title", "\u00e9".encode())])
    assert dict(_wire_request(request).headers)["x-title"] == "\u00e9"
