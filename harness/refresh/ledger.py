"""The run's ledger: what a recording run has paid for, as it happens.

One ledger per run counts every call and every HTTP attempt: the transport
reports each attempt (a timeout counts as paid: the provider may have generated
and billed the answer), the caching client reports each call it starts and how
its answer was obtained. The progress line reads it on a timer; ``run.json``
gets its totals. So "paid" is what the provider may bill, not the number of
answers kept: 183 attempts for 175 kept answers are reported as such.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.refresh.budget import CallBudget


@dataclass(frozen=True)
class Tally:
    """A snapshot of the ledger (``run.json`` ``accounting``)."""

    iterations: int = 0
    iterations_started: int = 0
    iterations_done: int = 0
    in_flight: int = 0
    """Calls sent to the provider (or the script) and not answered yet."""
    paid_calls: int = 0
    """Calls answered by the provider this run."""
    paid_attempts: int = 0
    """HTTP attempts that reached the provider, retries and failed calls included."""
    retried_calls: int = 0
    retries: int = 0
    timeouts: int = 0
    failed_calls: int = 0
    """Calls that failed for good (their attempts are in ``paid_attempts``)."""
    from_journal: int = 0
    from_batch: int = 0
    """Answers a provider batch of this run paid for (``--batch``, billed per request)."""
    from_cache: int = 0
    scripted: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    def to_json(self) -> dict[str, int]:
        """The JSON form (``run.json``)."""
        return asdict(self)


class Ledger:
    """Thread-safe counters of one run; an :class:`~harness.providers.retries.AttemptObserver`."""

    def __init__(self, notify: Callable[[str], None] | None = None) -> None:
        self.notify = notify
        """Where a retry line goes (the progress printer sets it); None: nowhere."""
        self.budget: CallBudget | None = None
        """``--max-calls`` of a paid run (:mod:`harness.refresh.budget`); None: no limit."""
        self._lock = threading.Lock()
        self._counts: dict[str, int] = dict.fromkeys(Tally.__dataclass_fields__, 0)

    def planned(self, iterations: int) -> None:
        """The run will execute ``iterations`` scenario iterations."""
        with self._lock:
            self._counts["iterations"] = iterations

    def iteration_started(self) -> None:
        self._add(iterations_started=1)

    def iteration_done(self) -> None:
        self._add(iterations_done=1)

    def take_call(self, what: str) -> None:
        """A new call is about to be sent to a provider (paid): take it from the run's
        ``--max-calls`` budget, or raise :class:`~harness.refresh.budget.CallBudgetSpent`."""
        if self.budget is not None:
            self.budget.take(what)

    def call_started(self) -> None:
        """A call went to the inner client (provider or script)."""
        self._add(in_flight=1)

    def call_ended(self, obtained: str | None, *, input_tokens: int = 0, output_tokens: int = 0,
                   retried: bool = False) -> None:
        """The call answered (``obtained``: paid, scripted, journal), failed (None) or was
        deferred (``deferred``: to a batch, or interrupted; nothing else is counted)."""
        counts = {"in_flight": -1, "retried_calls": int(retried)}
        if obtained is None:
            counts["failed_calls"] = 1
        elif obtained == "paid":
            counts.update(paid_calls=1, input_tokens=input_tokens, output_tokens=output_tokens)
        elif obtained == "scripted":
            counts["scripted"] = 1
        elif obtained == "journal":
            counts["from_journal"] = 1
        self._add(**counts)

    def call_retried(self, *, first: bool) -> None:
        """A call counted as failed is tried again (an SDK's own retry, seen at the wire): it is no
        longer failed; one more retry, and one more retried call on its ``first`` retry."""
        self._add(failed_calls=-1, retries=1, retried_calls=int(first))

    def from_cache(self) -> None:
        """A call answered by the committed cache (or another process, meanwhile)."""
        self._add(from_cache=1)

    def batch_answer(self, input_tokens: int = 0, output_tokens: int = 0) -> None:
        """A call answered by this run's batch (materialised from the journal)."""
        self._add(from_batch=1, input_tokens=input_tokens, output_tokens=output_tokens)

    def journal_reuse(self) -> None:
        """A call answered from the journal without going to the provider."""
        self._add(from_journal=1)

    # AttemptObserver
    def attempt_finished(self, *, reached: bool) -> None:
        if reached:
            self._add(paid_attempts=1)

    def retrying(self, scenario: str, attempt: int, attempts: int, problem: str,
                 wait_s: float, *, reached: bool) -> None:
        self._add(retries=1, timeouts=int("(timeout" in problem))
        if self.notify is not None:
            paid = "counted as paid" if reached else "never reached the provider"
            if "counted as paid" in problem:
                paid = ""
            self.notify(f"retry {attempt + 1}/{attempts} of {scenario} in {wait_s:.1f}s after "
                        f"{problem}" + (f" ({paid})" if paid else ""))

    def tally(self) -> Tally:
        """The counts as they stand."""
        with self._lock:
            return Tally(**self._counts)

    def _add(self, **counts: int) -> None:
        with self._lock:
            for name, value in counts.items():
                self._counts[name] += value


def tally_of_records(records: Iterable[Mapping[str, Any]]) -> dict[str, int | None]:
    """The ``run.json`` accounting rebuilt from iteration records, for a run whose calls were
    made by other processes (the pytest-xdist controller sums its workers' records files).

    Records carry per call ``obtained``, ``attempts``, ``retries`` and ``failed``; what they do
    not carry (timeouts, calls in flight) is ``None``, unknown, never a guessed zero.
    """
    totals: dict[str, int | None] = dict.fromkeys(Tally.__dataclass_fields__, 0)
    totals["timeouts"] = totals["in_flight"] = totals["iterations_started"] = None
    counts = {k: 0 for k in totals if totals[k] is not None}
    for record in records:
        counts["iterations"] += 1
        counts["iterations_done"] += 1
        for call in record.get("calls") or []:
            obtained, failed = call.get("obtained"), bool(call.get("failed"))
            counts["paid_attempts"] += int(call.get("attempts") or 0)
            counts["retries"] += int(call.get("retries") or 0)
            counts["retried_calls"] += bool(call.get("retried"))
            if failed:
                counts["failed_calls"] += 1
            elif obtained in _RECORD_COUNTS:
                counts[_RECORD_COUNTS[obtained]] += 1
    totals.update(counts)
    return totals


#: A call record's ``obtained`` -> the tally field it counts in.
_RECORD_COUNTS = {"paid": "paid_calls", "journal": "from_journal", "batch": "from_batch",
                  "cache": "from_cache", "scripted": "scripted"}
