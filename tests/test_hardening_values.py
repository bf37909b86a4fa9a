"""Lax values made strict (issue 19, item 8): the stamp's format_version is an int (never a
bool or a float), a recording over a newer cache format is refused before any call, and list
and object template params reach the request as JSON."""

from __future__ import annotations

import json

import pytest

from conftest import Project
from harness.loading.config import load_config
from harness.loading.datasets import load_dataset
from harness.requests.key import CACHE_FORMAT_VERSION


def _seeded(project: Project) -> None:
    project.agent()
    project.scenario("helper/acme/greeting", {"answer": "yes"})
    assert project.record().code == 0


def _set_format(project: Project, value: object) -> bytes:
    stamp = project.cache / ".eval-cache.json"
    data = json.loads(stamp.read_text(encoding="utf-8"))
    data["format_version"] = value
    stamp.write_text(json.dumps(data), encoding="utf-8")
    return stamp.read_bytes()


@pytest.mark.parametrize(("value", "shown"), [(True, "true"), (1.0, "1.0"), ("1", '"1"')])
def test_a_format_version_that_is_not_an_int_is_an_invalid_stamp(
        project: Project, value: object, shown: str) -> None:
    _seeded(project)
    _set_format(project, value)
    outcome = project.run("run")
    assert outcome.code == 1
    assert (f"eval-cache-stamp-invalid: .eval-cache.json: format_version must be an integer "
            f"(found {shown}" in outcome.out + outcome.err)
    checked = project.run("check")
    assert checked.code == 1 and "format_version must be an integer" in checked.out


@pytest.mark.parametrize("mode", ["--record-missing", "--refresh-cache"])
def test_recording_over_a_newer_cache_format_is_refused_before_any_call(
        project: Project, mode: str) -> None:
    _seeded(project)
    project.scenario("helper/acme/later", {"answer": "yes"})
    before = _set_format(project, CACHE_FORMAT_VERSION + 1)
    entries = sorted(project.cache.rglob("entry.json"))
    outcome = project.run("run", mode, "--scripted")
    assert outcome.code == 2, outcome.out + outcome.err
    assert (f"eval-cache-newer-format: .eval-cache.json: the cache was recorded in cache format "
            f"{CACHE_FORMAT_VERSION + 1}, newer than this harness's format {CACHE_FORMAT_VERSION}"
            in outcome.err)
    assert "Fix: upgrade the harness" in outcome.err
    assert (project.cache / ".eval-cache.json").read_bytes() == before
    assert sorted(project.cache.rglob("entry.json")) == entries


def test_list_and_object_template_params_are_rendered_as_json(project: Project) -> None:
    project.agent()
    project.write("eval-datasets/helper/system.md",
                  "Tenant {{tenant}}. Plans: {{plans}}. Limits: {{limits}}. Trial: {{trial}}.\n")
    project.write("eval-datasets/helper/acme/tenant.yaml", {
        "params": {"tenant": "acme", "plans": ["basic", "it's pro"],
                   "limits": {"seats": 3, "sso": True, "note": None}, "trial": False}})
    project.scenario("helper/acme/greeting")
    dataset = load_dataset(load_config(project.root))
    system = dataset.request_for(dataset.scenarios[0])["messages"][0]["content"]
    assert system == ('Tenant acme. Plans: ["basic", "it\'s pro"]. Limits: {"seats": 3, "sso": '
                      'true, "note": null}. Trial: false.\n')
