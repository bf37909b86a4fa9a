"""``.gitattributes`` guard: ``git check-attr`` must report text unset for the cache, eol=lf for datasets."""

from __future__ import annotations

import pytest
from check_support import check, healthy, init_repo, messages, two_tenants

from conftest import Project


def test_the_documented_gitattributes_pass(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    healthy(project, monkeypatch)
    result = check(project).of("attributes")
    assert result.ok, result.findings
    assert result.summary.startswith("7 cache file(s) -text, ")


def test_without_gitattributes_every_payload_and_dataset_file_is_listed(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    two_tenants(project)
    init_repo(project, monkeypatch, attributes=None)
    found = messages(check(project), "attributes")
    cache = [f for f in found if f.startswith("[attributes] eval-cache/")]
    datasets = [f for f in found if f.startswith("[attributes] eval-datasets/")]
    assert len(cache) == 7 and all("text: git check-attr reports text: unspecified" in f for f in cache)
    assert all("fix: add 'eval-cache/** -text' to .gitattributes" in f for f in cache)
    assert len(datasets) == 6 and all("eol: git check-attr reports eol: unspecified" in f for f in datasets)
    assert all("fix: add 'eval-datasets/** text eol=lf' to .gitattributes" in f for f in datasets)


def test_a_cache_marked_text_fails(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    two_tenants(project)
    init_repo(project, monkeypatch, attributes="* text=auto\neval-datasets/** text eol=lf\n")
    found = messages(check(project), "attributes")
    assert len(found) == 7 and all("reports text: auto" in f for f in found)


def test_a_later_line_wins_and_git_is_what_decides(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    two_tenants(project)
    init_repo(project, monkeypatch, attributes="eval-cache/** -text\neval-datasets/** text eol=lf\n"
                                               "*.yaml eol=crlf\n")
    found = messages(check(project), "attributes")
    assert found and all(".yaml: eol: git check-attr reports eol: crlf" in f for f in found)


def test_a_prompt_file_outside_the_datasets_needs_eol_lf(project: Project,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    project.write("prompts/helper.md", "You are the {{tenant}} helper. Answer in JSON.\n")
    project.agent(system_prompt="../../prompts/helper.md")
    project.scenario("helper/acme/greeting", {"answer": "yes"})
    project.record()
    init_repo(project, monkeypatch)
    found = messages(check(project), "attributes")
    assert len(found) == 1 and found[0].startswith("[attributes] prompts/helper.md: eol:")
    assert "add 'prompts/helper.md text eol=lf'" in found[0]
    project.write(".gitattributes", "eval-cache/** -text\neval-datasets/** text eol=lf\n"
                                    "prompts/** text eol=lf\n")
    assert check(project).of("attributes").ok
