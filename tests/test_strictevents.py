"""The event-built fast path of the strict YAML loader accepts, builds and refuses exactly what the
node-graph loader does: same values, same refusals with the same words and lines."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.documents import strictevents
from harness.documents.strictload import (
    MAX_DEPTH,
    MAX_EXPANDED_NODES,
    DocumentError,
    load_yaml,
    load_yaml_nodes,
)

REPO_ROOT = Path(__file__).resolve().parent.parent
COMMITTED = sorted((REPO_ROOT / "eval-datasets").rglob("*.yaml"))
BILLION_LAUGHS = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [" + ", ".join([f"*{chr(97 + i)}"] * 9) + "]\n" for i in range(8))


def _outcome(load: Any, text: str) -> tuple[str, Any]:
    """What a loader makes of ``text``: its value (as repr, so 1 and True differ) or its refusal."""
    try:
        return "value", repr(load(text))
    except DocumentError as exc:
        return "refused", (exc.message, exc.fix, exc.line)
    except yaml.YAMLError as exc:
        return "invalid", str(exc)


def _same(text: str) -> tuple[str, Any]:
    fast, reference = _outcome(load_yaml, text), _outcome(load_yaml_nodes, text)
    assert fast == reference, text[:300]
    return fast


def test_every_committed_yaml_file_is_built_by_the_fast_path_with_the_same_value() -> None:
    assert len(COMMITTED) > 50
    for file in COMMITTED:
        text = file.read_text(encoding="utf-8")
        value = strictevents.load(text, MAX_EXPANDED_NODES, MAX_DEPTH)  # no Fallback
        assert repr(value) == repr(load_yaml_nodes(text)), file


NESTED = "a: " + "[" * (MAX_DEPTH - 2) + "x" + "]" * (MAX_DEPTH - 2) + "\n"
TOO_DEEP = "a: " + "[" * (MAX_DEPTH - 1) + "x" + "]" * (MAX_DEPTH - 1) + "\n"
DEEP_ALIAS = ("base: &b " + "[" * 40 + "x" + "]" * 40 + "\nwrap: " + "[" * 30 + "*b" + "]" * 30 + "\n")


@pytest.mark.parametrize(("text", "kind"), [
    ("type: edge\ninput: x\ntype: positive\n", "refused"),  # a second key, both lines named
    ("params: {on: 1}\n", "refused"),
    ("params: {1: one}\n", "refused"),
    ("params: {null: one}\n", "refused"),
    ("params: {[a]: one}\n", "refused"),
    ("? {a: 1}\n: x\n", "refused"),
    ("a: &k x\n*k : y\n", "value"),
    ("context: .nan\n", "refused"),
    ("context: -.inf\n", "refused"),
    ("b: !!binary aGVsbG8=\n", "refused"),
    ("s: !!set {a, b}\n", "refused"),
    ("o: !!omap [a: 1]\n", "refused"),
    ("x: !!python/object:os.system ls\n", "invalid"),
    ("x: !custom 1\n", "invalid"),
    ("x: !!str 12\ny: !!int '7'\n", "value"),
    ("when: 2024-01-01 10:00:00\nday: 2024-01-01\n", "value"),
    ("a: yes\nb: No\nc: ~\nd:\ne: 0x1F\nf: 1_000\ng: 1:20\nh: 1.5e3\ni: '1'\nj: \"yes\"\n", "value"),
    ("base: &base {company: Acme, tone: warm}\nparams:\n  <<: *base\n  tone: formal\n", "value"),
    ("params:\n  '<<': literal\n", "value"),
    ("v: =\n", "invalid"),
    ("shared: &s [1, 2]\nagain: *s\nmore: [*s, *s]\n", "value"),
    ("params: &p {self: *p}\n", "refused"),
    ("a: *nowhere\n", "invalid"),
    ("a: &x 1\nb: &x 2\n", "invalid"),
    (BILLION_LAUGHS, "refused"),
    (NESTED, "value"),
    (TOO_DEEP, "refused"),
    (DEEP_ALIAS, "refused"),
    ("a: 1\n---\nb: 2\n", "invalid"),
    ("---\n", "value"),
    ("", "value"),
    ("# only a comment\n", "value"),
    ("- 1\n- [2, {a: b}]\n", "value"),
    ("just text\n", "value"),
    ("a: [1, 2\n", "invalid"),
    ("a: |\n  line one\n  line two\nb: >-\n  folded\n  text\n", "value"),
])
def test_the_fast_path_agrees_with_the_node_loader(text: str, kind: str) -> None:
    assert _same(text)[0] == kind


def test_the_alias_bomb_is_refused_with_the_line_and_the_size() -> None:
    kind, (message, _, line) = _same(BILLION_LAUGHS)
    assert kind == "refused" and line == 6 and "more than 100,000 values" in message


def test_a_duplicate_key_names_both_lines() -> None:
    kind, (message, _, line) = _same("type: edge\ninput: x\ntype: positive\n")
    assert (kind, line) == ("refused", 3) and "first on line 1" in message


def test_mutated_committed_files_agree() -> None:
    """Lines duplicated, dropped, re-indented or given odd values: both paths say the same."""
    rng = random.Random(17)
    odd = ["on: 1", "x: .nan", "y: !!set {a}", "<<: {a: 1}", "z: &q [*q]", "- 1", "  k: v", "k: [",
           "a: &a 1", "b: *a", "'1': 2"]
    checked = 0
    for file in COMMITTED[:40]:
        lines = file.read_text(encoding="utf-8").splitlines()
        for _ in range(10):
            copy = list(lines)
            where = rng.randrange(len(copy) + 1)
            action = rng.random()
            if action < 0.3 and copy:
                copy.insert(where, copy[min(where, len(copy) - 1)])
            elif action < 0.5 and copy:
                del copy[min(where, len(copy) - 1)]
            else:
                copy.insert(where, rng.choice(odd))
            _same("\n".join(copy) + "\n")
            checked += 1
    assert checked == 400
