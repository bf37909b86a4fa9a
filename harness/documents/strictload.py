"""Strict parsing of every YAML and JSON document the harness reads.

The stock parsers keep the last of two equal keys: a second ``type:`` line
silently turned a negative scenario positive and dropped its blocking rule.
They also expand YAML aliases without bound: a 1 KB "billion laughs" file
took 80 s and ended in a MemoryError. Here a duplicate key, an alias
expansion past a fixed size, a recursive alias or a document nested deeper
than any real dataset is a :class:`DocumentError` naming the line, so the
caller reports it as a problem of the file (never a traceback, never the
last value winning).
"""

from __future__ import annotations

import contextlib
import json
import threading
from typing import Any

import yaml

from harness.documents import strictevents
from harness.documents.jsonscan import scan

#: Nodes a document may expand to once every alias is followed (the largest example
#: scenario has a few hundred; a billion-laughs file has 10**9).
MAX_EXPANDED_NODES = 100_000
#: Nesting deeper than this is refused before anything recurses over the value.
MAX_DEPTH = 64
_FLATTEN = "flatten the document (no dataset needs that depth)"


class DocumentError(ValueError):
    """A document that parses but must not be used; ``line`` is 1-based (0: unknown)."""

    def __init__(self, message: str, fix: str, line: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.fix = fix
        self.line = line


_Base: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class StrictLoader(_Base):  # type: ignore[misc]
    """The safe loader (C-accelerated when available), refusing duplicate keys and alias bombs."""

    anchored = True
    """Whether the text may hold anchors (set by :func:`load_yaml`; true when unknown)."""

    def construct_document(self, node: yaml.Node) -> Any:
        _check_expansion(node, self.anchored)
        return super().construct_document(node)

    def construct_yaml_timestamp(self, node: yaml.ScalarNode) -> str:
        """A date stays the text it was written as: a dataset holds JSON values, and
        ``2024-01-01`` read as a date object would reach the request as something else."""
        return str(self.construct_scalar(node))

    def construct_yaml_float(self, node: yaml.ScalarNode) -> float:
        value: float = super().construct_yaml_float(node)
        if value != value or value in (float("inf"), float("-inf")):
            raise DocumentError(f"{node.value} is not a JSON number", "use a number, a string or null",
                                node.start_mark.line + 1)
        return value

    def construct_not_json(self, node: yaml.Node) -> Any:
        raise DocumentError(
            f"the YAML tag {node.tag.replace('tag:yaml.org,2002:', '!!')} makes a value JSON cannot "
            "hold", "write a plain string, number, list or mapping", node.start_mark.line + 1)

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        if isinstance(node, yaml.MappingNode):
            seen: dict[Any, int] = {}
            for key_node, _ in node.value:  # before the merge keys (<<) are flattened in
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=True)
                line = key_node.start_mark.line + 1
                if not isinstance(key, str) and not isinstance(key_node, yaml.ScalarNode):
                    raise DocumentError("a key is a list or a mapping, not text",
                                        "use a plain text key", line)
                if not isinstance(key, str):
                    raise DocumentError(
                        f"the key {key_node.value!r} is read as {type(key).__name__} {key!r}, not text "
                        "(YAML reads yes, no, on, off, numbers and null as values)",
                        f"quote it: \"{key_node.value}\"", line)
                try:
                    first = seen.get(key)
                except TypeError:  # an unhashable key: the base class reports it
                    continue
                if first is not None:
                    raise DocumentError(
                        f"duplicate key '{key}' (first on line {first}); the parser would "
                        "silently keep the last one", "keep one of the two keys (the one you mean)",
                        line)
                seen[key] = line
        result: dict[Any, Any] = super().construct_mapping(node, deep=deep)
        return result


StrictLoader.add_constructor("tag:yaml.org,2002:timestamp", StrictLoader.construct_yaml_timestamp)
StrictLoader.add_constructor("tag:yaml.org,2002:float", StrictLoader.construct_yaml_float)
for _tag in ("binary", "set", "omap", "pairs"):
    StrictLoader.add_constructor(f"tag:yaml.org,2002:{_tag}", StrictLoader.construct_not_json)


def _check_expansion(root: yaml.Node, shared: bool) -> None:
    """Refuse a node graph whose expansion is too big, too deep or cyclic, without expanding it.

    Each node is measured once (size and height memoised), so the check is linear in
    the file, not in its expansion. Without anchors (``shared`` false) no node can be
    reached twice and the memo is skipped: a dataset file costs one quick walk.
    """
    sizes: dict[int, tuple[int, int]] = {}
    active: set[int] = set()

    def deep(node: yaml.Node) -> DocumentError:
        return DocumentError(f"nested more than {MAX_DEPTH} levels deep", _FLATTEN,
                             node.start_mark.line + 1)

    def visit(node: yaml.Node, depth: int) -> tuple[int, int]:
        if depth > MAX_DEPTH:
            raise deep(node)
        value = node.value
        if isinstance(value, str):  # a scalar
            return 1, 1
        ident = id(node)
        if shared:
            known = sizes.get(ident)
            if known is not None:
                if depth + known[1] - 1 > MAX_DEPTH:
                    raise deep(node)
                return known
            if ident in active:
                raise DocumentError("an alias refers to a node that contains it (a recursive "
                                    "structure)", "remove the recursive alias", node.start_mark.line + 1)
            active.add(ident)
        size, height = 1, 0
        for child in (n for pair in value for n in pair) if isinstance(node, yaml.MappingNode) else value:
            child_size, child_height = visit(child, depth + 1)
            size += child_size
            height = max(height, child_height)
        if size > MAX_EXPANDED_NODES:
            raise DocumentError(
                f"aliases expand to more than {MAX_EXPANDED_NODES:,} values (an alias bomb, "
                "or a document far larger than any dataset)",
                "write the values out instead of nesting aliases of aliases", node.start_mark.line + 1)
        if shared:
            active.discard(ident)
            sizes[ident] = (size, height + 1)
        return size, height + 1

    visit(root, 1)


def load_yaml(text: str) -> Any:
    """Parse YAML strictly; raises :class:`yaml.YAMLError` or :class:`DocumentError`.

    Values are built from libyaml's events (:mod:`harness.documents.strictevents`); a
    document that path does not handle plainly, or would refuse, is parsed again
    here by :class:`StrictLoader`, which words every refusal.
    """
    try:
        return strictevents.load(text, MAX_EXPANDED_NODES, MAX_DEPTH)
    except strictevents.Fallback:
        return load_yaml_nodes(text)


def load_yaml_nodes(text: str) -> Any:
    """Parse YAML strictly through the node graph (:class:`StrictLoader`): the reference path."""
    loader = StrictLoader(text)
    loader.anchored = "&" in text  # no anchor, no alias: no node is reached twice
    try:
        return loader.get_single_data()
    except RecursionError:  # the pure-Python parser (no libyaml) recurses per level
        raise DocumentError(f"nested more than {MAX_DEPTH} levels deep", _FLATTEN) from None
    finally:
        loader.dispose()


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)  # in C; fewer keys than pairs means a key came twice
    if len(result) == len(pairs):
        return result
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise DocumentError(f"duplicate key '{key}'; the parser would silently keep the last one",
                                "keep one of the two keys (the one you mean)")
        seen.add(key)
    return result  # not reached


#: Starts of JSON bytes that json.loads decodes as something else than plain UTF-8 (a BOM, UTF-16/32).
_NOT_PLAIN_UTF8 = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff", b"\x00")


def load_json(text: str | bytes) -> Any:
    """Parse JSON strictly; raises :class:`json.JSONDecodeError` or :class:`DocumentError`.

    Duplicate keys, ``NaN``/``Infinity`` (not JSON) and nesting past
    :data:`MAX_DEPTH` are refused.
    """
    if isinstance(text, bytes) and not text.startswith(_NOT_PLAIN_UTF8) and text[1:2] != b"\x00":
        # UTF-8 decoded in C (json.loads(bytes) guesses the encoding in Python first); bytes that
        # are no UTF-8 go on as they are, and json.loads reports them in its own words
        with contextlib.suppress(UnicodeDecodeError):
            text = text.decode("utf-8")
    try:
        if isinstance(text, str) and not text.startswith("\ufeff"):
            decoder = _decoder()  # the same decoder json.loads would build, built once
            value = scan(text, decoder, decoder.decode)
        else:  # bytes json.loads must guess, or a BOM it refuses in its own words
            value = json.loads(text, object_pairs_hook=_pairs, parse_constant=_no_constant)
    except RecursionError:
        raise DocumentError(f"nested more than {MAX_DEPTH} levels deep", _FLATTEN) from None
    opened = (text.count("{") + text.count("[")) if isinstance(text, str) else (
        text.count(b"{") + text.count(b"["))
    if opened > MAX_DEPTH:  # fewer brackets than levels cannot nest that deep: no walk
        check_depth(value)
    return value


def _no_constant(name: str) -> Any:
    raise DocumentError(f"{name} is not a JSON value", "use a number, a string or null")


_DECODERS = threading.local()


def _decoder() -> json.JSONDecoder:
    """This thread's strict decoder: ``json.loads`` with hooks builds a ``JSONDecoder`` (and its
    scanner) per call, 10 to 20 us, more than parsing a 1 KB ``entry.json`` (a replay parses two
    documents per call). One per thread: the scanner's key memo is shared state."""
    decoder: json.JSONDecoder | None = getattr(_DECODERS, "decoder", None)
    if decoder is None:
        decoder = _DECODERS.decoder = json.JSONDecoder(object_pairs_hook=_pairs,
                                                       parse_constant=_no_constant)
    return decoder


def check_depth(value: Any) -> None:
    """Raise :class:`DocumentError` when ``value`` nests deeper than :data:`MAX_DEPTH`."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise DocumentError(f"nested more than {MAX_DEPTH} levels deep", _FLATTEN)
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
