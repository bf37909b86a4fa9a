"""The catalogue of every error code the harness prints, in one place a reader can see.

A code (``eval-cache-miss``) is what CI logs, scripts and people search for; the
message that carries it is written where the failure is found (it names the
file, the field and the value) and may be reworded, the code never is. This
module holds, for every code, what a person needs when CI prints one: the exit
status of the command, what the code means, the usual fix, and where it comes
from. ``docs/errors.md`` is generated from it (:func:`render_markdown`, or
``python -m harness.core.codes --write``) and a test keeps the two equal, so the page
cannot drift from the code; another test walks every class of the package so
no code can be added without its entry.

Plain data, importing only the re-record command builder: every module may read it, it
depends on none (the error classes keep their own ``code`` attribute, which
tests and users match on; ``raised_by`` names them as dotted paths, which the
tests resolve).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import harness
from harness.core.rerecord import rerecord_command  # the one builder of re-record commands

__all__ = ["CATALOGUE", "DOCS_PAGE", "ErrorCode", "by_code", "main", "render_markdown"]

#: The generated page, relative to the repository root.
DOCS_PAGE = Path("docs") / "errors.md"


@dataclass(frozen=True)
class ErrorCode:
    """One code: what it means, how to fix it, and what prints it.

    ``exit_status`` is the status of the command that stops on it (``None``: the
    line is a warning and the command keeps its own status). ``raised_by`` names
    the classes whose ``code`` it is (``harness.core.errors.CacheMiss``), or, for a code
    printed in a message without a class of its own, the functions that print it.
    """

    code: str
    exit_status: int | None
    meaning: str
    fix: str
    raised_by: tuple[str, ...]


def _e(code: str, exit_status: int | None, meaning: str, fix: str, *raised_by: str) -> ErrorCode:
    return ErrorCode(code, exit_status, meaning, fix, raised_by)


_RECORD = rerecord_command("ID", fix="missing")
_REFRESH = rerecord_command("ID")
_RECORD_ALL = rerecord_command(fix="missing")
_REFRESH_ALL = rerecord_command()

#: Every code, grouped by the stage that finds it (loading, cache, recording, reports, output).
CATALOGUE: tuple[ErrorCode, ...] = (
    # -- the project, its configuration and its datasets: nothing ran (exit 2)
    _e("eval-config-invalid", 2,
       "`[tool.harness]` in pyproject.toml, a command-line option or an environment variable "
       "(`HARNESS_CLOCK`) is invalid, so the command did not start.",
       "Correct the setting the message names (it gives the allowed values); the settings are "
       "in `python -m harness docs readme`, section Configuration.",
       "harness.core.errors.ConfigError"),
    _e("eval-judge-entry-point", 2,
       "An installed `offline_evals.judges` entry point does not load or gives no evaluator, so the "
       "datasets were not loaded (every broken entry point is named).",
       "Fix or uninstall the package the message names, or correct its entry point so it gives an "
       "Evaluator.",
       "harness.judges.registry.JudgeRegistryError"),
    _e("eval-options-invalid", 2,
       "A run option is out of range or means nothing together with the others; nothing was "
       "loaded.",
       "Correct each option the message lists and run again.",
       "harness.running.options.OptionsInvalid"),
    _e("eval-project-not-found", 2,
       "No harness project (no `[tool.harness]`, no datasets folder) from the current folder "
       "upward.",
       "Run the command inside the project or pass `--project PATH`; to adopt the harness, run "
       "`python -m harness init` at the repository's root.",
       "harness.core.errors.ProjectNotFound"),
    _e("eval-dataset-invalid", 2,
       "Files under `eval-datasets/` failed validation; the message lists every problem of every "
       "file at once and nothing was called.",
       "Fix each listed `file: field` as its line says; the formats are in "
       "`python -m harness docs formats`.",
       "harness.core.errors.DatasetError"),
    _e("eval-symlink", 2,
       "A symbolic link under `eval-datasets/` or `eval-cache/`: a fresh clone would not "
       "reproduce it.",
       "Replace each listed link with the real file or folder (git rm the link, copy the target "
       "in).",
       "harness.core.errors.SymlinkError"),
    _e("eval-selection-empty", 2,
       "A filter (`--agent`, `--tenant`, `--type`, `--scenario`) selects nothing: a typo, not a "
       "green run of zero scenarios.",
       "Correct the filter; the message lists the values that exist.",
       "harness.core.errors.SelectionEmpty"),
    _e("eval-missing-dependency", 2,
       "The Python running the harness lacks one of its runtime dependencies.",
       "Install the harness with its dependencies: `pip install offline-evals` (in a checkout: "
       "`pip install -e .`).",
       "harness.frontends.cli.main"),
    # -- the committed cache, replayed offline (the run's verdict: exit 1)
    _e("eval-cache-miss", 1,
       "No recorded entry for a request of a scenario iteration; an offline run never calls a "
       "provider, so the iteration fails. The message names the nearest recorded entry and what "
       "changed since.",
       f"Re-record with the command printed after `re-record:` (`{_RECORD}`, add `--scripted` "
       "for an agent with a script) and commit `eval-cache/`.",
       "harness.core.errors.CacheMiss", "harness.running.plan._WouldCall"),
    _e("eval-cache-expired", 1,
       "The entry exists but its TTL has passed; it is reported and kept, never deleted.",
       f"Re-record the scenario (`{_REFRESH}`, the command printed) and commit `eval-cache/`.",
       "harness.core.errors.CacheExpired"),
    _e("eval-cache-corrupt", 1,
       "The entry exists but cannot be trusted: unreadable, torn, or recorded for another key.",
       f"Re-record the scenario (`{_REFRESH}`); `python -m harness check` lists every such entry.",
       "harness.core.errors.CacheCorrupt"),
    _e("eval-cache-error", 1,
       "The base of the cache lookup failures above; it is never raised under its own code.",
       "Read the code the message carries (`eval-cache-miss`, `-expired` or `-corrupt`).",
       "harness.core.errors.CacheError"),
    _e("eval-cache-missing-stamp", 1,
       "`eval-cache/.eval-cache.json` is missing: the cache was never recorded, or its stamp was "
       "deleted.",
       f"Write it with `{_RECORD_ALL}` (it records only what is missing; "
       "add `--scripted` for agents with a script).",
       "harness.cache.stamp.check_stamp"),
    _e("eval-cache-stale-pin", 1,
       "The cache was recorded in another cache format: every key changed, nothing replays.",
       f"Re-record every scenario: `{_REFRESH_ALL}` (add `--scripted` for "
       "agents with a script).",
       "harness.cache.stamp.check_stamp"),
    _e("eval-cache-stamp-invalid", 1,
       "The stamp `eval-cache/.eval-cache.json` cannot be read, or its `format_version` is not "
       "an integer.",
       "Restore the stamp from git, or re-record with the command printed.",
       "harness.cache.stamp.check_stamp"),
    _e("eval-cache-newer-format", 2,
       "A recording run over a cache whose stamp names a newer cache format than this harness's; "
       "recording would mix formats in one tree.",
       "Upgrade the harness (`pip install -U offline-evals`) and record again.",
       "harness.core.errors.StampNewer"),
    _e("eval-rerecord-file-invalid", 2,
       "`rerecord-failed.json` cannot be read, so a run cannot tell which answers are stale.",
       "Restore it from git, or delete it and re-record the scenarios it named.",
       "harness.cache.rerecords.RerecordFileInvalid"),
    _e("eval-provenance-required", 1,
       "The agent sets `require_provenance: provider` and an answer of the iteration was not "
       "recorded from its provider (scripted, unknown origin, or its last refresh failed).",
       f"Re-record against the provider with the command printed (`{_REFRESH}`).",
       "harness.running.provenance_gate.gate"),
    # -- running an agent and judging its answer
    _e("eval-agent-command-failed", 1,
       "A command agent exited non-zero, timed out or could not start; the iteration is an "
       "error and the tail of its stderr is in the message and the record.",
       "Run the agent's command by hand on the scenario's input; raise `command_timeout_s` in "
       "`agent.yaml` if it is only slow.",
       "harness.wire.command.AgentCommandFailed"),
    _e("eval-assertion-crashed", 1,
       "A `check` finding: the check of an assertion raised on a recorded answer instead of "
       "judging it; a crash is not a verdict, so the iteration is an error.",
       "Fix the assertion (or the code its kind runs); `python -m harness run` shows the same "
       "verdict.",
       "harness.check.unused.check"),
    _e("eval-mutants-below-floor", 1,
       "With `--mutants --fail-under RATIO`: an agent's mutant strength is under the ratio.",
       "Kill the listed survivors with assertions, or mark the ones that are right answers as "
       "`equivalent_mutants` with a reason.",
       "harness.mutants.report.fail_under_problem"),
    # -- recording against providers (paid runs)
    _e("eval-credentials-missing", 2,
       "A recording run needs a provider API key that is set nowhere; nothing was called.",
       "Set the variable the message names in the environment or in `.env.evals` (a local "
       "server accepts any value, such as `local`), or record with `--scripted`.",
       "harness.core.errors.CredentialsMissing"),
    _e("eval-plan-over-budget", 2,
       "The run may need more calls than `--max-calls`; nothing was called (a run is never cut "
       "short).",
       "Narrow the selection (`--agent`, `--tenant`, `--type`, `--scenario`) or raise "
       "`--max-calls`.",
       "harness.running.plan.PlanOverBudget"),
    _e("eval-max-calls-reached", 1,
       "The run has sent `--max-calls` calls, and a call the plan could not count (a Python "
       "agent's after its first) was refused before it was sent; the iteration is an error, and "
       "every answer paid for is kept.",
       "Record the rest with `--record-missing` and a higher `--max-calls` (each answer already "
       "paid for is reused), or look at why the agent calls the model so often.",
       "harness.refresh.budget.CallBudgetSpent"),
    _e("eval-provider-error", 1,
       "A provider call failed (network, HTTP status, malformed answer, a base URL that is not "
       "http(s)); nothing was written to the cache for it.",
       "Read the status and the excerpt in the message; check the agent's endpoint, model id and "
       "credentials, then record again (`--resume` reuses what was already paid for).",
       "harness.core.errors.ProviderError", "harness.providers.retries.CallFailed"),
    _e("eval-provider-redirect", 1,
       "The provider answered with a redirect, which is refused: following it would send the "
       "API key to another host.",
       "Set the agent's `endpoint.base_url` (or the base URL variable) to the final URL.",
       "harness.providers.http.Transport._status_problem"),
    _e("eval-script-missing", 1,
       "The agent's `script.yaml` has no usable answer for a call of a scripted run.",
       "Add an answer for `<tenant>/<scenario>` to the agent's `script.yaml`: a mapping with "
       "`content` or `json`, one per call of the iteration.",
       "harness.core.errors.ScriptError"),
    _e("eval-batch-failed", 1,
       "A batch could not be created, polled or downloaded; what is journaled stays journaled.",
       "Re-run with `--resume` to poll or download the journaled batch without paying twice; if "
       "the server has no batch API, record without `--batch`.",
       "harness.running.batch_recorder.BatchFailed"),
    _e("eval-batch-pending", 2,
       "An earlier run left batches at the provider, already paid for.",
       "Re-run with `--resume` to collect their answers, or delete the journal folder the "
       "message names to pay for the calls again.",
       "harness.running.batch.BatchPending"),
    _e("eval-refresh-state-unreadable", 2,
       "The journal or the rate-limit folder cannot be read safely; nothing was called or "
       "written.",
       "Delete the folder the message names (it says what is lost with it).",
       "harness.refresh.jsondisk.RefreshStateError"),
    _e("eval-interrupted", 130,
       "A recording run was interrupted (Ctrl-C); every entry written is complete and kept, "
       "every answer paid for is journaled.",
       "Re-run the same command with `--resume` to reuse what was paid for.",
       "harness.refresh.interrupt.RunInterrupted"),
    # -- results, reports and output
    _e("eval-write-failed", 2,
       "A file of the run cannot be written (a full disk, a read-only tree, no permission); the "
       "run stops at once.",
       "Free space or fix the permissions of the path the message names, then run again.",
       "harness.core.errors.WriteFailed"),
    _e("eval-report-run-unknown", 2,
       "No finished run matches the id given to `report` or `compare`, or there is no run yet.",
       "Give one of the run ids the message lists, or run `python -m harness run` first.",
       "harness.report.load.RunNotFound"),
    _e("eval-report-record-unreadable", 2,
       "A line of a run's records.jsonl is JSON but no iteration record (edited by hand, or "
       "written by another tool), so `report`, `compare` or a merge stopped at it.",
       "Restore the run folder from its artifact, or delete the run; the message names the file and "
       "the line.",
       "harness.report.load.RecordUnreadable"),
    _e("eval-merge-refused", 2,
       "The runs given to `report --merge` are not exactly the N shards of one selection.",
       "Give every shard run of one selection once (`python -m harness docs ci`, section "
       "Sharding); download a shard's results again when its run.json is unreadable.",
       "harness.report.merge.MergeRefused"),
    _e("eval-job-failed", 2,
       "A forked job of `run --jobs N` died (a signal, the OOM killer) or the harness failed "
       "inside it; the run writes no run.json, the records the jobs wrote stay in the run folder.",
       "Read the job's traceback or signal in the message; re-run without --jobs to see the "
       "failure in one process, and report a traceback of the harness itself as a bug.",
       "harness.running.jobs.JobFailed"),
    _e("eval-output-failed", None,
       "Standard output is closed or cannot be written; the rest of the output is dropped, "
       "records and reports are written as usual.",
       "Send standard output to a file or device with room (not `>&-`; use `/dev/null`).",
       "harness.frontends.output.output_failed", "harness.frontends.output.ensure_stdout"),
    _e("eval-error", 1,
       "The base class of every harness error; it is never raised under its own code.",
       "Read the code the message carries; a bare `eval-error` is a bug to report.",
       "harness.core.errors.HarnessError"),
)


def by_code() -> dict[str, ErrorCode]:
    """Each entry by its code."""
    return {entry.code: entry for entry in CATALOGUE}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown() -> str:
    """The text of ``docs/errors.md``: one table row per code, in catalogue order."""
    lines = [
        "# Error codes",
        "",
        "<!-- Generated from harness/core/codes.py by "
        "`python -m harness.core.codes --write`; do not edit. -->",
        "",
        "Every error the harness prints on purpose starts with a stable code "
        "(`eval-cache-miss: ...`). The message around it names the file, the field and the "
        "value and may be reworded between versions; the code is not. Search this page for the "
        "code CI printed. The exit status is the command's (`run`, `check`, `report`...): `2` "
        "when it refused to start (configuration, datasets, options), `1` when the evaluation "
        "failed, `130` when a recording was interrupted; \"own\" marks a warning that leaves "
        "the command's status as it is. This page is also `python -m harness docs errors`.",
        "",
        f"{len(CATALOGUE)} codes.",
        "",
        "| Code | Exit | What it means | Usual fix | Raised by |",
        "|---|---|---|---|---|",
    ]
    for entry in CATALOGUE:
        status = "own" if entry.exit_status is None else str(entry.exit_status)
        raised = ", ".join(f"`{name}`" for name in entry.raised_by)
        lines.append(f"| `{entry.code}` | {status} | {_cell(entry.meaning)} | {_cell(entry.fix)} "
                     f"| {raised} |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m harness.core.codes``: print the page; ``--write [ROOT]`` writes ``ROOT/docs/errors.md``."""
    args = list(sys.argv[1:] if argv is None else argv)
    text = render_markdown()
    if args[:1] != ["--write"]:
        sys.stdout.write(text)
        return 0
    root = Path(args[1]) if len(args) > 1 else Path(harness.__file__).resolve().parent.parent
    (root / DOCS_PAGE).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
