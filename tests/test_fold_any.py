"""One search for a whole term list (``fold.any_needle``) says what a search per term says."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from harness.assertions.fold import any_needle, fold, needle_finder
from harness.loading.config import load_config
from harness.loading.datasets import load_dataset

REPO = Path(__file__).resolve().parent.parent

EDGES = ("ERR_", "_id", "status_summary", "3be1f0c9a7d2e4b1", "note", "maria.souza", "**")
TEXTS = ("ERR_CODE 7", "error preferred", "the record_id is 4", "StatusSummary ready",
         "commit 3be1f0c merged", "no telling", "Maria Souza wrote", "a **bold** claim", "")


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _agree(terms: tuple[str, ...], text: str) -> bool:
    folded = fold(text)
    return any_needle(terms)(folded) == any(needle_finder(t)(folded) is not None for t in terms)


def test_edge_terms_agree_alone_and_together() -> None:
    for text in TEXTS:
        assert _agree(EDGES, text), text
        for term in EDGES:
            assert _agree((term,), text), (term, text)
    assert any_needle(("ERR_",))(fold("ERR_CODE")) and not any_needle(("ERR_",))(fold("error"))


def test_every_term_list_of_the_examples_agrees_on_every_counterexample_text() -> None:
    dataset = load_dataset(load_config(REPO))
    lists = {tuple(spec[mode]) for scenario in dataset.scenarios for item in scenario.expect
             if isinstance(spec := item.get("not_contains"), Mapping)
             for mode in ("any", "all") if isinstance(spec.get(mode), list)}
    texts = {text for scenario in dataset.scenarios for item in scenario.counterexamples
             for text in _strings(item["answer"])}
    hits = 0
    for terms in lists:
        for text in texts:
            assert _agree(terms, text), (terms, text)
            hits += any_needle(terms)(fold(text))
    assert len(lists) > 10 and len(texts) > 200 and hits > 50
