"""The progress line of a recording run, on stderr, on a timer.

``recording (paid) 37/120 31% | 4.2/s | ETA 0:20 | in flight 8, queued 75 |
paid 32 (30 answered, 2 retried), journal 2, cache 5 | tokens 12,345 in, 3,210 out``

"paid" counts HTTP attempts that reached the provider (what it may bill),
"answered" the calls that came back with an answer.

A background timer prints the line every :attr:`Progress.interval_s` seconds
(10 by default) while anything is outstanding, the first one after at most a
second, so a run whose first calls take minutes is visibly alive; the final
line is printed once, by :meth:`Progress.close`. On a terminal the line is
redrawn in place (``\\r``). Every retry is printed on a line of its own as it
happens. Counts come from the run's :class:`~harness.refresh.ledger.Ledger`:
"paid" is what the provider may bill (attempts that reached it), and a scripted
run says "scripted", never "paid". Standard library only.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TextIO

from harness.refresh.ledger import Ledger
from harness.results.record import IterationResult

#: The first timer line comes after this many seconds at most.
FIRST_LINE_S = 1.0


class Progress:
    """Prints a recording run's progress from its ledger, on a timer and at the end."""

    def __init__(
        self,
        stream: TextIO,
        *,
        scripted: bool = False,
        tty: bool | None = None,
        interval_s: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
        timer: bool = True,
    ) -> None:
        self.stream = stream
        self.scripted = scripted
        self.label = "recording (scripted)" if scripted else "recording (paid)"
        self.tty = stream.isatty() if tty is None else tty
        self.interval_s = interval_s
        self._clock = clock
        self._timer_on = timer
        self._lock = threading.Lock()
        self.ledger = Ledger()
        self.total = 0
        self.done = 0
        self.failed = 0
        self._started = clock()
        self._width = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._closed = False

    def start(self, total: int, ledger: Ledger | None = None) -> None:
        """Begin: ``total`` iterations, counted by ``ledger``; the timer starts now."""
        with self._lock:
            self.total = total
            if ledger is not None:
                self.ledger = ledger
            self.ledger.notify = self.notify
            self._started = self._clock()
            if self.tty:
                self._draw()
        if self._timer_on and self._thread is None:
            self._thread = threading.Thread(target=self._run_timer, name="harness-progress",
                                            daemon=True)
            self._thread.start()

    def advance(self, result: IterationResult) -> None:
        """Count one finished iteration (the ledger counts its calls)."""
        with self._lock:
            self.done += 1
            self.failed += result.status == "error"
            if self.tty:
                self._draw()

    def tick(self) -> bool:
        """Print the line if anything is outstanding (what the timer calls); True if printed."""
        with self._lock:
            if self._closed or not self._outstanding():
                return False
            if self.tty:
                self._draw()
            else:
                self.stream.write(self.line() + "\n")
                self.stream.flush()
            return True

    def notify(self, text: str) -> None:
        """Print an event (a retry) on a line of its own."""
        with self._lock:
            if self.tty:
                self.stream.write("\r" + " " * self._width + "\r" + text + "\n")
                self._draw()
            else:
                self.stream.write(text + "\n")
            self.stream.flush()

    def close(self) -> None:
        """Stop the timer and print the final line (once)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        with self._lock:
            if self._closed:
                return
            self._closed = True
            try:
                if self.tty:
                    self._draw()
                    self.stream.write("\n")
                else:
                    self.stream.write(self.line() + "\n")
                self.stream.flush()
            except (OSError, ValueError):
                pass  # closed or broken stream: close() runs in a finally and must not mask the run's error
        self.ledger.notify = None

    def line(self) -> str:
        """The progress line as it stands."""
        tally = self.ledger.tally()
        elapsed = max(self._clock() - self._started, 1e-9)
        rate = self.done / elapsed
        percent = f"{self.done / self.total:.0%}" if self.total else "-"
        remaining = self.total - self.done
        eta = _duration(remaining / rate) if rate > 0 and remaining else ("0:00" if not remaining else "?")
        if self.scripted:
            answered = f"scripted {tally.scripted}, cache {tally.from_cache}"
        else:
            extra = "".join(f", {n} {what}" for n, what in ((tally.from_batch, "in batches"),
                                                            (tally.retried_calls, "retried"),
                                                            (tally.failed_calls, "failed"))
                            if n)
            paid = tally.paid_attempts + tally.from_batch  # a batch request is billed once
            answered = (f"paid {paid} ({tally.paid_calls + tally.from_batch} answered{extra}), "
                        f"journal {tally.from_journal}, cache {tally.from_cache}")
        parts = [
            f"{self.label} {self.done}/{self.total} {percent}",
            f"{rate:.1f}/s",
            f"ETA {eta}",
            f"in flight {tally.in_flight}, queued {max(self.total - tally.iterations_started, 0)}",
            answered,
            f"tokens {tally.input_tokens:,} in, {tally.output_tokens:,} out",
        ]
        if self.failed:
            parts.append(f"{self.failed} failed")
        return " | ".join(parts)

    def _outstanding(self) -> bool:
        return self.done < self.total or self.ledger.tally().in_flight > 0

    def _run_timer(self) -> None:
        wait = min(FIRST_LINE_S, self.interval_s)
        while not self._stop.wait(wait):
            try:
                self.tick()
            except (OSError, ValueError):  # the stream went away (closed, broken pipe): a progress
                return                     # line is never worth a traceback from a background thread
            wait = self.interval_s

    def _draw(self) -> None:
        text = self.line()
        pad = max(self._width - len(text), 0)
        self._width = len(text)
        self.stream.write("\r" + text + " " * pad)
        self.stream.flush()


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"
