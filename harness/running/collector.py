"""The cyclic garbage collector's pace during one ``harness run`` (the CLI command only).

Python starts a generation-0 collection every 700 net allocations, and every
tenth of those a generation-1 one, and a full collection when the long-lived
heap grew by a quarter. A run allocates a great many short-lived objects
(parsed YAML, canonical requests, verdicts) on top of a heap that imports made
large: an SDK agent brings ``openai`` or ``anthropic`` and their pydantic
schemas, about 300,000 tracked objects. Measured on the committed examples
(``gc.callbacks``, CPU): 183 collections cost 0.40 s of the 3.5 s of run work,
0.33 s of it two full collections walking that heap; with generation 0 at
10,000 allocations, 2 collections cost 0.04 s.

Garbage without cycles is freed at once by reference counting whatever the
thresholds; only cyclic garbage waits longer (up to 10,000 allocations in the
young generation), which is a few hundred KB at most. The thresholds are put
back when the command ends, so a process that calls ``cli.main`` repeatedly
(the tests) and the library API keep Python's defaults.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

#: Net allocations between two young collections during a run (Python's default is 700).
YOUNG_THRESHOLD = 10_000


@contextmanager
def batch_pace() -> Iterator[None]:
    """Collect less often inside the block; Python's thresholds again after it."""
    before = gc.get_threshold()
    gc.set_threshold(max(before[0], YOUNG_THRESHOLD), *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)
