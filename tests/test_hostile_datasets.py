"""Hostile dataset inputs end in a named problem (file, field, fix), never a traceback or a
silent wrong result: duplicate keys, alias bombs, look-alike and undecodable names, symlinks."""

from __future__ import annotations

import os
import time
import unicodedata
from pathlib import Path

import pytest

from conftest import Project
from harness.core.errors import DatasetError
from harness.loading.config import load_config
from harness.loading.datasets import load_dataset

BILLION_LAUGHS = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [" + ", ".join([f"*{chr(97 + i)}"] * 9) + "]\n" for i in range(8))


def _problems(project: Project) -> list[str]:
    with pytest.raises(DatasetError) as info:
        load_dataset(load_config(project.root))
    return [p.render(project.root) for p in info.value.problems]


def test_a_second_type_line_is_a_duplicate_key_not_a_positive_scenario(project: Project) -> None:
    project.agent()
    project.write("eval-datasets/helper/acme/refuses.yaml", """\
        type: negative
        description: The helper refuses to reveal another customer's order.
        input: Show me order 1234 of someone else.
        expect:
          - name: refuses
            contains: cannot
        type: positive
        """)
    problems = _problems(project)
    assert problems == [
        "eval-datasets/helper/acme/refuses.yaml: line 7: duplicate key 'type' (first on line 1); the "
        "parser would silently keep the last one. Fix: keep one of the two keys (the one you mean)"]


@pytest.mark.parametrize("relative", ["helper/agent.yaml", "helper/acme/tenant.yaml",
                                      "helper/script.yaml", "helper/acme/dup.json"])
def test_duplicate_keys_are_refused_in_every_loaded_file(project: Project, relative: str) -> None:
    project.agent()
    project.scenario("helper/acme/greeting", answer={"answer": "yes"})
    path = project.datasets / relative
    if relative.endswith(".json"):
        path.write_text('{"type": "edge", "description": "d", "input": "x", "type": "negative"}',
                        encoding="utf-8")
    else:
        existing = path.read_text(encoding="utf-8") if path.exists() else "description: d\n"
        first_key = existing.split(":", 1)[0]
        path.write_text(f"{existing}{first_key}: again\n", encoding="utf-8")
    if relative.endswith("script.yaml"):  # the script is read when recording, by the same loader
        outcome = project.run("run", "--refresh-cache", "--scripted")
        assert outcome.code in (1, 2), outcome.err
        assert "script.yaml" in outcome.err and "duplicate key 'acme/greeting'" in outcome.err
        assert "Traceback" not in outcome.err
        return
    joined = "\n".join(_problems(project))
    assert f"eval-datasets/{relative}: " in joined and "duplicate key" in joined


def test_duplicate_keys_in_an_output_schema_are_refused(project: Project) -> None:
    project.agent(output_schema="answer.schema.json")
    project.write("eval-datasets/helper/answer.schema.json",
                  '{"type": "object", "required": ["answer"], "required": []}')
    project.scenario("helper/acme/greeting")
    joined = "\n".join(_problems(project))
    assert "answer.schema.json: duplicate key 'required'" in joined


def test_merge_keys_are_not_duplicates(project: Project) -> None:
    project.agent()
    project.write("eval-datasets/helper/acme/merged.yaml", """\
        type: edge
        description: A scenario whose params override a merged default.
        input: hello
        defaults: &defaults {company: Acme, tone: warm}
        """)
    project.write("eval-datasets/helper/acme/tenant.yaml", """\
        base: &base {company: Acme, tone: warm}
        params:
          <<: *base
          tone: formal
        """)
    joined = "\n".join(_problems(project))
    assert "merged.yaml: (top level): Additional properties" in joined  # defaults is unknown...
    assert "tenant.yaml: (top level)" in joined and "duplicate" not in joined  # ...not a duplicate


def test_a_billion_laughs_scenario_is_refused_in_well_under_a_second(project: Project) -> None:
    project.agent()
    project.scenario("helper/acme/greeting")
    project.write("eval-datasets/helper/acme/bomb.yaml", BILLION_LAUGHS)
    started = time.perf_counter()
    problems = _problems(project)
    elapsed = time.perf_counter() - started
    assert problems == [
        "eval-datasets/helper/acme/bomb.yaml: line 6: aliases expand to more than 100,000 values (an "
        "alias bomb, or a document far larger than any dataset). Fix: write the values out instead "
        "of nesting aliases of aliases"]
    assert elapsed < 0.5, elapsed


def test_a_recursive_alias_is_refused(project: Project) -> None:
    project.agent()
    project.write("eval-datasets/helper/acme/loop.yaml",
                  "type: edge\ndescription: d\ninput: x\nparams: &p {self: *p}\n")
    joined = "\n".join(_problems(project))
    assert "loop.yaml: line 4: an alias refers to a node that contains it" in joined


def test_names_equal_after_nfc_normalisation_are_refused(project: Project) -> None:
    project.agent()
    composed = unicodedata.normalize("NFC", "café")
    decomposed = unicodedata.normalize("NFD", "café")
    project.scenario(f"helper/acme/{composed}")
    project.scenario(f"helper/acme/{decomposed}")
    joined = "\n".join(_problems(project))
    assert f"{decomposed}.yaml: name: '{decomposed}' is not in Unicode NFC form" in joined
    assert "differ only by case, Unicode normalisation or extension" in joined


def test_an_undecodable_file_name_is_a_named_problem(project: Project) -> None:
    project.agent()
    project.scenario("helper/acme/greeting")
    folder = os.fsencode(project.datasets / "helper" / "acme")
    with open(os.path.join(folder, b"caf\xe9.yaml"), "wb") as handle:
        handle.write(b"type: edge\ndescription: d\ninput: x\n")
    joined = "\n".join(_problems(project))
    assert "caf\\xe9.yaml: name: 'caf\\xe9' is not valid UTF-8" in joined
    outcome = project.run("check")
    assert outcome.code == 1
    assert ("[datasets] eval-datasets/helper/acme/caf\\xe9.yaml: name: 'caf\\xe9' is not valid UTF-8"
            in outcome.out)
    outcome = project.run("run")
    assert outcome.code == 2 and "caf\\xe9.yaml: name:" in outcome.err


def _link(link: Path, target: Path) -> None:
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target, target_is_directory=target.is_dir())


@pytest.mark.parametrize("what", ["tenant folder", "scenario file", "system prompt", "agent folder",
                                  "helper folder"])
def test_every_symlink_under_the_datasets_is_refused(project: Project, tmp_path: Path,
                                                     what: str) -> None:
    project.agent()
    project.scenario("helper/acme/greeting")
    outside = tmp_path / "outside"
    outside.mkdir()
    if what == "tenant folder":
        link = project.datasets / "helper" / "globex"
        _link(link, project.datasets / "helper" / "acme")
    elif what == "scenario file":
        link = project.datasets / "helper" / "acme" / "copy.yaml"
        _link(link, project.datasets / "helper" / "acme" / "greeting.yaml")
    elif what == "system prompt":
        (project.datasets / "helper" / "real.md").write_text("You help.\n", encoding="utf-8")
        link = project.datasets / "helper" / "system.md"
        link.unlink()
        _link(link, project.datasets / "helper" / "real.md")
    elif what == "agent folder":
        link = project.datasets / "twin"
        _link(link, project.datasets / "helper")
    else:
        link = project.datasets / "helper" / "prompts"
        _link(link, outside)
    problems = _problems(project)
    shown = link.relative_to(project.root).as_posix()
    assert (f"{shown}: is a symbolic link; links are not allowed under eval-datasets/ (they break in "
            "a fresh clone and on Windows). Fix: replace the link with the real file or folder (git "
            "rm the link, copy the target in)") in problems
    outcome = project.run("run")
    assert outcome.code == 2 and f"{shown}: is a symbolic link" in outcome.err
    outcome = project.run("check")
    assert outcome.code != 0 and f"{shown}: is a symbolic link" in outcome.out + outcome.err


@pytest.mark.parametrize(("line", "message"), [
    ("tool_results: {lookup: {when: 2024-01-01 10:00:00}}", None),
    ("params: {b: !!binary aGVsbG8=}", "line 5: the YAML tag !!binary makes a value JSON cannot hold"),
    ("params: {s: !!set {a, b}}", "line 5: the YAML tag !!set makes a value JSON cannot hold"),
    ("params: {on: 1}", "line 5: the key 'on' is read as bool True, not text"),
    ("params: {1: one}", "line 5: the key '1' is read as int 1, not text"),
    ("context: .nan", "line 5: .nan is not a JSON number"),
])
def test_yaml_values_json_cannot_hold_are_refused_or_kept_as_text(project: Project, line: str,
                                                                   message: str | None) -> None:
    project.agent()
    project.write("eval-datasets/helper/acme/typed.yaml",
                  f"type: edge\ndescription: d\ninput: hello\nexpect: []\n{line}\n")
    if message is None:  # a date stays the text it was written as, and is keyed as text
        dataset = load_dataset(load_config(project.root))
        assert dataset.scenarios[0].tool_results == {"lookup": {"when": "2024-01-01 10:00:00"}}
        assert project.run("run", "--refresh-cache", "--scripted").code in (0, 1)
        return
    assert any(message in p for p in _problems(project))
