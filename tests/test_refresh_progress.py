"""The progress line of a recording run: done/total, rate, ETA, paid calls and tokens."""

from __future__ import annotations

import io
from pathlib import Path

from harness.clients.caching import CallRecord
from harness.entities import Scenario, Usage
from harness.refresh.progress import Progress
from harness.results import IterationResult

SCENARIO = Scenario("helper", "acme", "greeting", Path("x.yaml"), "positive", "", (), None, {}, 1,
                    (), ())


def result(*sources: str, status: str = "passed") -> IterationResult:
    calls = tuple(CallRecord("k", source == "cache", 1.0, "e", source=source,  # type: ignore[arg-type]
                             usage=Usage(100, 20) if source == "provider" else Usage())
                  for source in sources)
    return IterationResult(SCENARIO, 0, status, calls=calls)  # type: ignore[arg-type]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_log_gets_a_line_every_interval_and_one_at_the_end() -> None:
    stream, clock = io.StringIO(), Clock()
    progress = Progress(stream, tty=False, interval_s=10, clock=clock)
    progress.start(4)
    clock.now = 2
    progress.advance(result("provider"))
    assert stream.getvalue() == ""
    clock.now = 11
    progress.advance(result("journal", "provider"))
    assert stream.getvalue() == ("recording 2/4 50% | 0.2/s | ETA 0:11 | paid 2, journal 1, cache 0 | "
                                 "tokens 200 in, 40 out\n")
    clock.now = 12
    progress.advance(result("cache"))
    progress.advance(result(status="error"))
    progress.close()
    assert stream.getvalue().splitlines()[-1] == (
        "recording 4/4 100% | 0.3/s | ETA 0:00 | paid 2, journal 1, cache 1 | "
        "tokens 200 in, 40 out | 1 failed")


def test_a_terminal_line_is_redrawn_in_place() -> None:
    stream, clock = io.StringIO(), Clock()
    progress = Progress(stream, label="recording (paid)", tty=True, clock=clock)
    progress.start(3601)
    clock.now = 1
    progress.advance(result("provider"))
    progress.close()
    text = stream.getvalue()
    assert text.startswith("\rrecording (paid) 0/3601 0%") and text.endswith("\n")
    assert text.count("\r") == 3 and "ETA 1:00:00" in text and "1.0/s" in text
