"""Mutation probe: break the code on purpose, one way at a time, and prove a test notices.

    python tests/mutations/run_probe.py [--only NAME ...] [--list] [--jobs N]

Each mutation is one exact text replacement in one file (the probe refuses to
run if the original text is not found exactly once, so it cannot silently stop
mutating after a refactor). For each, the probe copies the tree (``harness/``,
``tests/``, ``pyproject.toml``) to a temporary folder, applies the mutation
there (the worktree is never touched), and runs the tests that claim to guard
it with that copy first on ``sys.path``. A mutation is KILLED when those tests
fail, SURVIVED when they pass. An unmutated copy runs every selected mutation's
tests once, in one pytest process, beside the mutants: they must pass, or the
probe's verdicts would mean nothing (then no verdict is printed and it exits 1).

Each pytest run is a child forked from the probe, which has already imported
pytest and the third-party libraries (:data:`PRELOAD`) but nothing of the
checkout, so a run skips the half second of imports every fresh interpreter
pays and still imports ``harness`` and the tests from its own copy.

Not collected by the default ``pytest`` run (it runs pytest in child processes,
about half a minute on two cores); CI or a reviewer runs it directly. Exit code 0 when
every mutation is killed, 1 otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Mutation:
    name: str
    what: str
    file: str
    original: str
    mutated: str
    tests: tuple[str, ...]


MUTATIONS = (
    Mutation("key-prefix-only", "compare only the 16-character prefix of the key, not the full key",
             "harness/cache/store.py", "stored is not None and stored != key and",
             "stored is not None and stored[:16] != key[:16] and",
             ("tests/test_store.py::test_a_forged_same_prefix_key_reads_as_a_miss_never_the_wrong_answer",)),
    Mutation("write-in-place", "write an entry straight into its final folder (no temp folder, no rename)",
             "harness/documents/atomic.py",
             'temp = f"{parent}/{TEMP_PREFIX}{name}-{secrets.token_hex(3)}"\n        os.mkdir(temp)',
             "temp = target\n        os.makedirs(temp, exist_ok=True)",
             ("tests/test_atomic_write.py",)),
    Mutation("write-in-place-no-rename", "copy the temporary folder into place instead of renaming it",
             "harness/documents/atomic.py", "            _replace_folder(temp, target, hook)\n",
             "            shutil.copytree(temp, target, dirs_exist_ok=True)\n"
             "            hook('renamed', final)\n",
             ("tests/test_atomic_write.py::test_the_final_folder_is_the_temporary_folder_renamed_not_a_copy",)),
    Mutation("no-configured-key-redaction", "stop redacting the configured key from provider messages",
             "harness/providers/redaction.py", "text = text.replace(secret, REDACTED)", "text = text",
             ("tests/test_guarantees.py::test_a_configured_key_of_any_shape_is_redacted_from_provider_errors",)),
    Mutation("scrub-skipped-behind-escapes", "an answer spelling a key with \\u escapes is not scrubbed",
             "harness/providers/redaction.py", '    if b"\\\\u" in body or b"sk-" in body:\n',
             '    if b"sk-" in body:\n',
             ("tests/test_providers_http.py::test_an_answer_is_scrubbed_whatever_escapes_spell_the_key",)),
    Mutation("ttl-strict", "an entry expires only AFTER its expiry instant (< instead of <=)",
             "harness/cache/store.py", "if found.expires <= now:", "if found.expires < now:",
             ("tests/test_guarantees.py::test_an_entry_is_expired_at_its_expiry_instant_and_valid_one_second_before",)),
    Mutation("provider-answer-returned",
             "the caching client returns the provider's object, not the entry read back",
             "harness/cache/store.py", "        return response_from_json(load_json(payload))\n",
             "        return response\n",
             ("tests/test_guarantees.py::test_a_recording_call_returns_the_entry_read_back_not_the_providers_object",)),
    Mutation("iterations-budget-unchecked", "--iterations N is not checked against the path budget",
             "harness/running/selection.py", "if len(worst) > config.path_budget:", "if False:",
             ("tests/test_guarantees.py::test_iterations_that_would_overflow_the_path_budget_are_refused_before_any_call",)),
    Mutation("replay-first-call-only", "unused counts only the first call of an iteration as read "
             "(the old key derivation)",
             "harness/running/replay.py", "keys = frozenset(c.key for c in client.calls if c.cache_hit)",
             "keys = frozenset(c.key for c in client.calls[:1] if c.cache_hit)",
             ("tests/test_unused_replay.py::test_python_agent_second_call_is_referenced_and_survives_prune",)),
    Mutation("classify-failed-iterations", "entries of an iteration that does not replay are classified",
             "harness/check/unused.py", "if (entry.scenario_id, entry.iteration) in failed:", "if False:",
             ("tests/test_unused_replay.py::test_a_judge_miss_keeps_the_iteration_unclassified",
              "tests/test_unused_replay.py::test_force_prunes_the_rest_and_keeps_every_entry_of_an_iteration_that_does_not_replay")),
    Mutation("prune-never-refuses", "prune removes while a selected scenario does not replay",
             "harness/check/prune.py", "if usage.failures and not force:", "if False:",
             ("tests/test_unused_replay.py::test_force_prunes_the_rest_and_keeps_every_entry_of_an_iteration_that_does_not_replay",
              "tests/test_unused_replay.py::test_judge_entries_of_a_corrupt_agent_entry_are_never_pruned")),
    Mutation("prune-sweeps-parked-entries", "prune deletes an old entry parked by a killed replacement",
             "harness/check/prune.py", "if final is not None and temp.is_dir()", "if False and temp.is_dir()",
             ("tests/test_prune_parked.py::test_prune_restores_an_entry_parked_by_a_killed_replacement",)),
    Mutation("hint-not-glob-escaped", "the --scenario value of a hint is not glob-escaped",
             "harness/core/rerecord.py", "return glob.escape(scenario_id)", "return scenario_id",
             ("tests/test_unused_replay.py::test_a_printed_miss_hint_works_verbatim",)),
    Mutation("hint-not-quoted", "the re-record command is not shell-quoted",
             "harness/core/rerecord.py", "return shlex.join(words)", 'return " ".join(words)',
             ("tests/test_unused_replay.py::test_a_printed_miss_hint_works_verbatim",
              "tests/test_unused_replay.py::test_an_expired_hint_works_verbatim")),
    Mutation("naive-timestamps-accepted", "a timestamp without a zone is accepted",
             "harness/cache/verify.py", "if moment.tzinfo is None:", "if False:",
             ("tests/test_entry_hostile.py::test_a_hostile_entry_is_the_same_named_reason_in_run_and_check",)),
    Mutation("symlinks-allowed-in-run", "run does not refuse symbolic links in the cache",
             "harness/running/selection.py",
             "refuse_symlinks(config.cache, config.relative(config.cache), config.relative,"
             "  # not in a clone\n                    cache_links)", "None",
             ("tests/test_entry_hostile.py::test_a_committed_symlink_in_the_cache_is_refused_by_run_and_check",)),
    # issue 19, item 13: survivors of every earlier test run, each now killed by one test
    Mutation("request-context-dropped", "a scenario's context is left out of the request",
             "harness/requests/request.py", "    if scenario.context is not None:\n", "    if False:\n",
             ("tests/test_behaviours_pinned.py::test_a_scenarios_context_reaches_the_request_as_a_system_message",)),
    Mutation("request-name-dropped", "a message's name is left out of the request",
             "harness/requests/request.py", 'out["name"] = message["name"]', "pass",
             ("tests/test_behaviours_pinned.py::test_a_messages_name_is_kept_in_the_request",)),
    Mutation("agent-params-dropped", "agent-level params are not merged",
             "harness/requests/request.py", "params.update(agent.params)", "pass",
             ("tests/test_behaviours_pinned.py::test_agent_tenant_and_scenario_params_all_reach_the_request_in_precedence",)),
    Mutation("scenario-params-dropped", "scenario-level params are not merged",
             "harness/requests/request.py", "params.update(scenario.params)", "pass",
             ("tests/test_behaviours_pinned.py::test_agent_tenant_and_scenario_params_all_reach_the_request_in_precedence",)),
    Mutation("counterexample-first-step", "a multi-step counterexample is judged on its first step",
             "harness/assertions/counterexamples.py", "output = parse_output(agent, steps[-1])",
             "output = parse_output(agent, steps[0])",
             ("tests/test_behaviours_pinned.py::test_a_multi_step_counterexample_is_judged_on_its_last_answer",)),
    Mutation("strength-per-iteration", "assertion strength counts every iteration, not each scenario",
             "harness/results/totals.py", "if found and scenario_id != self._last_counted:", "if found:",
             ("tests/test_behaviours_pinned.py::test_assertion_strength_counts_each_scenario_once_whatever_its_iterations",)),
    Mutation("not-contains-skips-lists", "tool-argument strings inside a list are not checked",
             "harness/assertions/text.py", "    if isinstance(value, list):\n        return [leaf",
             "    if False:\n        return [leaf",
             ("tests/test_behaviours_pinned.py::test_not_contains_on_a_tool_argument_finds_the_string_inside_a_list",)),
    Mutation("payload-not-a-response-accepted",
             "an entry whose payload is JSON but not a response is accepted",
             "harness/cache/verify.py",
             'problems.append(f"contents.data does not decode as a response ({exc!r})")', "pass",
             ("tests/test_behaviours_pinned.py::test_a_payload_that_is_json_but_not_a_response_is_corrupt_for_run_and_check",)),
    Mutation("store-sync-noop", "the store's sync() makes nothing durable",
             "harness/cache/store.py", "        if not written:\n            return 0\n",
             "        if True:\n            return 0\n",
             ("tests/test_behaviours_pinned.py::test_sync_makes_every_written_entry_durable_once",)),
    Mutation("ttl-strict-in-a-run", "a run serves an entry at its exact expiry instant",
             "harness/cache/store.py", "if found.expires <= now:", "if found.expires < now:",
             ("tests/test_behaviours_pinned.py::test_an_entry_read_at_its_exact_expiry_instant_is_expired_in_a_run",)),
    # issue 20, item 1: the term-list screen may only skip work that would have found nothing
    Mutation("term-screen-drops-a-key", "the screen of a term list forgets its last term's key",
             "harness/assertions/terms.py", "    distinct = tuple(dict.fromkeys(needles))\n",
             "    distinct = tuple(dict.fromkeys(needles))[:-1]\n",
             ("tests/test_term_screen.py::test_the_screen_is_sound",
              "tests/test_term_screen.py::test_not_contains_gives_the_verdict_of_the_term_by_term_match")),
    # issue 19, item 12: a crash in a negative path passed the old outcome-only helper
    Mutation("json-equal-crashes-on-lengths", "json_equal raises on lists of different lengths",
             "harness/assertions/structured.py",
             "return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))",
             "return all(json_equal(x, y) for x, y in zip(a, b, strict=True))",
             ("tests/test_behaviours_pinned.py::test_json_path_equals_on_lists_of_different_lengths_is_a_real_reject",)),
    # issue 19, items 1, 2, 3, 7: the hardening itself
    Mutation("redirects-followed", "provider calls behind a proxy follow redirects again (the key leaves)",
             "harness/providers/opener.py",
             "return urllib.request.build_opener(_NoRedirects, _DeadlineHTTPHandler, _DeadlineHTTPSHandler)",
             "return urllib.request.build_opener(_DeadlineHTTPHandler, _DeadlineHTTPSHandler)",
             ("tests/test_provider_connections.py::test_behind_a_proxy_a_redirect_is_refused_not_followed",)),
    Mutation("no-call-deadline", "the deadline of an attempt is never armed",
             "harness/providers/pool.py",
             "            if conn.sock is not None:\n                deadline.arm(conn.sock)\n",
             "            if conn.sock is not None:\n                pass\n",
             ("tests/test_provider_bounds.py::test_a_dripping_server_is_cut_off_at_the_deadline",)),
    Mutation("remote-refs-allowed", "a non-local $ref passes the dataset loader",
             "harness/documents/schemarefs.py", "    refs = remote_refs(schema)\n    if refs:",
             "    refs = remote_refs(schema)\n    if False:",
             ("tests/test_hardening_schemas.py::test_a_remote_ref_in_the_output_schema_is_a_dataset_error_and_no_socket_opens",)),
    Mutation("hidden-files-skipped", "a scenario file named _wip.yaml is skipped in silence again",
             "harness/loading/discovery.py", "        if hidden:\n            problems.append(",
             "        if False:\n            problems.append(",
             ("tests/test_hardening_datasets.py::test_a_name_that_would_be_skipped_is_refused_in_run_and_check",)),
    Mutation("journal-line-not-written", "a paid answer is held in memory only, not written to its log",
             "harness/refresh/pending.py", "            _write_all(self._handle(), line)\n",
             "            self._handle()\n",
             ("tests/test_refresh_pending.py::test_a_process_killed_after_put_loses_no_answer",)),
    Mutation("pending-logs-not-read", "a lookup does not read the other processes' pending logs",
             "harness/refresh/journal.py",
             "            for path in other_logs(self._pending.folder, self._pending.name):\n"
             "                theirs",
             "            for path in []:\n                theirs",
             ("tests/test_refresh_pending.py::test_an_unfolded_answer_of_another_live_journal_is_found",
              "tests/test_refresh_journal.py::test_a_live_claim_makes_another_process_wait_then_reuse_the_answer")),
    Mutation("claim-locks-not-kept-apart-by-thread", "two threads of a process both take one byte-range "
             "claim (POSIX locks are the process's: only the table keeps them apart)",
             "harness/refresh/claims.py",
             "            if offset in self.held:\n                return False\n            try:",
             "            try:",
             ("tests/test_journal_claims.py::test_two_journals_of_one_process_exclude_each_other_and_closing_one_keeps_the_others_claims",)),
    Mutation("legacy-claim-file-ignored", "a lock claim ignores the claim file an older process holds",
             "harness/refresh/claims.py", "            if self._remove_dead(path):",
             "            if True:",
             ("tests/test_journal_claims.py::test_a_claim_file_of_another_host_waits_until_it_lapses",)),
    Mutation("row-names-never-reread", "a journal lookup trusts the row keys it read first, whatever was "
             "committed since", "harness/refresh/rownames.py",
             "        if self._data_version() != self._version:", "        if self._version is None:",
             ("tests/test_journal_rownames.py::test_an_answer_another_process_folded_after_a_lookup_is_found_in_the_database",)),
    Mutation("jobs-fold-in-arrival-order", "a run of --jobs folds its records job after job, not in "
             "plan order", "harness/running/jobs.py",
             "results.sort(key=lambda shipped: (order[shipped[0].scenario.id], shipped[0].iteration))",
             "results.sort(key=lambda shipped: 0)",
             ("tests/test_run_jobs.py::test_more_jobs_than_scenarios_and_a_selection",)),
    Mutation("jobs-dead-job-ignored", "a job killed by a signal is not a failure: the run sums what "
             "the others sent", "harness/running/jobs.py",
             "if os.WIFSIGNALED(status):", "if False:",
             ("tests/test_run_jobs.py::test_a_job_that_dies_fails_the_run_and_names_it",)),
)


def _copy_tree(target: Path) -> None:
    for name in ("harness", "tests"):
        shutil.copytree(ROOT / name, target / name,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache"))
    shutil.copy2(ROOT / "pyproject.toml", target / "pyproject.toml")


#: Third-party modules a probe's pytest run imports anyway, imported once in the probe's own
#: process so each forked run starts with them (never ``harness`` or the tests: those must come
#: from the mutated copy, so the probe imports nothing of this checkout).
PRELOAD = ("pytest", "_pytest.pytester", "hypothesis", "hypothesis.strategies", "yaml",
           "jsonschema", "httpx", "tabulate", "diskcache", "lxml.etree")


#: pytest warns that a plugin imported before it started cannot have its asserts rewritten:
#: hypothesis's own asserts, preloaded on purpose; a test module's asserts are rewritten as ever.
_PRELOADED_PLUGINS = tuple(
    f"ignore:Module already imported so cannot be rewritten; {name}:pytest.PytestAssertRewriteWarning"
    for name in ("hypothesis", "_hypothesis_globals"))


def _command(tests: tuple[str, ...]) -> list[str]:
    filters = [arg for name in _PRELOADED_PLUGINS for arg in ("-W", name)]
    return ["-q", "-x", "-p", "no:cacheprovider", "-p", "no:randomly", *filters, *tests]


def _environment(tree: Path) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("GITHUB_STEP_SUMMARY", None)
    return env


def _pytest_in_child(tree: Path, tests: tuple[str, ...], log: Path) -> None:
    """In a forked child: pytest on ``tests`` with ``tree`` first on the path; never returns.

    What a fresh ``python -m pytest`` in ``tree`` with ``PYTHONPATH=tree`` would see: the
    environment (inherited by every process a test starts), the working folder, no bytecode
    written, ``tree`` ahead of the installed checkout on ``sys.path``."""
    code = 70  # EX_SOFTWARE: the child crashed before pytest said anything
    try:
        fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        environment = _environment(tree)
        os.environ.clear()
        os.environ.update(environment)
        os.chdir(tree)
        sys.dont_write_bytecode = True
        sys.path.insert(0, str(tree))
        import pytest

        code = int(pytest.main(_command(tests)))
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


@dataclass
class _Job:
    """One pytest run of a mutant (or the baseline) in its own copy of the tree."""

    key: str
    tests: tuple[str, ...]
    temp: tempfile.TemporaryDirectory[str]
    started: float = 0.0

    @property
    def tree(self) -> Path:
        return Path(self.temp.name) / "tree"

    @property
    def log(self) -> Path:
        return Path(self.temp.name) / "pytest.log"


def _run_all(jobs: list[_Job], parallel: int) -> dict[str, tuple[bool, float, str]]:
    """Every job's pytest run, ``parallel`` at once: {key: (passed, seconds, output)}.

    Each run is a child forked from this process, which has imported :data:`PRELOAD` (about
    half a second of every fresh ``python -m pytest``) and nothing of the checkout; this
    process runs no thread, so the fork copies no held lock. Without ``os.fork`` (Windows)
    each run is a fresh ``python -m pytest`` instead."""
    results: dict[str, tuple[bool, float, str]] = {}
    if not hasattr(os, "fork"):
        for job in jobs:
            started = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "pytest", *_command(job.tests)],
                                  cwd=job.tree, env=_environment(job.tree), capture_output=True,
                                  text=True, timeout=600)
            results[job.key] = (done.returncode == 0, time.perf_counter() - started,
                                done.stdout + done.stderr)
        return results
    for name in PRELOAD:
        with contextlib.suppress(ImportError):  # not installed: a run imports what it needs
            __import__(name)
    waiting: list[_Job] = list(jobs)
    running: dict[int, _Job] = {}
    while waiting or running:
        while waiting and len(running) < parallel:
            job = waiting.pop(0)
            job.started = time.perf_counter()
            pid = os.fork()
            if pid == 0:
                _pytest_in_child(job.tree, job.tests, job.log)
            running[pid] = job
        pid, status = os.wait()
        job = running.pop(pid)
        output = job.log.read_text(encoding="utf-8", errors="replace")
        results[job.key] = (os.waitstatus_to_exitcode(status) == 0,
                            time.perf_counter() - job.started, output)
    return results


def _mutate(tree: Path, mutation: Mutation) -> None:
    """Apply ``mutation`` to the copy in ``tree``; refuse when its original text is not there
    exactly once (a refactor moved it: the probe must be updated, not go quiet)."""
    path = tree / mutation.file
    text = path.read_text(encoding="utf-8")
    count = text.count(mutation.original)
    if count != 1:
        raise SystemExit(f"{mutation.name}: the original text occurs {count} times in "
                         f"{mutation.file}; update the probe")
    path.write_text(text.replace(mutation.original, mutation.mutated), encoding="utf-8")


def _prepared(key: str, tests: tuple[str, ...], mutation: Mutation | None) -> _Job:
    job = _Job(key, tests, tempfile.TemporaryDirectory(prefix=f"harness-{key}-"))
    _copy_tree(job.tree)
    if mutation is not None:
        _mutate(job.tree, mutation)
    return job


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", default=None, help="run only these mutations")
    parser.add_argument("--list", action="store_true", help="list the mutations and exit")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                        help="mutations probed at once (default: one per core)")
    args = parser.parse_args(argv)
    selected = [m for m in MUTATIONS if args.only is None or m.name in args.only]
    if args.list:
        for m in selected:
            print(f"{m.name:32} {m.file:28} {m.what}")
        return 0
    # The baseline: every selected mutation's tests on one unmutated copy, in one run (the
    # copies are identical before they are mutated, so a baseline per mutation would prove the
    # same thing once per mutation). It goes first, being the longest; the mutants, each in
    # its own copy, fill in beside it. Every copy is made (and mutated) before any test runs,
    # so a mutation whose text moved stops the probe at once.
    baseline_tests = tuple(dict.fromkeys(t for m in selected for t in m.tests))
    jobs = [_prepared("baseline", baseline_tests, None)]
    try:
        jobs += [_prepared(m.name, m.tests, m) for m in selected]
        results = _run_all(jobs, max(1, args.jobs))
    finally:
        for job in jobs:
            job.temp.cleanup()
    passed, _, output = results["baseline"]
    if not passed:
        print(output[-4000:])
        print("baseline failed: the unmutated tree fails the mutations' own tests, "
              "so no verdict would mean anything")
        return 1
    outcomes = []
    for mutation in selected:
        survived, seconds, _ = results[mutation.name]
        verdict = "SURVIVED" if survived else "killed"
        outcomes.append(verdict)
        print(f"{verdict:15} {mutation.name:32} {seconds:5.1f}s  {mutation.what}", flush=True)
    killed = outcomes.count("killed")
    print(f"\n{killed} of {len(outcomes)} mutation(s) killed")
    return 0 if killed == len(outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
