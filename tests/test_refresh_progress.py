"""The progress line of a recording run: a timer while calls are outstanding, one final line,
counts from the run's ledger (paid = attempts that reached the provider), scripted says scripted."""

from __future__ import annotations

import io
import threading
import time
from pathlib import Path

from harness.core.declared import Scenario
from harness.refresh.ledger import Ledger
from harness.results.record import IterationResult
from harness.running.progress import Progress

SCENARIO = Scenario("helper", "acme", "greeting", Path("x.yaml"), "positive", "", (), None, {}, 1,
                    (), ())


def done(status: str = "passed") -> IterationResult:
    return IterationResult(SCENARIO, 0, status)  # type: ignore[arg-type]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def paid_call(ledger: Ledger, attempts: int = 1) -> None:
    """One call through the ledger as the transport and caching client report it."""
    ledger.iteration_started()
    ledger.call_started()
    for _ in range(attempts):
        ledger.attempt_finished(reached=True)
    ledger.call_ended("paid", input_tokens=100, output_tokens=20, retried=attempts > 1)


def test_the_line_counts_paid_attempts_answers_retries_journal_and_cache() -> None:
    stream, clock, ledger = io.StringIO(), Clock(), Ledger()
    progress = Progress(stream, tty=False, clock=clock, timer=False)
    progress.start(4, ledger)
    paid_call(ledger, attempts=3)  # two timeouts, then an answer: three attempts are billed
    ledger.iteration_started()
    ledger.journal_reuse()
    ledger.iteration_started()
    ledger.call_started()  # still in flight
    clock.now = 10
    progress.advance(done())
    progress.advance(done())
    assert progress.tick()
    assert stream.getvalue() == (
        "recording (paid) 2/4 50% | 0.2/s | ETA 0:10 | in flight 1, queued 1 | "
        "paid 3 (1 answered, 1 retried), journal 1, cache 0 | tokens 100 in, 20 out\n")


def test_nothing_outstanding_means_no_timer_line_and_the_last_line_is_printed_once() -> None:
    stream, clock, ledger = io.StringIO(), Clock(), Ledger()
    progress = Progress(stream, tty=False, clock=clock, timer=False)
    progress.start(1, ledger)
    paid_call(ledger)
    progress.advance(done())
    assert not progress.tick()  # all done: the timer stays quiet, close() prints
    progress.close()
    progress.close()
    assert stream.getvalue().count("\n") == 1
    assert stream.getvalue().startswith("recording (paid) 1/1 100%")


def test_a_scripted_run_says_scripted_never_paid() -> None:
    stream, ledger = io.StringIO(), Ledger()
    progress = Progress(stream, scripted=True, tty=False, timer=False)
    progress.start(1, ledger)
    ledger.iteration_started()
    ledger.call_started()
    ledger.call_ended("scripted")
    progress.advance(done())
    progress.close()
    line = stream.getvalue()
    assert line.startswith("recording (scripted) 1/1") and "scripted 1, cache 0" in line
    assert "paid" not in line


def test_the_timer_prints_from_the_first_second_while_calls_are_outstanding() -> None:
    stream, ledger = io.StringIO(), Ledger()
    progress = Progress(stream, tty=False, interval_s=0.05)
    progress.start(2, ledger)
    ledger.iteration_started()
    ledger.call_started()  # one slow call in flight: nothing finishes for a while
    time.sleep(0.4)
    lines_while_waiting = stream.getvalue().splitlines()
    ledger.call_ended("paid")
    progress.advance(done())
    progress.advance(done())
    progress.close()
    assert len(lines_while_waiting) >= 3
    assert all("in flight 1" in line and "0/2" in line for line in lines_while_waiting)
    final = stream.getvalue().splitlines()
    assert final[-1].startswith("recording (paid) 2/2 100%")
    assert sum(1 for line in final if "2/2" in line) == 1


def test_a_retry_is_printed_on_its_own_line() -> None:
    stream, ledger = io.StringIO(), Ledger()
    progress = Progress(stream, tty=False, timer=False)
    progress.start(1, ledger)
    ledger.retrying("helper/acme/greeting", 1, 6, "no answer within 120s (timeout; the provider "
                    "may have generated and billed an answer: counted as paid)", 0.4, reached=True)
    assert stream.getvalue() == (
        "retry 2/6 of helper/acme/greeting in 0.4s after no answer within 120s (timeout; the "
        "provider may have generated and billed an answer: counted as paid)\n")
    assert ledger.tally().retries == 1 and ledger.tally().timeouts == 1


def test_a_terminal_line_is_redrawn_in_place() -> None:
    stream, clock = io.StringIO(), Clock()
    progress = Progress(stream, tty=True, clock=clock, timer=False)
    progress.start(3601)
    clock.now = 1
    progress.advance(done())
    progress.close()
    text = stream.getvalue()
    assert text.startswith("\rrecording (paid) 0/3601 0%") and text.endswith("\n")
    assert text.count("\r") == 3 and "ETA 1:00:00" in text and "1.0/s" in text


def test_the_ledger_is_safe_under_threads() -> None:
    ledger = Ledger()
    threads = [threading.Thread(target=lambda: [paid_call(ledger) for _ in range(200)])
               for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    tally = ledger.tally()
    assert (tally.paid_calls, tally.paid_attempts, tally.in_flight) == (800, 800, 0)


def test_a_stream_closed_under_the_timer_ends_the_timer_quietly_and_close_does_not_raise() -> None:
    """The timer thread outlived its run once and wrote to a closed stream: a thread traceback."""
    stream, ledger = io.StringIO(), Ledger()
    errors: list[threading.ExceptHookArgs] = []
    previous = threading.excepthook
    threading.excepthook = errors.append
    try:
        progress = Progress(stream, tty=False, interval_s=0.01)
        progress.start(3, ledger)
        stream.close()
        time.sleep(0.3)  # many timer periods: each would write to the closed stream
        progress.close()
    finally:
        threading.excepthook = previous
    assert errors == []
    assert progress._thread is None
