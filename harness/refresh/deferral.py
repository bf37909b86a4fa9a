"""The signal a batch run uses to stop an iteration at a call whose answer is not back yet.

A module of its own (no imports) so that the judges can let it through without
depending on the batch machinery; see :mod:`harness.running.batch`.
"""

from __future__ import annotations


class CallDeferred(BaseException):  # noqa: N818 (a control-flow signal, not an error)
    """Stops an iteration at a call whose answer will come from the next batch round.

    A ``BaseException`` so that an agent's own ``except Exception`` cannot
    swallow it and carry on without the answer; nothing is written for the
    iteration, which runs again in the next round.
    """
