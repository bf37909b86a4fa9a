"""Transports outside httpx that the interceptor answers for: clients on aiohttp behind httpx's API.

Some clients keep httpx's ``AsyncClient`` and swap its transport for one that sends
with aiohttp: litellm's async calls (``LiteLLMAiohttpTransport``, its default unless
``DISABLE_AIOHTTP_TRANSPORT=True``) and the official SDKs' ``DefaultAioHttpClient``
(a vendored ``httpx_aiohttp``). Their requests never reach
``httpx.AsyncHTTPTransport``, so a recording sent them past the cache (paid, never
stored) and an offline run refused them. The classes named here are patched like
httpx's own transport, by name and only these: a transport the agent wrote (a test
double, a wrapper around httpx's) is its own business, and one that sends through a
patched transport is answered there.

A class may be defined after the interceptor is installed (litellm builds its
transport module on the first async call, inside an iteration), so the base class's
``__init_subclass__`` adopts it the moment it is defined; classes already defined
are found among the base's subclasses.
"""

from __future__ import annotations

from collections.abc import Callable

#: ``module.QualifiedName`` of every transport class adopted; each defines its own
#: ``handle_async_request`` and sends with aiohttp.
ADOPTED = frozenset({
    "litellm.llms.custom_httpx.aiohttp_transport.LiteLLMAiohttpTransport",
    "openai._vendor.httpx_aiohttp.transport.AiohttpTransport",
    "anthropic._vendor.httpx_aiohttp.transport.AiohttpTransport",
    "httpx_aiohttp.transport.AiohttpTransport",
})

_done: set[type] = set()


def _name_of(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def watch(base: type, adopt: Callable[[type], None]) -> None:
    """Call ``adopt`` once for every adopted subclass of ``base``, defined now or later."""

    def take(cls: type) -> None:
        if cls not in _done and _name_of(cls) in ADOPTED and "handle_async_request" in cls.__dict__:
            _done.add(cls)
            adopt(cls)

    inherited = base.__dict__.get("__init_subclass__")

    def init_subclass(cls: type, /, **kwargs: object) -> None:
        if inherited is not None:
            inherited.__get__(None, cls)(**kwargs)
        else:
            super(base, cls).__init_subclass__(**kwargs)  # type: ignore[arg-type]
        take(cls)

    setattr(base, "__init_subclass__", classmethod(init_subclass))  # noqa: B010 - a class hook
    pending: list[type] = list(base.__subclasses__())
    while pending:
        cls = pending.pop()
        take(cls)
        pending.extend(cls.__subclasses__())
