"""What answers one agent's wire exchanges in a run: its mode and everything that mode needs.

:class:`WireRecorder` is made once per agent and run (:mod:`harness.running.factory`);
each scenario iteration gets a :class:`~harness.wire.binding.WireBinding` of it. The
plain records the binding hands to the interceptor (:class:`Pending`) and to the batch
rounds (:class:`WireDeferred`) are here too, below both, so that neither the
interceptor nor the rounds import the binding's recording half to name them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Literal, Protocol

from harness.cache.store import CacheStore
from harness.clients.offline import OfflineClient
from harness.clients.scripted import ScriptedClient
from harness.core.entities import ChatCall
from harness.core.rerecord import Rerecord
from harness.refresh.ledger import Ledger
from harness.wire.exchange import WireRequest

if TYPE_CHECKING:
    from harness.refresh.journal import Journal

#: How a run answers wire requests (see the module docstring); ``plan`` counts the requests a
#: recording would pay for and answers none of them (:mod:`harness.running.plan`).
WireMode = Literal["offline", "scripted", "paid", "plan"]
#: Resolves the real API key of a provider family when a paid recording forwards a request.
KeyResolver = Callable[[str], str]



@dataclass(frozen=True, slots=True)
class Pending:
    """A request that needs the real endpoint: the interceptor sends ``outgoing`` and calls
    :meth:`WireBinding.finish` with what came back."""

    api: str
    call: ChatCall
    key: str
    outgoing: WireRequest
    started: float


@dataclass(frozen=True, slots=True)
class WireDeferred:
    """A paid request a ``--batch`` run queues for the next batch round instead of sending it."""

    key: str
    call: ChatCall
    agent: str
    api: str
    request: WireRequest
    """The SDK's own request with the real key in place (what a synchronous send would send)."""


class DeferQueue(Protocol):
    """Where a ``--batch`` round queues paid requests
    (:class:`harness.running.batch_recorder.BatchQueue`).

    Declared here, not imported: the batch rounds run above the binding and import it, so
    the recorder names only what it uses of their queue (no import circle).
    """

    @property
    def failed(self) -> dict[str, str]: ...

    def defer(self, item: WireDeferred) -> None: ...




@dataclass
class WireRecorder:
    """What answers the wire exchanges of one agent's iterations in this run."""

    mode: WireMode
    store: CacheStore
    refresh: bool
    clock: Callable[[], datetime]
    offline: OfflineClient | None = None
    """Builds the miss explanation (offline runs)."""
    script: ScriptedClient | None = None
    resolve_key: KeyResolver | None = None
    ledger: Ledger | None = None
    rerecord: Rerecord = field(default_factory=Rerecord)
    journal: Journal | None = None
    """Paid recording: every answer is journaled before its entry is written; a re-run (``--resume``)
    materialises answers an earlier run paid for instead of paying again."""
    batch: DeferQueue | None = None
    """``--batch``: paid requests are queued for the round's batch (:mod:`harness.running.batch`)."""
    batch_retry_errors: bool = False
    limit: Callable[[str, str], None] | None = None
    """Paid recording with ``requests_per_minute``: blocks until the next slot of the rate limit
    shared by every process of the project, for (provider family, base URL); once per attempt."""
    agent: str = ""
    written: int = 0
    materialised: dict[str, str] = field(default_factory=dict)
    """Keys written by this run, with how they were obtained: a later round (or a repeat of the
    iteration) reads them back without counting them again."""
    journaled: list[str] = field(default_factory=list)
    """Keys materialised through the journal (forgotten when the whole run succeeds)."""
    _lock: threading.Lock = field(default_factory=threading.Lock)
