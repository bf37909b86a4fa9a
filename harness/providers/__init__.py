"""Real chat providers, used only by recording runs (``--refresh-cache``, ``--record-missing``).

:func:`build_provider` turns an agent and its resolved credentials into a
:class:`~harness.clients.base.ChatClient`: ``openai`` (chat completions at any
OpenAI-compatible base URL: OpenAI, Azure OpenAI, vLLM, Ollama, llama.cpp
server, LM Studio) or ``anthropic`` (messages API). The base URL, key, timeout
and retry settings live in the transport and never reach a
:class:`~harness.core.entities.ChatCall`, so they never enter a cache key.

Stage ``clients`` (with :mod:`harness.clients`): also ``credentials`` (keys and base URLs
from the environment or ``.env.evals``). May import core, documents, requests, cache, refresh.
"""

from __future__ import annotations

import threading
import urllib.parse
from collections.abc import Callable
from dataclasses import replace

from harness.clients.base import ChatClient
from harness.core.declared import Agent
from harness.core.entities import ChatCall, ChatResponse
from harness.core.errors import ConfigError
from harness.providers import anthropic, openai
from harness.providers.compat import compat_of, compat_problems, diagnose_for
from harness.providers.credentials import Credentials
from harness.providers.http import Transport
from harness.providers.retries import AttemptObserver, Limiter, Receipt, RetryPolicy

__all__ = ["DEFAULT_POLICY", "DEFAULT_TIMEOUT_S", "PROVIDERS", "RoutingClient", "build_provider",
           "check_agent", "endpoint_kind"]

#: The providers the harness can record against, by the name agent.yaml gives.
PROVIDERS = ("anthropic", "openai")
#: Retry policy unless agent.yaml ``endpoint.max_retries`` says otherwise (tests shorten it).
DEFAULT_POLICY = RetryPolicy()
DEFAULT_TIMEOUT_S = 120.0
_AZURE_HOSTS = (".openai.azure.com", ".cognitiveservices.azure.com", ".services.ai.azure.com")


def check_agent(agent: Agent, provider: str | None = None) -> None:
    """Refuse, before any call, an agent the provider cannot serve (exit 2, naming agent.yaml)."""
    name = provider or agent.provider
    where = agent.directory / "agent.yaml"
    if name not in PROVIDERS:
        raise ConfigError(
            f"{where}: provider '{name}' cannot be recorded against: the known providers are "
            f"{', '.join(PROVIDERS)}. Any OpenAI-compatible server (Azure OpenAI, vLLM, Ollama, "
            "llama.cpp, LM Studio) is provider: openai with endpoint.base_url")
    if name != agent.provider:
        return
    reserved = openai.RESERVED_OPTIONS if name == "openai" else anthropic.RESERVED_OPTIONS
    clash = sorted(set(agent.options) & reserved)
    if clash:
        raise ConfigError(f"{where}: options {', '.join(clash)} are set by the harness itself "
                          f"for provider {name}; remove them")
    if agent.endpoint.get("compat") is not None:
        problems = compat_problems(agent.endpoint["compat"])
        if name == "anthropic":
            problems.append("endpoint.compat applies to OpenAI-compatible servers only "
                            "(provider: openai); remove it")
        if problems:
            raise ConfigError("\n  ".join([f"{where}:", *problems]))
    if name == "anthropic" and "max_tokens" not in agent.options:
        raise ConfigError(f"{where}: provider anthropic needs options.max_tokens (the messages "
                          "API requires it)")


def build_provider(
    agent: Agent,
    credentials: Credentials,
    *,
    provider: str | None = None,
    limiter: Limiter | None = None,
    policy: RetryPolicy | None = None,
    observer: AttemptObserver | None = None,
) -> ChatClient:
    """The client of ``provider`` (default: the agent's own) for recording ``agent``'s calls."""
    name = provider or agent.provider
    check_agent(agent, name)
    endpoint = agent.endpoint if name == agent.provider else {}
    policy = policy or DEFAULT_POLICY
    if endpoint.get("max_retries") is not None:
        policy = replace(policy, max_attempts=int(endpoint["max_retries"]) + 1)
    parts = urllib.parse.urlsplit(credentials.base_url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigError(f"agent {agent.name}: the {name} base URL {credentials.base_url!r} (from "
                          f"{credentials.base_url_source}) is not an http(s) URL")
    host = parts.netloc
    secrets = (credentials.api_key,)
    azure = host.split(":")[0].endswith(_AZURE_HOSTS)
    if name == "openai":
        headers = ({"api-key": credentials.api_key} if azure
                   else {"Authorization": f"Bearer {credentials.api_key}"})
    else:
        headers = {"x-api-key": credentials.api_key, "anthropic-version": anthropic.API_VERSION}
    transport = Transport(
        credentials.base_url, label=f"{name} at {host}", headers=headers, secrets=secrets,
        timeout_s=float(endpoint.get("timeout_s") or DEFAULT_TIMEOUT_S), policy=policy,
        limiter=limiter, observer=observer,
        diagnose=diagnose_for(f"{agent.name}/agent.yaml"),
        status_hints={
            401: f"the key was refused: check {credentials.variable} ({credentials.key_source})",
            403: f"the key may not use this model: check {credentials.variable}",
            404: f"check the base URL ({credentials.base_url_source}) and the model id",
        })
    if name == "openai":
        return openai.OpenAIProvider(agent.model, transport, secrets=secrets,
                                     compat=compat_of(endpoint), endpoint_kind=endpoint_kind(
                                         host, azure=azure))
    return anthropic.AnthropicProvider(agent.model, transport, secrets=secrets)


def endpoint_kind(host: str, *, azure: bool = False) -> str:
    """``openai``, ``azure-openai`` or ``openai-compatible``, from the endpoint's host (recorded
    in each entry's provenance, never keyed)."""
    if azure:
        return "azure-openai"
    return "openai" if host.split(":")[0] == "api.openai.com" else "openai-compatible"


class RoutingClient:
    """An agent's recording client: its own provider, plus any other one a judge call names."""

    def __init__(self, primary: ChatClient | None, make: Callable[[str], ChatClient]) -> None:
        """``primary`` is None for a Python agent that declares no provider (its own calls go
        through the wire): only its judges' providers are built, on first use."""
        self.provider = primary.provider if primary is not None else ""
        self.model = primary.model if primary is not None else ""
        self._clients = {primary.provider: primary} if primary is not None else {}
        self._make = make
        self._lock = threading.Lock()

    def prepare(self, provider: str) -> ChatClient:
        """The client of ``provider``, built now (its credentials are checked now)."""
        with self._lock:
            client = self._clients.get(provider)
            if client is None:
                client = self._clients[provider] = self._make(provider)
            return client

    def complete(self, call: ChatCall) -> ChatResponse:
        """Send the call to the client of its provider (built on first use)."""
        return self.prepare(call.provider).complete(call)

    def complete_with_receipt(self, call: ChatCall) -> tuple[ChatResponse, Receipt]:
        """:meth:`complete` with the receipt of the provider that answered."""
        client = self.prepare(call.provider)
        with_receipt = getattr(client, "complete_with_receipt", None)
        if with_receipt is None:
            return client.complete(call), Receipt(attempts=1)
        response, receipt = with_receipt(call)
        return response, receipt

    def endpoint_kind_of(self, provider: str) -> str:
        """The endpoint kind of the client that answers ``provider``."""
        kind = getattr(self.prepare(provider), "endpoint_kind", None)
        return kind if isinstance(kind, str) else ("anthropic" if provider == "anthropic"
                                                   else "openai-compatible")
