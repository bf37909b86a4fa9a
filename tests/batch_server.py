"""Loopback fakes of the OpenAI Batch API and Anthropic Message Batches (plus the synchronous calls).

One real HTTP server on 127.0.0.1 serves, for the recording tests and the
batch benchmark:

- OpenAI: ``POST /v1/files`` (multipart, purpose batch), ``POST /v1/batches``,
  ``GET /v1/batches/{id}``, ``GET /v1/files/{id}/content``, and the synchronous
  ``POST /v1/chat/completions``;
- Anthropic: ``POST /v1/messages/batches``, ``GET /v1/messages/batches/{id}``,
  ``GET /v1/messages/batches/{id}/results``, and ``POST /v1/messages``.

Every answer, synchronous or inside a batch, comes from one ``answer``
function of the wire body, so a scenario gets the same answer either way. A
batch ends ``completion_s`` seconds after its creation; ``expire_after``
leaves the requests past that many unprocessed (an expired batch);
``fail_batch`` makes OpenAI refuse the input. Every HTTP request is counted
by method and path; ``latency_s`` delays each synchronous call.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from provider_server import anthropic_answer, openai_answer

#: ``answer(kind, body)`` -> ``(status, json body)``; kind is ``openai`` or ``anthropic``.
Answer = Callable[[str, dict[str, Any]], tuple[int, dict[str, Any]]]
_CUSTOM_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def yes_answer(kind: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """``{"answer": "yes"}`` in the wire format of ``kind``; a judge gets a score."""
    system = json.dumps(body.get("system") or body.get("messages", [{}])[0])
    if "Score" in system or "score" in system:
        text = json.dumps({"score": 4, "reason": "On topic."})
    else:
        text = json.dumps({"answer": "yes"})
    return 200, (openai_answer(text) if kind == "openai" else anthropic_answer(text))


@dataclass
class FakeBatch:
    """One batch as the fake keeps it."""

    id: str
    kind: str
    requests: list[tuple[str, dict[str, Any]]]
    """(custom_id, wire body)."""
    created: float
    files: tuple[str, str] = ("", "")


@dataclass
class BatchServer:
    """The fake provider; start it with :func:`batch_serving`."""

    answer: Answer = yes_answer
    completion_s: float = 0.0
    latency_s: float = 0.0
    expire_after: int | None = None
    fail_batch: bool = False
    requests: list[tuple[str, str]] = field(default_factory=list)
    batches: dict[str, FakeBatch] = field(default_factory=dict)
    files: dict[str, bytes] = field(default_factory=dict)
    sync_calls: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    port: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def batches_created(self) -> int:
        return len(self.batches)

    @property
    def batched_requests(self) -> int:
        return sum(len(b.requests) for b in self.batches.values())

    # -- OpenAI -------------------------------------------------------------------------------

    def upload(self, content_type: str, raw: bytes) -> tuple[int, Any]:
        fields = _multipart(content_type, raw)
        if fields.get("purpose") != b"batch" or "file" not in fields:
            return 400, {"error": {"message": "purpose must be batch and a file is required"}}
        with self.lock:
            file_id = f"file-{len(self.files) + 1}"
            self.files[file_id] = fields["file"]
        return 200, {"id": file_id, "object": "file", "purpose": "batch", "bytes": len(fields["file"])}

    def create_openai(self, body: dict[str, Any]) -> tuple[int, Any]:
        if body.get("endpoint") != "/v1/chat/completions" or body.get("completion_window") != "24h":
            return 400, {"error": {"message": "endpoint or completion_window is wrong"}}
        content = self.files.get(str(body.get("input_file_id")))
        if content is None:
            return 404, {"error": {"message": "no such file"}}
        requests = []
        for line in content.decode("utf-8").splitlines():
            item = json.loads(line)
            if item.get("method") != "POST" or item.get("url") != "/v1/chat/completions":
                return 400, {"error": {"message": f"bad line {line[:80]}"}}
            requests.append((item["custom_id"], item["body"]))
        batch = self._new("openai", "batch", requests)
        return 200, self._openai_view(batch)

    def poll_openai(self, batch_id: str) -> tuple[int, Any]:
        batch = self.batches.get(batch_id)
        if batch is None:
            return 404, {"error": {"message": "no such batch"}}
        return 200, self._openai_view(batch)

    def _openai_view(self, batch: FakeBatch) -> dict[str, Any]:
        ended = time.monotonic() >= batch.created + self.completion_s
        view: dict[str, Any] = {"id": batch.id, "object": "batch", "endpoint": "/v1/chat/completions",
                                "completion_window": "24h", "status": "in_progress",
                                "output_file_id": None, "error_file_id": None, "errors": None,
                                "request_counts": {"total": len(batch.requests), "completed": 0,
                                                   "failed": 0}}
        if not ended:
            return view
        if self.fail_batch:
            view.update(status="failed", errors={"object": "list", "data": [
                {"code": "invalid_request", "message": "the input file was refused", "line": 1}]})
            return view
        if batch.files == ("", ""):
            done, errors = [], []
            for index, (custom_id, body) in enumerate(batch.requests):
                if self.expire_after is not None and index >= self.expire_after:
                    errors.append({"id": f"req_{index}", "custom_id": custom_id, "response": None,
                                   "error": {"code": "batch_expired",
                                             "message": "This request could not be executed before "
                                                        "the completion window expired."}})
                    continue
                status, answer = self.answer("openai", body)
                line = {"id": f"req_{index}", "custom_id": custom_id,
                        "response": {"status_code": status, "request_id": f"rq{index}", "body": answer},
                        "error": None}
                (done if status == 200 else errors).append(line)
            batch.files = (self._file(done), self._file(errors))
        output, error = batch.files
        expired = self.expire_after is not None and self.expire_after < len(batch.requests)
        failed = len(_lines(self.files.get(error, b"")))
        view.update(status="expired" if expired else "completed", output_file_id=output or None,
                    error_file_id=error or None,
                    request_counts={"total": len(batch.requests),
                                    "completed": len(batch.requests) - failed, "failed": failed})
        return view

    def _file(self, lines: list[dict[str, Any]]) -> str:
        if not lines:
            return ""
        with self.lock:
            file_id = f"file-{len(self.files) + 1}"
            self.files[file_id] = "".join(json.dumps(line) + "\n" for line in lines).encode()
        return file_id

    # -- Anthropic ----------------------------------------------------------------------------

    def create_anthropic(self, body: dict[str, Any]) -> tuple[int, Any]:
        items = body.get("requests")
        if not isinstance(items, list) or not items:
            return 400, {"type": "error", "error": {"type": "invalid_request_error",
                                                    "message": "requests is required"}}
        for item in items:
            if not _CUSTOM_ID.match(str(item.get("custom_id"))) or "params" not in item:
                return 400, {"type": "error", "error": {"type": "invalid_request_error",
                                                        "message": f"bad request {item}"[:200]}}
        batch = self._new("anthropic", "msgbatch", [(i["custom_id"], i["params"]) for i in items])
        return 200, self._anthropic_view(batch)

    def poll_anthropic(self, batch_id: str) -> tuple[int, Any]:
        batch = self.batches.get(batch_id)
        if batch is None:
            return 404, {"type": "error", "error": {"type": "not_found_error", "message": batch_id}}
        return 200, self._anthropic_view(batch)

    def anthropic_results(self, batch_id: str) -> bytes:
        batch = self.batches[batch_id]
        lines = []
        for index, (custom_id, params) in enumerate(batch.requests):
            if self.expire_after is not None and index >= self.expire_after:
                result: dict[str, Any] = {"type": "expired"}
            else:
                status, answer = self.answer("anthropic", params)
                result = ({"type": "succeeded", "message": answer} if status == 200
                          else {"type": "errored", "error": answer})
            lines.append({"custom_id": custom_id, "result": result})
        return "".join(json.dumps(line) + "\n" for line in reversed(lines)).encode()  # any order

    def _anthropic_view(self, batch: FakeBatch) -> dict[str, Any]:
        ended = time.monotonic() >= batch.created + self.completion_s
        total = len(batch.requests)
        expired = max(0, total - self.expire_after) if self.expire_after is not None and ended else 0
        return {"id": batch.id, "type": "message_batch",
                "processing_status": "ended" if ended else "in_progress",
                "request_counts": {"processing": 0 if ended else total,
                                   "succeeded": total - expired if ended else 0, "errored": 0,
                                   "canceled": 0, "expired": expired},
                "results_url": f"{self.url}/v1/messages/batches/{batch.id}/results" if ended else None}

    def _new(self, kind: str, prefix: str, requests: list[tuple[str, dict[str, Any]]]) -> FakeBatch:
        with self.lock:
            batch = FakeBatch(f"{prefix}_{len(self.batches) + 1:04d}", kind, requests, time.monotonic())
            self.batches[batch.id] = batch
        return batch


def _lines(data: bytes) -> list[str]:
    return [line for line in data.decode().splitlines() if line.strip()]


def _multipart(content_type: str, raw: bytes) -> dict[str, bytes]:
    """The named parts of a multipart/form-data body (enough for the Files API's upload form)."""
    match = re.search(r"boundary=([^;]+)", content_type)
    if match is None:
        return {}
    boundary = b"--" + match.group(1).strip('"').encode()
    fields: dict[str, bytes] = {}
    for part in raw.split(boundary)[1:]:
        if part.startswith(b"--"):
            break
        head, _, body = part.lstrip(b"\r\n").partition(b"\r\n\r\n")
        name = re.search(rb'name="([^"]+)"', head)
        if name is not None:
            fields[name.group(1).decode()] = body[:-2] if body.endswith(b"\r\n") else body
    return fields


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256


def _handler(fake: BatchServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
            self._route("GET", b"")

        def do_POST(self) -> None:  # noqa: N802
            self._route("POST", self.rfile.read(int(self.headers.get("Content-Length") or 0)))

        def _route(self, method: str, raw: bytes) -> None:
            path = self.path.split("?")[0]
            with fake.lock:
                fake.requests.append((method, path))
            body: Any = json.loads(raw) if raw and "json" in (self.headers.get("Content-Type") or "") else {}
            status: int
            reply: Any
            if method == "POST" and path == "/v1/chat/completions":
                time.sleep(fake.latency_s)
                with fake.lock:
                    fake.sync_calls += 1
                status, reply = fake.answer("openai", body)
            elif method == "POST" and path == "/v1/messages":
                time.sleep(fake.latency_s)
                with fake.lock:
                    fake.sync_calls += 1
                status, reply = fake.answer("anthropic", body)
            elif method == "POST" and path == "/v1/files":
                status, reply = fake.upload(self.headers.get("Content-Type") or "", raw)
            elif method == "POST" and path == "/v1/batches":
                status, reply = fake.create_openai(body)
            elif method == "GET" and (m := re.fullmatch(r"/v1/batches/([\w-]+)", path)):
                status, reply = fake.poll_openai(m.group(1))
            elif method == "GET" and (m := re.fullmatch(r"/v1/files/([\w-]+)/content", path)):
                status, reply = (200, fake.files[m.group(1)]) if m.group(1) in fake.files else (404, {})
            elif method == "POST" and path == "/v1/messages/batches":
                status, reply = fake.create_anthropic(body)
            elif method == "GET" and (m := re.fullmatch(r"/v1/messages/batches/([\w-]+)", path)):
                status, reply = fake.poll_anthropic(m.group(1))
            elif method == "GET" and (m := re.fullmatch(r"/v1/messages/batches/([\w-]+)/results", path)):
                status, reply = 200, fake.anthropic_results(m.group(1))
            else:
                status, reply = 404, {"error": {"message": f"no route {method} {path}"}}
            data = reply if isinstance(reply, bytes) else json.dumps(reply).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/jsonl" if isinstance(reply, bytes)
                                 else "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except OSError:
                return

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass

    return Handler


@contextmanager
def batch_serving(**settings: Any) -> Iterator[BatchServer]:
    """Run a :class:`BatchServer` on an ephemeral loopback port for a ``with`` block."""
    fake = BatchServer(**settings)
    httpd = _Server(("127.0.0.1", 0), _handler(fake))
    fake.port = httpd.server_address[1]
    thread = threading.Thread(target=httpd.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        httpd.shutdown()
        httpd.server_close()
