"""``--max-calls N`` held while the run goes: no call past the Nth is sent to a provider.

The plan refuses a run that may need more than N calls before any call
(:meth:`harness.running.plan.CallPlan.check_budget`), but it cannot foresee
everything: a Python agent is counted at its first call, and what it does after
that (a tool loop that goes round once more, or forever) is known only as it
happens. So every new paid call also takes one unit of the budget before it is
sent; once N are taken, the call is refused (the iteration's error, naming the
budget and the fix), the run goes on with what the cache and the journal answer,
and every answer paid for so far is kept. Retries of a call (the transport's, an
SDK's) are not counted, as the plan does not count them: the ledger reports them.

The count is shared by every process of one run (pytest-xdist workers get the
controller's run id) in a diskcache folder, one SQLite transaction per paid call.
"""

from __future__ import annotations

from pathlib import Path

from harness.core.errors import HarnessError
from harness.refresh.jsondisk import open_state

#: What deleting the budget folder costs.
CONSEQUENCE = "it only counts the calls of runs; deleting it is harmless between runs"


class CallBudgetSpent(HarnessError):
    """The run sent ``--max-calls`` calls already: this one was not sent."""

    code = "eval-max-calls-reached"


class CallBudget:
    """At most ``max_calls`` paid calls for the run ``run_id``, across its processes."""

    def __init__(self, directory: Path, run_id: str, max_calls: int) -> None:
        self.max_calls = max_calls
        self._key = f"calls:{run_id}"
        self._state = open_state(directory, "call budget", CONSEQUENCE)

    def take(self, what: str) -> None:
        """Take one call of the budget for ``what`` (a scenario iteration), or raise
        :class:`CallBudgetSpent` with the reason and the fix."""
        with self._state.transact(retry=True):
            taken = self._state.get(self._key, default=0)
            if not isinstance(taken, int) or taken < 0:
                taken = 0
            if taken < self.max_calls:
                self._state.set(self._key, taken + 1)
                return
        raise CallBudgetSpent(
            f"--max-calls {self.max_calls} reached: this run has sent {self.max_calls} call(s) to "
            f"the provider, so the call of {what} was not sent (a Python agent's calls after its "
            "first cannot be planned ahead). Every answer paid for so far is kept: run again with "
            "--record-missing and a higher --max-calls to record the rest")
