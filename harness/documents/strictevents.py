"""The strict YAML loader's fast path: values built straight from libyaml's parse events.

PyYAML's C loader still composes a node graph and then constructs every value
in Python (generators, a resolver call and a ``construct_object`` per node):
about 0.25 s of the committed examples' run. Here the events of libyaml's
parser (``yaml.CParser``, in C) are turned into values in one loop, with every
refusal of :mod:`harness.documents.strictload` measured on the way: the expanded size
(an alias adds the size of what it names), the depth (an alias adds the height
of what it names), a recursive alias, a duplicate key, a key that is not text,
a value JSON cannot hold.

This path never words an error itself. Whatever it does not handle plainly
(an explicit tag, a merge key ``<<``, a second document, an undefined or
duplicate anchor) or would refuse, raises :class:`Fallback`, and the caller
parses the text again with the full strict loader, which has the last word and
the one wording of every refusal. So the fast path can only make an accepted
document faster; it never changes what is accepted or what is said.

Plain scalars are resolved once per distinct text (``yes``, ``1``, ``null``):
the resolved values are immutable, so they are shared between documents, which
also keeps the many equal strings of a large dataset in memory once.
"""

from __future__ import annotations

from typing import Any

from yaml.constructor import SafeConstructor
from yaml.events import (
    AliasEvent,
    DocumentEndEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)
from yaml.nodes import ScalarNode
from yaml.resolver import Resolver

#: libyaml's parser; without it every document takes the full loader.
_Parser: Any
try:
    from yaml._yaml import CParser as _CParser  # type: ignore[import-not-found, unused-ignore]
except ImportError:  # no libyaml: the full loader alone
    _Parser = None
else:
    _Parser = _CParser

_TAG = "tag:yaml.org,2002:"
_RESOLVER: Any = Resolver()
_CONSTRUCTOR = SafeConstructor()
#: Plain scalar text -> its value (None, bool, int, float or str: immutable, so shared).
_PLAIN: dict[str, Any] = {}
_PLAIN_MAX = 200_000


class Fallback(Exception):  # noqa: N818 - a signal, not an error shown to anyone
    """This document needs the full strict loader (to accept it, or to word its refusal)."""


def _plain(text: str) -> Any:
    """The value of a plain (unquoted) scalar, as the safe loader resolves and constructs it."""
    found = _PLAIN.get(text, _PLAIN)
    if found is not _PLAIN:
        return found
    tag = _RESOLVER.resolve(ScalarNode, text, (True, False))
    if tag == _TAG + "str" or tag == _TAG + "timestamp":  # a date stays the text it was written as
        value: Any = text
    elif tag == _TAG + "null":
        value = None
    elif tag == _TAG + "bool":
        value = _CONSTRUCTOR.construct_yaml_bool(ScalarNode(tag, text))
    elif tag == _TAG + "int":
        value = _CONSTRUCTOR.construct_yaml_int(ScalarNode(tag, text))
    elif tag == _TAG + "float":
        value = _CONSTRUCTOR.construct_yaml_float(ScalarNode(tag, text))
        if value != value or value in (float("inf"), float("-inf")):
            raise Fallback  # not JSON: the full loader refuses it with the line
    else:  # merge (<<), value (=): the full loader knows what to do
        raise Fallback
    if len(_PLAIN) >= _PLAIN_MAX:
        _PLAIN.clear()
    _PLAIN[text] = value
    return value


def load(text: str, max_nodes: int, max_depth: int) -> Any:
    """The single document of ``text``; raises :class:`Fallback` or :class:`yaml.YAMLError`."""
    if _Parser is None:
        raise Fallback
    parser = _Parser(text)
    try:
        return _build(parser.get_event, max_nodes, max_depth)
    finally:
        parser.dispose()


def _build(get: Any, max_nodes: int, max_depth: int) -> Any:
    """Values from events. A frame is [container, is_mapping, key or _NO_KEY, size, height,
    anchor]; a finished node goes to :func:`_add` with its size and height."""
    get()  # StreamStartEvent
    event = get()
    if type(event) is StreamEndEvent:
        return None
    anchors: dict[str, tuple[Any, int, int] | None] = {}  # None: still open (recursive if used)
    stack: list[list[Any]] = []
    root: list[Any] = []
    while True:
        event = get()
        kind = type(event)
        if kind is ScalarEvent:
            if event.tag is not None or len(stack) >= max_depth:
                raise Fallback
            value = _plain(event.value) if event.implicit[0] else event.value
            if event.anchor is not None:
                _anchor(anchors, event.anchor, (value, 1, 1))
            done = _add(stack, root, value, 1, 1)
        elif kind is MappingStartEvent or kind is SequenceStartEvent:
            if event.tag is not None or len(stack) >= max_depth:
                raise Fallback
            if stack and stack[-1][1] and stack[-1][2] is _NO_KEY:
                raise Fallback  # a list or a mapping as a key
            if event.anchor is not None:
                _anchor(anchors, event.anchor, None)
            mapping = kind is MappingStartEvent
            stack.append([{} if mapping else [], mapping, _NO_KEY, 1, 0, event.anchor])
            continue
        elif kind is MappingEndEvent or kind is SequenceEndEvent:
            frame = stack.pop()
            value, size, height = frame[0], frame[3], frame[4] + 1
            if size > max_nodes:
                raise Fallback
            if frame[5] is not None:
                anchors[frame[5]] = (value, size, height)
            done = _add(stack, root, value, size, height)
        elif kind is AliasEvent:
            named = anchors.get(event.anchor)
            if named is None:  # undefined, or recursive (its node is still open)
                raise Fallback
            value, size, height = named
            if len(stack) + height > max_depth:
                raise Fallback
            if stack and stack[-1][1] and stack[-1][2] is _NO_KEY:
                raise Fallback  # an alias as a key
            done = _add(stack, root, value, size, height)
        else:
            raise Fallback
        if done:
            break
    if type(get()) is not DocumentEndEvent or type(get()) is not StreamEndEvent:
        raise Fallback  # more than one document
    return root[0]


class _NoKey:
    """The marker of a mapping frame waiting for its next key."""


_NO_KEY = _NoKey()


def _anchor(anchors: dict[str, tuple[Any, int, int] | None], name: str,
            value: tuple[Any, int, int] | None) -> None:
    if name in anchors:  # a duplicate anchor: the composer's error
        raise Fallback
    anchors[name] = value


def _add(stack: list[list[Any]], root: list[Any], value: Any, size: int, height: int) -> bool:
    """Put a finished node into its parent; true when it was the document's root."""
    if not stack:
        root.append(value)
        return True
    frame = stack[-1]
    frame[3] += size
    if height > frame[4]:
        frame[4] = height
    if not frame[1]:
        frame[0].append(value)
        return False
    key = frame[2]
    if key is _NO_KEY:
        if type(value) is not str or value in frame[0]:
            raise Fallback  # not text, or a duplicate key
        frame[2] = value
        return False
    frame[0][key] = value
    frame[2] = _NO_KEY
    return False
