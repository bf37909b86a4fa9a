"""Watch guard (``check --since REF``): a watched path changed and the cache was not re-recorded."""

from __future__ import annotations

import pytest
from check_support import check, commit_all, git, init_repo, messages

from conftest import Project
from harness.check.watch import glob_regex, watched

WATCHING = '[project]\nname = "demo"\n[tool.harness]\nwatch = ["prompts/**", "config/models.json", "**"]\n'


def _prompted_project(project: Project, monkeypatch: pytest.MonkeyPatch, pyproject: str = WATCHING) -> None:
    """A committed project whose system prompt lives outside the datasets, under prompts/."""
    project.write("pyproject.toml", pyproject)
    project.write("prompts/helper.md", "You are the {{tenant}} helper. Answer in JSON.\n")
    project.agent(system_prompt="../../prompts/helper.md")
    project.scenario("helper/acme/greeting", {"answer": "yes"})
    project.record()
    init_repo(project, monkeypatch)


@pytest.mark.parametrize(("glob", "path", "hit"), [
    ("prompts/**", "prompts/a.md", True),
    ("prompts/**", "prompts/deep/er/a.md", True),
    ("prompts", "prompts/a.md", True),
    ("prompts/", "prompts/a.md", True),
    ("prompts/*.md", "prompts/deep/a.md", False),
    ("**/*.prompt", "src/agents/x.prompt", True),
    ("**/*.prompt", "x.prompt", True),
    ("config/models.json", "config/models.json", True),
    ("config/models.json", "config/models.json.bak", False),
    ("src/agent_?.py", "src/agent_1.py", True),
    ("src/[!t]*.py", "src/test.py", False),
    ("./.github/prompts/**", ".github/prompts/x.md", True),
])
def test_globs(glob: str, path: str, hit: bool) -> None:
    assert bool(glob_regex(glob).match(path)) is hit


def test_cache_and_datasets_are_never_watched() -> None:
    excluded = ("eval-cache", "eval-datasets")
    assert watched("eval-cache/.eval-cache.json", ("**",), excluded) is None
    assert watched("eval-datasets/helper/system.md", ("**",), excluded) is None
    assert watched("eval-cachex/a", ("**",), excluded) == "**"


def test_without_since_the_guard_is_not_asked(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    _prompted_project(project, monkeypatch)
    project.write("prompts/helper.md", "Changed.\n")
    result = check(project).of("watch")
    assert result.ok and result.skipped and result.status == "skip"


def test_a_watched_change_without_a_re_record_fails_naming_the_path(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    _prompted_project(project, monkeypatch, WATCHING.replace(', "**"', ""))
    project.write("prompts/helper.md", "You are the {{tenant}} helper, now terser. Answer in JSON.\n")
    outcome = project.run("check", "--since", "HEAD")
    assert outcome.code == 1
    assert ("[watch] prompts/helper.md: changed since HEAD and matches watch glob 'prompts/**', but "
            "nothing under eval-cache/ was re-recorded in the same change") in outcome.out
    assert "fix: re-record the affected scenarios" in outcome.out


def test_committed_and_untracked_changes_count(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    _prompted_project(project, monkeypatch)
    project.write("config/models.json", '{"helper": "gpt-test-2"}\n')
    commit_all(project.root, "swap the model")
    project.write("prompts/new-tool.md", "An untracked prompt.\n")
    found = messages(check(project, since="HEAD~1"), "watch")
    assert [f.split(":", 1)[0] for f in found] == ["[watch] config/models.json",
                                                   "[watch] prompts/new-tool.md"]


def test_a_re_record_in_the_same_change_passes(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    _prompted_project(project, monkeypatch)
    project.write("prompts/helper.md", "You are the {{tenant}} helper, now terser. Answer in JSON.\n")
    project.record()
    result = check(project, since="HEAD").of("watch")
    assert result.ok, result.findings
    assert "watched" in result.summary and "0 under" not in result.summary


def test_re_recording_does_not_trigger_its_own_rule(project: Project,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    _prompted_project(project, monkeypatch)  # watch includes "**"
    project.scenario("helper/acme/greeting", input="A reworded question?")
    project.record()
    git(project.root, "add", "-A")
    result = check(project, since="HEAD").of("watch")
    assert result.ok and ", 0 watched," in result.summary


def test_an_unknown_ref_fails(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    _prompted_project(project, monkeypatch)
    found = messages(check(project, since="no-such-branch"), "watch")
    assert found and ("cannot list the changes since no-such-branch: 'no-such-branch' is not a commit"
                      in found[0])


def test_since_without_watch_globs_fails_as_blind(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    _prompted_project(project, monkeypatch, '[project]\nname = "demo"\n')
    found = messages(check(project, since="HEAD"), "watch")
    assert len(found) == 1 and found[0].startswith("[watch] pyproject.toml: watch: --since HEAD was asked")
