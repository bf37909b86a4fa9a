"""The client CI uses: it refuses every call.

Behind a :class:`~harness.clients.caching.CachingClient`, every call resolves
from the committed cache or the run fails here, naming what a person needs to
fix it. A miss is the verdict, never a skip: in CI it means the prompt, the
model or the scenario changed and nobody re-recorded.
"""

from __future__ import annotations

from pathlib import Path

from harness.cache.diagnose import explain_miss
from harness.cache.layout import ENTRY_FILE
from harness.cache.store import CacheStore
from harness.clients.base import credential_variable
from harness.core.entities import ChatCall, ChatResponse
from harness.core.errors import CacheMiss
from harness.core.rerecord import Rerecord


class OfflineClient:
    """Refuses every call with a :class:`~harness.core.errors.CacheMiss` that explains itself."""

    def __init__(
        self,
        provider: str,
        model: str,
        *,
        store: CacheStore,
        project_root: Path,
        credentials_file: Path | None,
        api_key_env: str | None = None,
        rerecord: Rerecord | None = None,
    ) -> None:
        self.provider = provider
        self.model = model
        self._store = store
        self._root = project_root
        self._credentials_file = credentials_file
        self._api_key_env = api_key_env
        self._rerecord = rerecord or Rerecord()

    def complete(self, call: ChatCall) -> ChatResponse:
        """Never answers: raises the miss, with the path, command and credentials to fix it."""
        expected = self._store.path_for(call) / ENTRY_FILE
        recorded = self._store.entries_of(call.scenario_id, call.iteration)
        own = call.provider == self.provider  # a judge may use another provider
        variable = credential_variable(call.provider, self._api_key_env if own else None)
        credentials = self._relative(self._credentials_file) if self._credentials_file else None
        lines = [
            f"{call.scenario_id} iteration {call.iteration} has no cache entry for its "
            f"{_what(call)} (provider {call.provider}, model {call.model}).",
            f"  expected entry: {self._relative(expected)}",
            f"  recorded for this iteration: {len(recorded)} other entr"
            f"{'y' if len(recorded) == 1 else 'ies'}"
            + (" (the request, model or provider changed since they were recorded)"
               if recorded else ""),
            *explain_miss(call, recorded, self._relative),
            f"  re-record: {self._rerecord.command(call.scenario_id, fix='missing')}",
            f"  credentials: {variable} from the environment"
            + (f" or {credentials}" if credentials else ""),
        ]
        raise CacheMiss("\n".join(lines))

    def _relative(self, path: Path) -> str:
        try:
            return path.relative_to(self._root).as_posix()
        except ValueError:
            return path.as_posix()


def _what(call: ChatCall) -> str:
    """What missed: a judge's request, an SDK's request to a named wire API, or the request."""
    if call.purpose:
        return f"{call.purpose} request"
    api = call.request.get("api")  # a wire exchange names its API (harness.wire.canonical)
    return f"{api} request" if isinstance(api, str) else "request"
