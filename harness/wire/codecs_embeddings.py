"""OpenAI Embeddings at the wire: ``POST .../embeddings``, one JSON list of vectors.

Decoding checks the shape (every vector a list of numbers or a base64 string
of little-endian float32, as ``encoding_format: base64`` sends it, which the
``openai`` SDK asks for by default) and keeps what the harness reports: usage
and model. The scripted encoder answers one vector per input: the given ones,
or a deterministic unit vector derived from sha256 of the input text, so a
seeded cache gives the same similarities on every machine.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import math
import struct
from typing import Any

from harness.core.entities import ChatResponse, JsonObject, Usage
from harness.wire.codecs_common import (
    EncodedAnswer,
    WireDecodeError,
    api_error,
    array,
    count,
    dumps,
    json_answer,
    model_of,
    obj,
)


def decode_json(data: Any) -> ChatResponse:
    """An embeddings ``list`` object: no text, no tool calls, input tokens and the model."""
    reason = api_error(data)
    if reason:
        raise WireDecodeError(reason)
    body = obj(data, "the answer")
    for i, raw in enumerate(array(body.get("data"), "data")):
        vector(obj(raw, f"data[{i}]").get("embedding"), f"data[{i}].embedding")
    raw_usage = body.get("usage")
    usage = raw_usage if isinstance(raw_usage, dict) else {}
    model = body.get("model")
    return ChatResponse(content=None, usage=Usage(count(usage.get("prompt_tokens")), 0),
                        model=model if isinstance(model, str) and model else None)


def vector(value: Any, where: str) -> list[float]:
    """One embedding as floats, from a JSON list or a base64 float32 string."""
    if isinstance(value, str):
        try:
            raw = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            raise WireDecodeError(f"{where} is not valid base64") from None
        if len(raw) % 4:
            raise WireDecodeError(f"{where} is not a whole number of float32 values")
        return list(struct.unpack(f"<{len(raw) // 4}f", raw))
    values = array(value, where)
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        raise WireDecodeError(f"{where} holds something other than numbers")
    return [float(v) for v in values]


def inputs(request: JsonObject) -> list[str]:
    """The request's inputs as texts: a string, a list of strings, or token arrays (as JSON)."""
    raw = request.get("input")
    if isinstance(raw, str):
        return [raw]
    if isinstance(raw, list) and raw and all(isinstance(v, int) for v in raw):
        return [dumps(raw)]
    if isinstance(raw, list):
        return [v if isinstance(v, str) else dumps(v) for v in raw]
    raise ValueError(f"the embeddings request input is {type(raw).__name__}, not text or a list of texts")


def derived_vector(value: str, dimensions: int) -> list[float]:
    """A unit vector of ``dimensions`` floats from sha256 of ``value``: the same on every machine."""
    floats: list[float] = []
    block = 0
    while len(floats) < dimensions:
        digest = hashlib.sha256(f"{block}\x00{value}".encode()).digest()
        floats += [(int.from_bytes(digest[i:i + 4], "little") / 2**31) - 1.0 for i in range(0, 32, 4)]
        block += 1
    floats = floats[:dimensions]
    norm = math.sqrt(sum(v * v for v in floats)) or 1.0
    # Rounded to float32 so that the float and base64 forms carry the same numbers.
    return [struct.unpack("<f", struct.pack("<f", v / norm))[0] for v in floats]


def encode(response: ChatResponse, request: JsonObject,
           embedding: list[list[float]] | None) -> EncodedAnswer:
    """The embeddings answer: one vector per input, float lists or base64 as the request asks."""
    texts = inputs(request)
    if embedding is not None and len(embedding) != len(texts):
        raise ValueError(f"{len(embedding)} embeddings given for {len(texts)} inputs")
    dimensions = request.get("dimensions", 8)
    if isinstance(dimensions, bool) or not isinstance(dimensions, int) or not 0 < dimensions <= 65_536:
        raise ValueError(f"the embeddings request dimensions is {dimensions!r}, not a positive int")
    vectors = embedding if embedding is not None else [derived_vector(t, dimensions) for t in texts]
    as_base64 = request.get("encoding_format") == "base64"
    data = [{"object": "embedding", "index": i,
             "embedding": (base64.b64encode(struct.pack(f"<{len(v)}f", *v)).decode("ascii")
                           if as_base64 else list(v))}
            for i, v in enumerate(vectors)]
    tokens = response.usage.input_tokens
    return json_answer({"object": "list", "data": data, "model": model_of(response.model, request),
                        "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})
