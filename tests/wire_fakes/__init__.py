"""Loopback fakes of the LLM wire APIs (OpenAI chat completions, responses, embeddings; Anthropic
messages) for tests and benchmarks: real HTTP on 127.0.0.1, independent of the harness's code.

    from wire_fakes import WireFake

    with WireFake() as fake:          # or a fixture: ``yield from serve(monkeypatch)``
        env = fake.env()              # OPENAI_BASE_URL, OPENAI_API_KEY, ANTHROPIC_BASE_URL, ...
        ...                           # run an agent on the official SDKs
        fake.requests                 # what it received
    # stopped: every socket closed

Modules: ``server`` (HTTP, auth, failures, log), ``brain`` (what the model
answers), one module per API wire format, ``wire`` (ids, SSE, error shapes).
"""

from .brain import Answer, Brain, Conversation, ToolCall, conversation, decision, embed, triage_brain
from .server import ANTHROPIC_KEY, OPENAI_KEY, LoggedRequest, WireFake, serve

__all__ = ["ANTHROPIC_KEY", "OPENAI_KEY", "Answer", "Brain", "Conversation", "LoggedRequest", "ToolCall",
           "WireFake", "conversation", "decision", "embed", "serve", "triage_brain"]
