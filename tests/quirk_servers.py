"""Loopback fakes of the OpenAI-compatible servers' known quirks, for the wire-compat tests.

Each answer function validates a request the way the real server does and
answers with that server's own error shape and wording (as reported in their
issue trackers), else with a normal chat-completions answer. Use one with
:class:`provider_server.ProviderServer`: ``ProviderServer(llama_cpp())``.

- llama.cpp's server / llama-cpp-python: an assistant message whose content is
  null gets HTTP 500 (a type error); tools need ``--jinja`` (HTTP 500 without);
  a prompt over the context size gets HTTP 400 ``exceed_context_size_error``.
- LM Studio: ``response_format`` of type ``json_object`` gets HTTP 400 (only
  ``json_schema`` or ``text``).
- vLLM: tools without ``--enable-auto-tool-choice`` get HTTP 400; a prompt over
  ``--max-model-len`` gets HTTP 400 "maximum context length".
- Ollama: tools with a model that has none get HTTP 400 "does not support tools".
- A server without structured outputs refuses ``json_schema``.
- A server that ignores ``tools`` answers the tool call as text (``<tool_call>``).
- OpenAI reasoning models refuse ``max_tokens`` (they take ``max_completion_tokens``).
- Hugging Face TGI ends an answer with ``finish_reason: "eos_token"``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from provider_server import Received, Reply, openai_answer

Answer = Callable[[Received], Reply]


def conversation_answer(received: Received) -> Reply:
    """Call the first declared tool until a tool result came back, then answer yes."""
    body = received.body
    tools = body.get("tools") or []
    if tools and not any(m.get("role") == "tool" for m in body["messages"]):
        name = tools[0]["function"]["name"]
        return Reply(body=openai_answer(None, tool_calls=[{"name": name,
                                                           "arguments": {"order": "A-1"}}]))
    return Reply(body=openai_answer({"answer": "yes"}))


def _prompt_tokens(body: dict[str, Any]) -> int:
    return len(json.dumps(body["messages"])) // 4


def llama_cpp(*, jinja: bool = True, n_ctx: int = 4096) -> Answer:
    """llama.cpp's server (and llama-cpp-python's): strict about message content types."""

    def answer(received: Received) -> Reply:
        body = received.body
        for index, message in enumerate(body["messages"]):
            if "content" in message and message["content"] is None:
                return Reply(500, {"error": {
                    "code": 500, "type": "server_error",
                    "message": "[json.exception.type_error.302] type must be string, but is null "
                               f"(messages[{index}].content)"}})
        if body.get("tools") and not jinja:
            return Reply(500, {"error": {"code": 500, "type": "server_error",
                                         "message": "tools param requires --jinja flag"}})
        tokens = _prompt_tokens(body)
        if tokens > n_ctx:
            return Reply(400, {"error": {
                "code": 400, "type": "exceed_context_size_error", "n_prompt_tokens": tokens,
                "n_ctx": n_ctx,
                "message": "the request exceeds the available context size, try increasing it"}})
        return conversation_answer(received)

    return answer


def lm_studio(received: Received) -> Reply:
    """LM Studio's server: ``response_format`` must be ``json_schema`` or ``text``."""
    kind = (received.body.get("response_format") or {}).get("type")
    if kind not in (None, "json_schema", "text"):
        return Reply(400, {"error": "'response_format.type' must be 'json_schema' or 'text'"})
    return conversation_answer(received)


def vllm(*, auto_tool_choice: bool = False, max_model_len: int = 8192) -> Answer:
    """vLLM's OpenAI server."""

    def answer(received: Received) -> Reply:
        body = received.body
        if body.get("tools") and not auto_tool_choice:
            return Reply(400, {"object": "error", "type": "BadRequestError", "param": None,
                               "code": 400,
                               "message": '"auto" tool choice requires --enable-auto-tool-choice '
                                          "and --tool-call-parser to be set"})
        tokens = _prompt_tokens(body)
        wanted = tokens + int(body.get("max_tokens") or 0)
        if wanted > max_model_len:
            return Reply(400, {"object": "error", "type": "BadRequestError", "param": None,
                               "code": 400,
                               "message": f"This model's maximum context length is {max_model_len} "
                                          f"tokens. However, you requested {wanted} tokens "
                                          f"({tokens} in the messages, {body.get('max_tokens')} "
                                          "in the completion). Please reduce the length of the "
                                          "messages or completion."})
        return conversation_answer(received)

    return answer


def ollama_without_tools(received: Received) -> Reply:
    """Ollama serving a model whose template has no tools."""
    if received.body.get("tools"):
        return Reply(400, {"error": {"message": "registry.ollama.ai/library/gemma:2b does not "
                                                "support tools", "type": "api_error",
                                     "param": None, "code": None}})
    return conversation_answer(received)


def no_structured_outputs(received: Received) -> Reply:
    """A server that knows JSON mode but not structured outputs."""
    if (received.body.get("response_format") or {}).get("type") == "json_schema":
        return Reply(400, {"error": {"message": "response_format type 'json_schema' is not "
                                                "supported", "type": "invalid_request_error"}})
    return conversation_answer(received)


def tools_ignored(received: Received) -> Reply:
    """A server that does not parse tool calls: the model writes its call as text."""
    call = {"name": "lookup_order", "arguments": {"order": "A-1"}}
    return Reply(body=openai_answer(f"<tool_call>\n{json.dumps(call)}\n</tool_call>"))


def reasoning_model(received: Received) -> Reply:
    """An OpenAI reasoning model: ``max_tokens`` is refused, ``max_completion_tokens`` taken."""
    if "max_tokens" in received.body:
        return Reply(400, {"error": {
            "message": "Unsupported parameter: 'max_tokens' is not supported with this model. "
                       "Use 'max_completion_tokens' instead.",
            "type": "invalid_request_error", "param": "max_tokens",
            "code": "unsupported_parameter"}})
    return conversation_answer(received)


def tgi(received: Received) -> Reply:
    """Hugging Face TGI: a finished answer says ``eos_token``."""
    reply = conversation_answer(received)
    reply.body["choices"][0]["finish_reason"] = "eos_token"
    return reply
