"""Equal ``expect`` items of a dataset share one checked object.

A dataset of 50,000 scenarios repeats most of its assertions, and every scenario
of an agent or tenant gets the rules they declare once
(:mod:`harness.assertions.rules`). The loader therefore keeps one
:class:`~harness.assertions.CheckedItem` per distinct item, found by the item's
``repr`` (equal reprs of JSON values are equal values), so its kind and label are
found once for the whole run.

A rule without ``{{param}}`` resolves to its very own item, with its rule's one
conditions mapping, in every scenario it reaches: that one is found by identity,
without building its ``repr`` again (2,197 of the 2,299 rule resolutions of the
committed examples). Only the items of such rules are looked up by identity: a
rule with params gives a new item per scenario, and keeping those alive to key them
would cost memory for nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from harness.assertions import CheckedItem
from harness.assertions.rules import Rule
from harness.core.entities import JsonObject

__all__ = ["ItemPool"]


class ItemPool:
    """The checked items of one dataset load, shared by every scenario that has them."""

    def __init__(self) -> None:
        self._by_text: dict[str, CheckedItem] = {}
        self._plain: dict[int, Any] = {}
        """id -> item of every registered rule without params."""
        self._by_identity: dict[tuple[int, str, int], tuple[Any, Any, CheckedItem]] = {}
        """(id(item), origin, id(when)) -> (item, when, its CheckedItem); both kept alive here,
        so their ids are never reused while the pool lives."""

    def register(self, rules: Iterable[Rule]) -> None:
        """Note the rules whose item every scenario gets as it is (no ``{{param}}``)."""
        for rule in rules:
            if not rule.templated:
                self._plain[id(rule.item)] = rule.item

    def shared(self, item: JsonObject, origin: str = "scenario", when: JsonObject | None = None,
               *, text: str | None = None) -> CheckedItem:
        """The one CheckedItem of ``item`` declared at ``origin`` with per-answer ``when``;
        ``text``: the item's ``repr``, when the caller has it."""
        plain = when is not None and self._plain.get(id(item)) is item
        if plain:
            known = self._by_identity.get((id(item), origin, id(when)))
            if known is not None and known[0] is item and known[1] is when:
                return known[2]
        # the tuple's repr, built from its parts; a scenario's own item is keyed by its repr
        # alone: the very string the lint memo holds (unique items held two keys each, 5 MB at 50k)
        if text is not None and origin == "scenario" and when is None:
            key = text
        else:
            key = f"({text if text is not None else repr(item)}, {origin!r}, {when!r})"
        found = self._by_text.get(key)
        if found is None:
            found = self._by_text[key] = CheckedItem(item, origin=origin, when=when)
        if plain:
            self._by_identity[(id(item), origin, id(when))] = (item, when, found)
        return found
