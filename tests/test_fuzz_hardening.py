"""Fuzzing the input families of issue 19: tool schemas, config paths, stamp types, template param
types and special files.

The same contract as the rest of the suite (docs/hostile-inputs.md, "The fuzz suite"): every input
ends in a named error (its file named) or loads, never another exception; beyond that, each family
checks the rule it was added for:

- tool schemas: a declaration that loads has a valid ``parameters`` schema with local references
  only, and checking a call against it opens no socket (an audit hook counts ``socket.connect``);
- config paths: a configuration that loads has its three trees inside the project and apart;
- stamp types: only the int ``format_version`` of this harness is current (never ``true``, ``1.0``);
- template params: a list, object, number, bool or null param reaches the request as JSON;
- special files: every name under a tenant folder is loaded, refused by name, or cannot hold a
  dataset, and a FIFO is never opened (the load returns).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from fuzz_project import FUZZ
from fuzz_strategies import SCALARS, VALUES
from fuzz_support import count, timed
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.assertions.toolschema import tool_call_problems
from harness.cache.stamp import check_stamp, refuse_newer_format
from harness.core.entities import ToolCall
from harness.core.errors import ConfigError, DatasetError, StampNewer
from harness.documents.schemarefs import remote_refs
from harness.loading.config import load_config
from harness.loading.datasets import load_dataset
from harness.requests.key import CACHE_FORMAT_VERSION

_CONNECTS: list[Any] = []
_WATCHING = [False]


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event == "socket.connect" and _WATCHING[0]:
        _CONNECTS.append(args[1])


sys.addaudithook(_audit)  # counts only while a fuzz test below is watching


def _project(root: Path, *, system: str = "Be brief.\n", agent: dict[str, Any] | None = None,
             tenant: dict[str, Any] | None = None) -> Path:
    tenant_dir = root / "eval-datasets" / "helper" / "acme"
    if tenant_dir.exists():  # the last input's leftovers (a FIFO, a folder) go; the rest is rewritten
        for leftover in tenant_dir.iterdir():
            if leftover.is_dir() and not leftover.is_symlink():
                shutil.rmtree(leftover)
            elif leftover.name != "greeting.yaml":
                leftover.unlink()
    tenant_dir.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text('[project]\nname = "fuzz"\n', encoding="utf-8")
    (root / "eval-datasets" / "helper" / "system.md").write_text(system, encoding="utf-8")
    declaration = {"provider": "openai", "model": "m", "system_prompt": "system.md", **(agent or {})}
    (root / "eval-datasets" / "helper" / "agent.yaml").write_text(
        yaml.safe_dump(declaration, allow_unicode=True), encoding="utf-8")
    if tenant is not None:
        (root / "eval-datasets" / "helper" / "acme" / "tenant.yaml").write_text(
            yaml.safe_dump(tenant, allow_unicode=True), encoding="utf-8")
    (root / "eval-datasets" / "helper" / "acme" / "greeting.yaml").write_text(
        "type: positive\ndescription: d\ninput: hi\nexpect:\n- contains: hi\n", encoding="utf-8")
    return root


def _problems(error: DatasetError, root: Path) -> str:
    text = "\n".join(p.render(root) for p in error.problems)
    assert error.code == "eval-dataset-invalid" and error.exit_code == 2 and text.strip()
    text.encode("utf-8")
    return text


# -- tool schemas --------------------------------------------------------------------------------

_KEYWORDS = ("type", "properties", "required", "items", "enum", "minLength", "maxLength", "pattern",
             "additionalProperties", "$ref", "$defs", "anyOf", "const", "minimum", "$schema")
_REFS = st.sampled_from(["#", "#/$defs/a", "#/properties/x", "http://127.0.0.1:9/s.json",
                         "https://example.invalid/s", "other.json", "../x.json#/a", "urn:x", "#bad"])


@st.composite
def tool_schemas(draw: st.DrawFn) -> Any:
    if draw(st.integers(0, 9)) == 0:
        return draw(VALUES)  # not even a mapping
    schema: dict[str, Any] = {}
    for keyword in draw(st.lists(st.sampled_from(_KEYWORDS), max_size=5, unique=True)):
        if keyword == "$ref":
            schema[keyword] = draw(_REFS)
        elif keyword in ("properties", "$defs"):
            schema[keyword] = {draw(st.sampled_from(["a", "x", "q"])): draw(st.one_of(
                st.fixed_dictionaries({"$ref": _REFS}), st.fixed_dictionaries({"type": SCALARS}),
                VALUES))}
        elif keyword == "type":
            schema[keyword] = draw(st.sampled_from(["object", "objekt", "string", ["string", "null"],
                                                    5, None]))
        else:
            schema[keyword] = draw(VALUES)
    return schema


@settings(FUZZ, max_examples=80)
@given(schemas=st.lists(tool_schemas(), min_size=1, max_size=3),
       names=st.lists(st.sampled_from(["lookup", "file_note", "lookup"]), min_size=3, max_size=3))
def test_fuzz_tool_declarations_end_in_a_named_problem_and_open_no_socket(
        tmp_path_factory: pytest.TempPathFactory, schemas: list[Any], names: list[str]) -> None:
    tools = [{"name": names[i % 3], "parameters": schema} for i, schema in enumerate(schemas)]
    root = _project(tmp_path_factory.getbasetemp() / "fuzz-tools", agent={"tools": tools})
    _CONNECTS.clear()
    _WATCHING[0] = True
    try:
        with timed("tool schema"):
            try:
                dataset = load_dataset(load_config(root))
            except DatasetError as error:
                assert "eval-datasets/helper/agent.yaml: " in _problems(error, root)
                count("tool schema", "error")
            else:
                agent = dataset.agents["helper"]
                assert len({t["name"] for t in agent.tools}) == len(agent.tools)
                for tool in agent.tools:
                    assert not remote_refs(tool.get("parameters", {}))
                    for arguments in ({}, {"a": 1}, {"x": ["y"]}, "text"):
                        tool_call_problems(agent.tools, [ToolCall(tool["name"], arguments)])
                count("tool schema", "valid")
    finally:
        _WATCHING[0] = False
    assert _CONNECTS == []


# -- config paths ----------------------------------------------------------------------------------

_PATHS = st.sampled_from(["eval-datasets", "eval-cache", "eval-results", ".", "..", "../../x",
                          "/tmp/elsewhere", "eval-datasets/runs", "eval-cache/results",
                          "eval-results/cache", "a/b/../../eval-datasets", "out", "out/", "",
                          "eval-cache/../eval-datasets/x"])


@settings(FUZZ, max_examples=100)
@given(paths=st.fixed_dictionaries({}, optional={"datasets": _PATHS, "cache": _PATHS,
                                                 "results": _PATHS}),
       ttl=st.one_of(st.none(), st.integers(min_value=-10, max_value=10**12)))
def test_fuzz_config_paths_are_contained_or_a_named_config_error(
        tmp_path_factory: pytest.TempPathFactory, paths: dict[str, str], ttl: int | None) -> None:
    root = tmp_path_factory.getbasetemp() / "fuzz-paths" / "project"
    root.mkdir(parents=True, exist_ok=True)
    lines = ["[tool.harness]", *(f"{key} = {json.dumps(value)}" for key, value in paths.items())]
    if ttl is not None:
        lines.append(f"ttl_days = {ttl}")
    (root / "pyproject.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with timed("config paths"):
        try:
            config = load_config(root)
        except ConfigError as error:
            assert error.exit_code == 2 and "pyproject.toml [tool.harness]" in str(error)
            assert "Fix:" in str(error) or "must be" in str(error)
            count("config paths", "error")
        else:
            trees = (config.datasets, config.cache, config.results)
            assert all(t.is_relative_to(config.root) and t != config.root for t in trees)
            assert len(set(trees)) == 3
            assert not any(a in b.parents for a in trees for b in trees)
            assert 365 <= config.ttl_days <= 36500
            count("config paths", "valid")


# -- stamp types ------------------------------------------------------------------------------------

@settings(FUZZ, max_examples=80)
@given(value=st.one_of(VALUES, st.sampled_from([True, False, 1.0, 1, CACHE_FORMAT_VERSION,
                                                 CACHE_FORMAT_VERSION + 1, "1", [1], {"v": 1}])))
def test_fuzz_stamp_format_types_only_an_int_is_a_format(
        tmp_path_factory: pytest.TempPathFactory, value: Any) -> None:
    cache = tmp_path_factory.getbasetemp() / "fuzz-stamp-types"
    cache.mkdir(exist_ok=True)
    (cache / ".eval-cache.json").write_text(json.dumps(
        {"format_version": value, "harness_version": "0.1.0", "ttl_days": 730}), encoding="utf-8")
    with timed("stamp type"):
        status = check_stamp(cache)
        is_int = type(value) is int
        assert status.ok == (is_int and value == CACHE_FORMAT_VERSION)
        if not is_int:
            assert status.code == "eval-cache-stamp-invalid"  # not an int, or not JSON (NaN)
            assert "must be an integer" in status.message or "cannot be read" in status.message
        try:
            refuse_newer_format(cache)
        except StampNewer as error:
            assert is_int and value > CACHE_FORMAT_VERSION and error.exit_code == 2
        else:
            assert not (is_int and value > CACHE_FORMAT_VERSION)
    count("stamp type", "valid" if status.ok else "error")


# -- template param types ---------------------------------------------------------------------------

@settings(FUZZ, max_examples=80)
@given(value=VALUES)
def test_fuzz_template_params_of_any_type_render_as_json(
        tmp_path_factory: pytest.TempPathFactory, value: Any) -> None:
    root = _project(tmp_path_factory.getbasetemp() / "fuzz-params", system="P=<{{p}}>\n",
                    tenant={"params": {"p": value}})
    with timed("template param"):
        try:
            dataset = load_dataset(load_config(root))
        except DatasetError as error:
            assert "eval-datasets/helper/acme/tenant.yaml" in _problems(error, root)
            count("template param", "error")
            return
        system = dataset.request_for(dataset.scenarios[0])["messages"][0]["content"]
    loaded = dataset.tenants[("helper", "acme")].params["p"]
    shown = loaded if isinstance(loaded, str) else json.dumps(loaded, ensure_ascii=False)
    assert system == f"P=<{shown.replace(chr(13) + chr(10), chr(10)).replace(chr(13), chr(10))}>\n"
    count("template param", "valid")


# -- special files ----------------------------------------------------------------------------------

_STEMS = st.sampled_from(["wip", "_wip", ".draft", "..helper", "smoke", "__pycache__", "notes",
                          ".gitkeep", "late"])
_SUFFIXES = st.sampled_from([".yaml", ".YAML", ".yml", ".Json", ".json", ".md", ""])
_KINDS = st.sampled_from(["file", "folder", "fifo"])


@settings(FUZZ, max_examples=60)
@given(entries=st.lists(st.tuples(_STEMS, _SUFFIXES, _KINDS), min_size=1, max_size=4,
                        unique_by=lambda e: (e[0] + e[1]).lower()))
def test_fuzz_special_and_hidden_files_are_loaded_or_refused_never_skipped(
        tmp_path_factory: pytest.TempPathFactory, entries: list[tuple[str, str, str]]) -> None:
    root = _project(tmp_path_factory.getbasetemp() / "fuzz-special")
    tenant = root / "eval-datasets" / "helper" / "acme"
    body = "type: positive\ndescription: d\ninput: hi\nexpect:\n- contains: hi\n"
    made: list[tuple[str, str]] = []
    for stem, suffix, kind in entries:
        name = stem + suffix
        if name in ("greeting.yaml", "tenant.yaml"):
            continue
        path = tenant / name
        if kind == "fifo":
            os.mkfifo(path)
        elif kind == "folder":
            path.mkdir()
            (path / "inner.yaml").write_text(body, encoding="utf-8")
        else:
            path.write_text(body, encoding="utf-8")
        made.append((name, kind))
    with timed("special file"):
        try:
            dataset = load_dataset(load_config(root))
            problems = ""
            loaded = {s.name for s in dataset.scenarios}
        except DatasetError as error:
            problems = _problems(error, root)
            loaded = set()
    for name, kind in made:
        shown = f"eval-datasets/helper/acme/{name}"
        dataset_shaped = kind == "folder" or name.lower().endswith((".yaml", ".yml", ".json"))
        refused = f"{shown}:" in problems
        if kind == "fifo":
            assert refused and "is a FIFO" in problems, (name, problems)
        elif dataset_shaped and not refused:  # loaded, or refused together with the others
            assert Path(name).stem in loaded or problems, (name, problems)
            assert name.endswith((".yaml", ".yml", ".json")) and not name.startswith(("_", ".")), name
    count("special file", "error" if problems else "valid")
