"""OpenAI embeddings, ``POST /v1/embeddings``: float lists, or base64 of little-endian float32.

The official SDK asks for ``base64`` when the caller names no
``encoding_format`` and decodes it itself, so both encodings are on the wire in
practice. Vectors come from :func:`brain.embed` (bag of words, deterministic),
``dimensions`` sets their length.
"""

from __future__ import annotations

import base64
import struct

from .brain import embed, tokens
from .wire import JsonObject, Reply, openai_error


def answer(body: JsonObject) -> Reply:
    """Answer one embeddings request."""
    if not isinstance(body.get("model"), str):
        raise openai_error(400, "you must provide a model parameter", param="model")
    given = body.get("input")
    texts = [given] if isinstance(given, str) else given
    if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
        raise openai_error(400, "'input' must be a string or a non-empty array of strings.", param="input")
    encoding = body.get("encoding_format", "float")
    if encoding not in ("float", "base64"):
        raise openai_error(400, f"Invalid value for 'encoding_format': '{encoding}'.",
                           param="encoding_format")
    dimensions = int(body.get("dimensions") or 64)
    data = []
    for index, text in enumerate(texts):
        vector = embed(text, dimensions)
        value: object = (base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()
                         if encoding == "base64" else vector)
        data.append({"object": "embedding", "index": index, "embedding": value})
    used = sum(tokens(t) for t in texts)
    return Reply(body={"object": "list", "data": data, "model": body["model"],
                       "usage": {"prompt_tokens": used, "total_tokens": used}})
