"""Keys out of everything the harness shows or keeps: error messages, excerpts, recorded answers.

A provider's error body, a ``Location`` header or a connection error may quote
the key that was sent; an endpoint may echo it inside a 2xx answer (a proxy's
debug field, a model repeating its prompt). Messages are printed and kept in
records; answers are committed to git forever. So every text the transport
shows goes through :func:`redact` (or :func:`excerpt`), and every decoded
answer through :func:`scrub_answer` before it is mapped, journaled or written,
unless :func:`may_hold_secret` proves from the raw bytes that it cannot hold one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

EXCERPT_CHARS = 300
REDACTED = "[REDACTED]"
#: Bearer tokens and the usual key shapes, redacted even when they are not the configured key.
_SECRET_PATTERNS = (
    re.compile(r"(?i)(bearer\s+)[^\s\"',;]+"),
    re.compile(r"(?i)((?:x-)?api[-_]key[\"']?\s*[:=]\s*[\"']?)[^\s\"',;]+"),
    re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}"),
)


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every given secret and anything shaped like a key or bearer token masked."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, REDACTED)
    for pattern in _SECRET_PATTERNS:
        text = pattern.sub(lambda m: (m.group(1) if m.groups() else "") + REDACTED, text)
    return text


#: A configured key shorter than this is a placeholder (a local server ignores it: ``local``,
#: ``ollama``); masking it inside answers would mangle ordinary words, so only longer ones are.
MIN_SECRET_CHARS = 16
#: Key shapes masked in answers whatever key is configured (an answer quoting a key is committed).
_ANSWER_KEY_SHAPE = re.compile(r"\bsk-[A-Za-z0-9_\-]{16,}")


def scrub_answer(value: Any, secrets: Iterable[str] = ()) -> Any:
    """A decoded 2xx answer with every configured key (of at least :data:`MIN_SECRET_CHARS`)
    and every ``sk-`` key shape replaced by ``[REDACTED]`` in every string, keys included.

    Runs before the answer is mapped, journaled or written, so an endpoint that echoes the
    key (a proxy's debug field, a model repeating its prompt) never puts it in the cache.
    """
    masked = tuple(s for s in secrets if len(s) >= MIN_SECRET_CHARS)

    def text(item: str) -> str:
        for secret in masked:
            if secret in item:
                item = item.replace(secret, REDACTED)
        return _ANSWER_KEY_SHAPE.sub(REDACTED, item) if "sk-" in item else item

    def walk(item: Any) -> Any:
        if isinstance(item, str):
            return text(item)
        if isinstance(item, list):
            return [walk(v) for v in item]
        if isinstance(item, dict):
            return {text(k) if isinstance(k, str) else k: walk(v) for k, v in item.items()}
        return item

    return walk(value)


def may_hold_secret(body: bytes, secrets: Iterable[str] = ()) -> bool:
    """Whether :func:`scrub_answer` could change anything in the JSON decoded from ``body``.

    Without a ``\\u`` escape in the raw bytes, a decoded string holds a letter, digit,
    ``_`` or ``-`` only where the raw bytes hold it (the other escapes stand for quotes,
    slashes and control characters), so an ``sk-`` shape, or a configured key made of
    such characters, is in a decoded string only if its bytes are in ``body``. Any
    other key (with a quote, slash or control character) says True: the walk decides.
    Answers the walk would leave unchanged (nearly all) are not walked: the walk was a
    sixth of an exchange's CPU.
    """
    if b"\\u" in body or b"sk-" in body:
        return True
    for secret in secrets:
        if len(secret) < MIN_SECRET_CHARS:
            continue
        if not _PLAIN_SECRET.fullmatch(secret) or secret.encode("utf-8") in body:
            return True
    return False


#: A configured key :func:`may_hold_secret` can look for in raw JSON bytes (no character
#: that has a short JSON escape, no control character).
_PLAIN_SECRET = re.compile(r"[^\x00-\x1f\x7f\"\\/]+")


def excerpt(body: bytes | str, secrets: Iterable[str] = (), limit: int = EXCERPT_CHARS) -> str:
    """At most ``limit`` characters of a body, whitespace collapsed, secrets redacted first."""
    text = body.decode("utf-8", errors="replace") if isinstance(body, bytes) else body
    text = redact(" ".join(text.split()), secrets)
    if not text:
        return "(empty body)"
    return text if len(text) <= limit else text[: limit - 3] + "..."
