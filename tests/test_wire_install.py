"""The transport patching looks for each httpx module once per process, not once per iteration.

``install`` runs at the start of every SDK-agent iteration. An httpx distribution
that is not installed used to be searched for on ``sys.path`` every time (~0.2 ms,
as much as answering a request from the cache); a finder on ``sys.meta_path``
counts the searches.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from importlib.machinery import ModuleSpec
from typing import Any

import pytest

from harness.wire import intercept

ABSENT = "harness_test_no_such_httpx"


class CountingFinder:
    """A meta path finder that finds nothing and counts how often it was asked for ``ABSENT``."""

    def __init__(self) -> None:
        self.asked = 0

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> ModuleSpec | None:
        if name == ABSENT:
            self.asked += 1
        return None


@pytest.fixture
def finder(monkeypatch: pytest.MonkeyPatch) -> Iterator[CountingFinder]:
    counting = CountingFinder()
    monkeypatch.setattr(intercept, "MODULES", (*intercept.MODULES, ABSENT))
    monkeypatch.setattr(intercept, "_absent", set(getattr(intercept, "_absent", ())), raising=False)
    sys.meta_path.insert(0, counting)
    try:
        yield counting
    finally:
        sys.meta_path.remove(counting)


def test_an_absent_module_is_searched_for_once(finder: CountingFinder) -> None:
    first = intercept.install()
    for _ in range(50):
        assert intercept.install() == first
    assert ABSENT not in first
    assert finder.asked == 1


def test_installed_modules_are_patched(finder: CountingFinder) -> None:
    patched = intercept.install()
    assert patched, "the test extra installs httpx2 (the SDKs' transport)"
    for name in patched:
        module = sys.modules[name]
        assert module.HTTPTransport.handle_request.__qualname__.endswith("handle_request")
        assert module.HTTPTransport.handle_request.__module__ == intercept.__name__
