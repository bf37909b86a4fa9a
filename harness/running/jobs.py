"""An offline run on several cores (``harness run --jobs N``): forked after the load, one summary.

Replay is CPU work in one interpreter, so one process uses one core; a CI runner has two or
more. ``--jobs N`` loads and validates the datasets once (on two cores: a forked helper loads
half of the scenario files and another walks the cache meanwhile, :mod:`harness.core.forked`),
then forks N jobs that inherit them (copy-on-write: nothing is parsed or pickled again). The
selected scenarios are dealt to the jobs by :func:`harness.running.shards.split` (a scenario's
iterations stay in one job: they share a cache folder and a counterexample check), each job
replays its scenarios as the serial run would and writes its records to
``records-job<K>.jsonl`` of the same run folder (the layout pytest-xdist workers use), and
ships the ``summary`` projection of each record back through a pipe. The parent decodes them
as they arrive and, once every job has ended, folds them in plan order, exactly as the
pytest-xdist controller does, and writes ``run.json``: the terminal, ``run.json`` and every
report read the same values as a serial run.

Only offline runs fork: a recording run waits on the network, and its ``--concurrency``
already overlaps the calls. Where there is no ``os.fork`` (Windows) the run is serial.

A job that dies (a signal, an error in the harness itself) fails the run with what it
said: the parent re-raises a harness error a job raised (same exit code), and otherwise
names the job and quotes its traceback. A record already written stays on disk.
"""

from __future__ import annotations

import gc
import os
import pickle
import selectors
import signal
import struct
import sys
import traceback
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from harness.core.declared import Scenario
from harness.core.errors import HarnessError
from harness.results.record import IterationResult
from harness.results.runsummary import RunSummary
from harness.running.shards import split


class Session(Protocol):
    """What a run of jobs needs of :class:`harness.running.session.EvalSession` (named here, not
    imported: the session's module imports this one)."""

    scenarios: list[Scenario]
    summary: RunSummary

    def iterations_of(self, scenario: Scenario) -> int: ...
    def execute(self, scenario: Scenario, iteration: int) -> IterationResult: ...
    def write_records_as(self, worker: str) -> None: ...
    def close_records(self) -> None: ...

#: A frame on a job's pipe: its length, then a pickle of ("record", summary) or ("error", ...).
_HEADER = struct.Struct("!I")
#: Bytes a job buffers before it writes to its pipe (the parent drains every pipe as it fills).
_BUFFER = 1 << 16


class JobFailed(HarnessError):
    """A forked job of ``--jobs`` died or raised an error that is not a harness error."""

    code = "eval-job-failed"
    exit_code = 2


def can_fork() -> bool:
    """Whether this platform forks (POSIX); elsewhere ``--jobs`` runs serially."""
    return hasattr(os, "fork")


def deal(scenarios: Sequence[Scenario], jobs: int,
         iterations_of: Callable[[Scenario], int]) -> list[list[Scenario]]:
    """The scenarios of each job, each list in plan order; no job gets an empty list."""
    shard_of = split([(s.id, iterations_of(s)) for s in scenarios], jobs)
    dealt: list[list[Scenario]] = [[] for _ in range(jobs)]
    for scenario, job in zip(scenarios, shard_of, strict=True):
        dealt[job].append(scenario)
    return [share for share in dealt if share]


@dataclass
class _Job:
    number: int
    pid: int
    fd: int
    data: bytearray = field(default_factory=bytearray)
    """Bytes read from the pipe and not yet decoded (a frame still arriving)."""
    results: list[tuple[IterationResult, dict[str, Any]]] = field(default_factory=list)
    """Each iteration it shipped, decoded, with the summary record it was read from."""
    error: tuple[Any, ...] | None = None
    """The error it sent (None: it sent none)."""


def run_jobs(session: Session, jobs: int,
             on_result: Callable[[IterationResult], None] | None = None) -> None:
    """Replay the session's scenarios in ``jobs`` forked processes; fold every result into
    ``session.summary`` in plan order (``on_result`` sees each, in that order)."""
    shares = deal(session.scenarios, jobs, session.iterations_of)
    by_id = {s.id: s for s in session.scenarios}
    sys.stdout.flush()  # nothing buffered before the fork is printed twice
    sys.stderr.flush()
    # The loaded dataset is shared copy-on-write; a collection in a job would walk (and write
    # the headers of) every inherited object, copying their pages: frozen, it never does.
    gc.freeze()
    started: list[_Job] = []
    try:
        for number, share in enumerate(shares, start=1):
            started.append(_fork(session, number, share))
        _drain(started, by_id)
        problems = _reap(started)
    except BaseException:
        _kill(started)
        raise
    gc.unfreeze()
    failures = [(job, job.error if job.error is not None else problems[job.number])
                for job in started if job.error is not None or job.number in problems]
    if failures:
        _raise(failures)
    order = {s.id: n for n, s in enumerate(session.scenarios)}
    results = [shipped for job in started for shipped in job.results]
    results.sort(key=lambda shipped: (order[shipped[0].scenario.id], shipped[0].iteration))
    for result, record in results:
        session.summary.add(result, record)  # the summary record it was read from
        if on_result is not None:
            on_result(result)


def _fork(session: Session, number: int, share: Iterable[Scenario]) -> _Job:
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the job: never returns
        os.close(read_end)
        _job_main(session, number, share, write_end)
    os.close(write_end)
    os.set_blocking(read_end, False)
    return _Job(number, pid, read_end)


def _job_main(session: Session, number: int, share: Iterable[Scenario], fd: int) -> None:
    """Run one job's iterations, ship each summary record, exit without Python's teardown."""
    code = 0
    pipe = os.fdopen(fd, "wb", buffering=_BUFFER)
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C: the parent reports it
        session.write_records_as(f"job{number}")
        for scenario in share:
            for iteration in range(session.iterations_of(scenario)):
                result = session.execute(scenario, iteration)
                _send(pipe, ("record", result.to_json("summary")))
        session.close_records()
    except BaseException as exc:  # noqa: BLE001 - every failure is reported to the parent
        code = 1
        text = "".join(traceback.format_exception(exc))
        try:
            _send(pipe, ("error", exc, text))
        except Exception:  # noqa: BLE001 - an exception that does not pickle
            _send(pipe, ("error", None, text))
    finally:
        try:
            pipe.flush()
            pipe.close()
        finally:
            os._exit(code)


def _send(pipe: Any, message: tuple[Any, ...]) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    pipe.write(_HEADER.pack(len(data)))
    pipe.write(data)


def _drain(jobs: Sequence[_Job], by_id: Mapping[str, Scenario]) -> None:
    """Read every job's pipe to its end, each as it fills (a full pipe would stall its job),
    decoding its frames as they arrive: the parent waits on the jobs anyway, so the results
    are ready to fold when the last job ends."""
    with selectors.DefaultSelector() as selector:
        for job in jobs:
            selector.register(job.fd, selectors.EVENT_READ, job)
        open_pipes = len(jobs)
        while open_pipes:
            for key, _ in selector.select():
                job = key.data
                chunk = os.read(job.fd, _BUFFER * 4)
                if chunk:
                    job.data += chunk
                    _decode(job, by_id)
                else:
                    selector.unregister(job.fd)
                    os.close(job.fd)
                    job.fd = -1
                    open_pipes -= 1


def _decode(job: _Job, by_id: Mapping[str, Scenario]) -> None:
    """Decode every whole frame of ``job.data`` and keep the rest (a frame cut short by the
    job's death stays undecoded: its exit status says what happened)."""
    view, at = memoryview(job.data), 0
    while at + _HEADER.size <= len(view):
        (size,) = _HEADER.unpack_from(view, at)
        if at + _HEADER.size + size > len(view):
            break
        message = pickle.loads(view[at + _HEADER.size: at + _HEADER.size + size])
        at += _HEADER.size + size
        if message[0] == "record":
            record = message[1]
            job.results.append((IterationResult.from_json(record, by_id[record["scenario"]]), record))
        else:
            job.error = message
    view.release()
    del job.data[:at]


def _reap(jobs: Sequence[_Job]) -> dict[int, str]:
    """Wait for every job; what went wrong, by job number, for each that did not exit 0."""
    problems = {}
    for job in jobs:
        _, status = os.waitpid(job.pid, 0)
        job.pid = 0
        if os.WIFSIGNALED(status):
            name = signal.Signals(os.WTERMSIG(status)).name
            problems[job.number] = f"job {job.number} was killed by {name}"
        elif os.WEXITSTATUS(status) != 0:
            problems[job.number] = f"job {job.number} exited {os.WEXITSTATUS(status)}"
    return problems


def _raise(problems: list[tuple[_Job, Any]]) -> None:
    """A harness error a job raised, as itself (its exit code); anything else as JobFailed."""
    for _, problem in problems:
        if isinstance(problem, tuple) and isinstance(problem[1], HarnessError):
            raise problem[1]
    lines = []
    for job, problem in problems:
        if isinstance(problem, tuple):
            lines.append(f"job {job.number} failed:\n{problem[2].rstrip()}")
        else:
            lines.append(problem)
    raise JobFailed("a job of --jobs failed (its records so far are in the run folder):\n"
                    + "\n".join(lines))


def _kill(jobs: Sequence[_Job]) -> None:
    """After an interrupt or an error in the parent: stop every job still running, reap it."""
    for job in jobs:
        if job.fd >= 0:
            os.close(job.fd)
            job.fd = -1
        if job.pid:
            try:
                os.kill(job.pid, signal.SIGTERM)
                os.waitpid(job.pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
            job.pid = 0
