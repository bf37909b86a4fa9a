"""The one entry verifier: what makes an entry folder trustworthy, for ``run`` and ``check`` alike.

A replay (:meth:`harness.cache.store.CacheStore.read`) and the integrity guard of
``check`` used to verify entries with two pieces of code, which disagreed: an
entry ``check`` called intact could crash a run, and the other way round. Both
now call :func:`verify_entry`, so they accept the same entries and word every
reason the same way. Every reason is collected (the guard lists them all; a run
names them all in one message). Hostile shapes are reasons, never tracebacks:
``"key": 12345``, a timestamp without a zone, a folder where a file belongs, a
symbolic link (the rule of :mod:`harness.documents.links`).
"""

from __future__ import annotations

import enum
import hashlib
import importlib
import re
from dataclasses import dataclass
from datetime import datetime
from types import ModuleType
from typing import Any

from harness.cache.layout import CONTENTS_FILE, ENTRY_FILE
from harness.core.entities import ChatResponse, ToolCall, Usage
from harness.documents.reading import NotAFile, read_file
from harness.documents.strictload import load_json
from harness.requests.key import SHORT_KEY_LENGTH
from harness.wire.exchange import APIS

_FULL_KEY = re.compile(r"[0-9a-f]{64}")


class EntryStatus(enum.Enum):
    """What the verifier found in an entry folder; callers decide on this, never on wording."""

    ABSENT = "absent"
    """No ``entry.json``: nothing was ever recorded in this folder (a miss)."""
    INTACT = "intact"
    """Every check passed: the entry can be replayed (expiry is the caller's question)."""
    UNTRUSTED = "untrusted"
    """Something is wrong; :attr:`VerifiedEntry.problems` says every what, in words."""


@dataclass(frozen=True, slots=True)
class VerifiedEntry:
    """An entry folder as verified: its status, its parsed parts and every reason it cannot be trusted."""

    status: EntryStatus
    meta: dict[str, Any] | None
    response: ChatResponse | None
    created: datetime | None
    expires: datetime | None
    problems: tuple[str, ...]
    payload: bytes | None = None
    """The bytes of ``contents.data`` (a wire entry replays them exactly)."""

    @property
    def absent(self) -> bool:
        """``entry.json`` does not exist (nothing was ever recorded in this folder)."""
        return self.status is EntryStatus.ABSENT

    @property
    def key(self) -> str | None:
        """The full key ``entry.json`` holds, when it is a 64-hex string."""
        key = (self.meta or {}).get("key")
        return key if isinstance(key, str) and _FULL_KEY.fullmatch(key) else None


def parse_time(text: Any) -> datetime:
    """An ISO-8601 timestamp WITH a zone (``Z`` or ``+00:00``); raises ``ValueError`` otherwise.

    A naive timestamp cannot be compared with the (aware) clock: it would crash
    the expiry check, so it is refused here, where it is named.
    """
    if not isinstance(text, str):
        raise ValueError(f"not a string: {text!r}")
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        raise ValueError(f"{text!r} has no time zone (write it with Z, e.g. 2028-11-29T12:00:00Z)")
    return moment


#: :func:`parse_time` answers by text: the entries of one recording share a handful of
#: timestamps (seconds, written once per call), and a replay parses two per entry. Cleared
#: when full, so a hostile tree of distinct stamps costs a parse each, never memory.
_STAMPS: dict[str, datetime] = {}
_STAMPS_MAX = 4096


def _stamp(text: Any) -> datetime:
    """:func:`parse_time`, remembered for a string (a datetime is immutable: sharing it is safe)."""
    if type(text) is str:
        found = _STAMPS.get(text)
        if found is not None:
            return found
    moment = parse_time(text)
    if type(text) is str:
        if len(_STAMPS) >= _STAMPS_MAX:
            _STAMPS.clear()
        _STAMPS[text] = moment
    return moment


def response_from_json(data: Any) -> ChatResponse:
    """Rebuild a response; raises ``KeyError``/``TypeError``/``ValueError`` on a bad shape."""
    if not isinstance(data, dict):
        raise TypeError("the payload is not a JSON object")
    usage = data.get("usage") or {}
    content = data["content"]
    if content is not None and not isinstance(content, str):
        raise TypeError("content is neither a string nor null")
    return ChatResponse(
        content=content,
        tool_calls=tuple(
            ToolCall(name=str(c["name"]), arguments=dict(c.get("arguments") or {}))
            for c in data.get("tool_calls") or []
        ),
        finish_reason=str(data.get("finish_reason") or "stop"),
        usage=Usage(int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0))),
        model=data.get("model"),
    )


def verify_entry(folder: str, scenario_id: str, iteration: int | None, short: str) -> VerifiedEntry:
    """Read and verify the entry in ``folder``, which the layout places at ``scenario_id``/``iteration``.

    ``short`` is the folder's name (the key prefix). Nothing is modified.
    """
    problems: list[str] = []
    meta = _read_meta(f"{folder}/{ENTRY_FILE}", problems)
    if meta is _NO_META:
        return VerifiedEntry(EntryStatus.ABSENT, None, None, None, None, ("entry.json is missing",))
    payload = _read(f"{folder}/{CONTENTS_FILE}", CONTENTS_FILE, problems)
    created = expires = None
    if meta is not None:
        _check_identity(meta, short, scenario_id, iteration, problems)
        try:
            created, expires = _stamp(meta["created"]), _stamp(meta["expires"])
        except (KeyError, TypeError, ValueError) as exc:
            problems.append(f"entry.json has no readable created/expires ({exc!r})")
        if payload is not None and hashlib.sha256(payload).hexdigest() != meta.get("contents_sha256"):
            problems.append("contents.data bytes do not match contents_sha256 in entry.json (edited by "
                            "hand, or line endings converted by git: check .gitattributes)")
    response = None
    wire = meta.get("wire") if meta is not None else None
    if payload is not None and wire is not None:
        response = _wire_response(wire, payload, problems)
    elif payload is not None:
        try:
            response = response_from_json(load_json(payload))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            problems.append(f"contents.data does not decode as a response ({exc!r})")
    intact = not problems and response is not None and created is not None and expires is not None
    return VerifiedEntry(EntryStatus.INTACT if intact else EntryStatus.UNTRUSTED, meta, response, created,
                         expires, tuple(problems), payload)


def _wire_response(wire: Any, payload: bytes, problems: list[str]) -> ChatResponse | None:
    """The provider-neutral view of a wire entry's body (its assertions and reports read it)."""
    codecs = _codecs()
    if not isinstance(wire, dict) or wire.get("api") not in APIS or not isinstance(wire.get("status"), int) \
            or not isinstance(wire.get("headers"), dict):
        problems.append("entry.json has no valid 'wire' object (api, status, headers)")
        return None
    try:
        response: ChatResponse = codecs.decode_answer(
            wire["api"], payload, content_type=str(wire["headers"].get("content-type", "")))
        return response
    except codecs.WireDecodeError as exc:
        problems.append(f"contents.data does not decode as a {wire['api']} answer ({exc})")
        return None


_CODECS: list[ModuleType] = []


def _codecs() -> ModuleType:
    """:mod:`harness.wire.codecs`, imported on the first wire entry (a run of declared agents never
    loads the codecs) and then held: an import statement in the function ran per entry."""
    if not _CODECS:
        _CODECS.append(importlib.import_module("harness.wire.codecs"))
    return _CODECS[0]


#: :func:`_read_meta`'s answer when there is no entry.json at all (an absent entry, not a problem).
_NO_META: dict[str, Any] = {}


def _read(path: str, name: str, problems: list[str], *, absent: list[bool] | None = None) -> bytes | None:
    try:
        return read_file(path, no_follow=True)
    except (FileNotFoundError, NotADirectoryError):
        if absent is not None:
            absent.append(True)
            return None
        problems.append(f"{name} is missing")
    except NotAFile as exc:
        problems.append(f"{name} {exc}")
    except OSError as exc:
        problems.append(f"{name} cannot be read ({exc.strerror or exc})")
    return None


def _read_meta(path: str, problems: list[str]) -> dict[str, Any] | None:
    """entry.json parsed; ``_NO_META`` when it does not exist, None (with the problem) when unusable."""
    missing: list[bool] = []
    data = _read(path, ENTRY_FILE, problems, absent=missing)
    if missing:
        return _NO_META
    if data is None:
        return None
    try:
        meta = load_json(data)
    except ValueError as exc:
        problems.append(f"entry.json does not parse ({exc})")
        return None
    if not isinstance(meta, dict):
        problems.append("entry.json is not a JSON object")
        return None
    return meta


def _check_identity(meta: dict[str, Any], short: str, scenario_id: str, iteration: int | None,
                    problems: list[str]) -> None:
    key = meta.get("key")
    if not isinstance(key, str) or not _FULL_KEY.fullmatch(key):
        problems.append(f"entry.json has no valid 64-hex 'key' (got {str(key)[:24]!r})")
    elif not key.startswith(short):
        problems.append(f"full key {key[:SHORT_KEY_LENGTH]}... does not match its folder prefix {short}")
    if meta.get("scenario") != scenario_id:
        problems.append(f"entry.json names scenario {meta.get('scenario')!r} but sits under {scenario_id}")
    if iteration is not None and meta.get("iteration") != iteration:
        problems.append(f"entry.json names iteration {meta.get('iteration')!r} but sits under {iteration}")
