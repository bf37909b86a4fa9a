"""Dataset schemas: valid by their metaschema, local references only, no socket offline
(issue 19, items 2 and 4).

A ``$ref`` to a URL in a committed output schema, a tool's ``parameters`` or an inline
``json_schema`` is refused at load as a dataset problem (file, field, pointer, fix), so ``run``
exits 2 and ``check`` reports it. A listener counts the requests that reach it and an audit hook
counts every ``socket.connect`` of the process: both stay at zero.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from conftest import Project
from harness.assertions.structured import compiled_schema
from harness.core.errors import DatasetError
from harness.loading.config import load_config
from harness.loading.datasets import load_dataset

AUDITED = """
import sys
connects = []
def audit(event, args):
    if event == "socket.connect":
        connects.append(args[1])
sys.addaudithook(audit)
from harness.frontends.cli import main
code = main(["--project", sys.argv[1], sys.argv[2]])
print("CONNECTS", len(connects), connects)
sys.exit(code)
"""


class Listener:
    """A TCP listener that counts the connections (and so the schema fetches) it receives."""

    def __init__(self) -> None:
        self.accepted = 0
        self._sock = socket.create_server(("127.0.0.1", 0))
        self._sock.settimeout(0.1)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._sock.getsockname()[1]}/schema.json"

    def _serve(self) -> None:
        body = json.dumps({"type": "object"}).encode()
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except (TimeoutError, OSError):
                continue
            self.accepted += 1
            with conn:
                conn.recv(65536)
                conn.sendall(b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                             + str(len(body)).encode() + b"\r\n\r\n" + body)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(1)
        self._sock.close()


@pytest.fixture
def listener() -> Iterator[Listener]:
    running = Listener()
    yield running
    running.close()


def _audited(project: Project, command: str) -> tuple[int, str, int]:
    done = subprocess.run([sys.executable, "-c", AUDITED, str(project.root), command],
                          capture_output=True, text=True, timeout=120)
    out = done.stdout + done.stderr
    connects = int(out.split("CONNECTS ", 1)[1].split(" ", 1)[0])
    return done.returncode, out, connects


def _problems(project: Project) -> list[str]:
    with pytest.raises(DatasetError) as info:
        load_dataset(load_config(project.root))
    return [p.render(project.root) for p in info.value.problems]


def _remote_output_schema(project: Project, url: str) -> None:
    project.agent(output_schema="output.schema.json")
    project.write("eval-datasets/helper/output.schema.json", {
        "type": "object", "properties": {"answer": {"$ref": url}}})
    project.scenario("helper/acme/greeting", {"answer": "yes"},
                     expect=[{"json_schema": True}])


def test_a_remote_ref_in_the_output_schema_is_a_dataset_error_and_no_socket_opens(
        project: Project, listener: Listener) -> None:
    _remote_output_schema(project, listener.url)
    expected = ("eval-datasets/helper/output.schema.json: has a non-local reference "
                f"/properties/answer/$ref: '{listener.url}'; an offline run never fetches a "
                "schema. Fix: copy the referenced schema under $defs")
    assert any(line.startswith(expected) for line in _problems(project)), _problems(project)
    code, out, connects = _audited(project, "run")
    assert code == 2 and expected in out, out
    code, out, check_connects = _audited(project, "check")
    assert code == 1 and f"[datasets] {expected}" in out, out
    assert (connects, check_connects, listener.accepted) == (0, 0, 0)


@pytest.mark.parametrize("where", ["tool", "inline"])
def test_a_remote_ref_in_tool_parameters_or_an_inline_schema_is_refused(
        project: Project, listener: Listener, where: str) -> None:
    if where == "tool":
        project.agent(tools=[{"name": "lookup", "parameters": {
            "type": "object", "properties": {"q": {"$ref": listener.url}}}}])
        project.scenario("helper/acme/greeting", {"answer": "yes"})
        expected = ("eval-datasets/helper/agent.yaml: tools[0].parameters: has a non-local "
                    f"reference /properties/q/$ref: '{listener.url}'")
    else:
        project.agent()
        project.scenario("helper/acme/greeting", {"answer": "yes"}, expect=[
            {"json_schema": {"type": "object", "properties": {"answer": {"$ref": listener.url}}}}])
        expected = ("eval-datasets/helper/acme/greeting.yaml: expect[0]: inline json_schema has a "
                    f"non-local reference /properties/answer/$ref: '{listener.url}'")
    assert any(line.startswith(expected) for line in _problems(project)), _problems(project)
    code, out, connects = _audited(project, "run")
    assert code == 2 and expected in out and connects == 0, out
    assert listener.accepted == 0


def test_local_refs_stay_allowed(project: Project) -> None:
    project.agent(output_schema="output.schema.json", tools=[{"name": "lookup", "parameters": {
        "type": "object", "$defs": {"q": {"type": "string"}},
        "properties": {"q": {"$ref": "#/$defs/q"}}}}])
    project.write("eval-datasets/helper/output.schema.json", {
        "$defs": {"a": {"const": "yes"}}, "type": "object",
        "properties": {"answer": {"$ref": "#/$defs/a"}}})
    project.scenario("helper/acme/greeting", {"answer": "yes"}, expect=[{"json_schema": True}])
    assert project.record().code == 0
    assert project.run("run").code == 0


def test_a_validator_built_past_the_loader_never_fetches(listener: Listener) -> None:
    compiled = compiled_schema({"type": "object", "properties": {"a": {"$ref": listener.url}}})
    with pytest.raises(Exception, match="Unresolvable"):
        compiled.validator.is_valid({"a": 1})
    assert listener.accepted == 0


@pytest.mark.parametrize(("tools", "expected"), [
    ([{"name": "lookup", "parameters": {"type": "objekt", "required": 5}}],
     "agent.yaml: tools[0].parameters: is not a valid JSON Schema: "),
    ([{"name": "lookup", "parameters": {"type": "object", "properties": {"q": {"minLength": -1}}}}],
     "agent.yaml: tools[0].parameters: is not a valid JSON Schema: properties.q.minLength"),
    ([{"name": "lookup"}, {"name": "file_note"}, {"name": "lookup"}],
     "agent.yaml: tools[2].name: 'lookup' is declared twice (first as tools[0]). Fix: give each "
     "tool its own name"),
])
def test_tool_declarations_are_validated_at_load(project: Project, tools: list[dict[str, Any]],
                                                 expected: str) -> None:
    project.agent(tools=tools)
    project.scenario("helper/acme/greeting", {"answer": "yes"})
    joined = "\n".join(_problems(project))
    assert expected in joined, joined
    checked = project.run("check")
    assert checked.code == 1 and expected.split(". Fix:")[0] in checked.out
