"""The progress line of a recording run, on stderr.

``recording 37/120 31% | 4.2/s | ETA 0:20 | paid 30, journal 2, cache 5 | tokens 12,345 in, 3,210 out``

On a terminal the line is redrawn in place (``\\r``); in a CI log a line is
printed every :attr:`Progress.interval_s` seconds and once at the end, so the log
stays short. Standard library only.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TextIO

from harness.results import IterationResult


class Progress:
    """Counts finished iterations and the tokens their paid calls spent."""

    def __init__(
        self,
        stream: TextIO,
        *,
        label: str = "recording",
        tty: bool | None = None,
        interval_s: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stream = stream
        self.label = label
        self.tty = stream.isatty() if tty is None else tty
        self.interval_s = interval_s
        self._clock = clock
        self._lock = threading.Lock()
        self.total = 0
        self.done = 0
        self.paid = 0
        self.from_journal = 0
        self.from_cache = 0
        self.failed = 0
        self.input_tokens = 0
        self.output_tokens = 0
        self._started = clock()
        self._last_print = self._started
        self._width = 0

    def start(self, total: int) -> None:
        """Begin counting ``total`` iterations."""
        with self._lock:
            self.total = total
            self._started = self._last_print = self._clock()
            if self.tty:
                self._draw()

    def advance(self, result: IterationResult) -> None:
        """Count one finished iteration and the calls it made."""
        with self._lock:
            self.done += 1
            self.failed += result.status == "error"
            for call in result.calls:
                if call.source in ("provider", "batch"):
                    self.paid += 1
                    self.input_tokens += call.usage.input_tokens
                    self.output_tokens += call.usage.output_tokens
                elif call.source == "journal":
                    self.from_journal += 1
                else:
                    self.from_cache += 1
            now = self._clock()
            if self.tty:
                self._draw()
            elif now - self._last_print >= self.interval_s:
                self._last_print = now
                self.stream.write(self.line() + "\n")
                self.stream.flush()

    def close(self) -> None:
        """Print the final line."""
        with self._lock:
            if self.tty:
                self._draw()
                self.stream.write("\n")
            else:
                self.stream.write(self.line() + "\n")
            self.stream.flush()

    def line(self) -> str:
        """The progress line as it stands."""
        elapsed = max(self._clock() - self._started, 1e-9)
        rate = self.done / elapsed
        percent = f"{self.done / self.total:.0%}" if self.total else "-"
        remaining = self.total - self.done
        eta = _duration(remaining / rate) if rate > 0 and remaining else ("0:00" if not remaining else "?")
        parts = [
            f"{self.label} {self.done}/{self.total} {percent}",
            f"{rate:.1f}/s",
            f"ETA {eta}",
            f"paid {self.paid}, journal {self.from_journal}, cache {self.from_cache}",
            f"tokens {self.input_tokens:,} in, {self.output_tokens:,} out",
        ]
        if self.failed:
            parts.append(f"{self.failed} failed")
        return " | ".join(parts)

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
