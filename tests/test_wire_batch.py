"""harness.wire.batch: the SDK's own request bodies through the provider batch APIs, answered as wire bytes.

Every request batched here is one the real ``openai`` / ``anthropic`` SDK sent
to the loopback wire fake (``tests/wire_fakes``), taken from the fake's log as
the interceptor would see it; the fake's batch routes answer each body with
what its synchronous endpoint answers. Each batch answer is then served by a
tiny loopback replay server to the real SDK, which parses it.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import anthropic
import openai
import pytest
from wire_fakes import WireFake, triage_brain
from wire_fakes.wire import JsonObject, openai_error

from harness.core.errors import ProviderError
from harness.providers.batching import BatchStatus
from harness.providers.retries import RetryPolicy
from harness.wire.batch import WireBatchAPI
from harness.wire.batch_routes import WireBatchItem, batch_route, refusal
from harness.wire.exchange import CHAT, EMBEDDINGS, MESSAGES, RESPONSES, WireAnswer, WireRequest

#: Long and distinctive, so a leak anywhere is found by a substring search.
SECRET = "sk-wirebatch-SECRET-0123456789abcdef"
ASK = "Where is my order A-1001? It is late."
TOOLS = [{"type": "function", "function": {
    "name": "lookup_order", "description": "Look an order up.",
    "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}},
                   "required": ["order_id"]}}}]
RESPONSES_TOOLS = [{"type": "function", "name": "lookup_order", "description": "Look an order up.",
                    "parameters": TOOLS[0]["function"]["parameters"]}]
ANTHROPIC_TOOLS = [{"name": "lookup_order", "description": "Look an order up.",
                    "input_schema": TOOLS[0]["function"]["parameters"]}]
NO_SLEEP = RetryPolicy(max_attempts=2, base_delay_s=0.0, max_delay_s=0.0)


@pytest.fixture
def fake() -> Iterator[WireFake]:
    with WireFake(openai_key=SECRET, anthropic_key=SECRET, batch_pending_polls=2) as running:
        yield running


def openai_client(fake: WireFake, **options: Any) -> openai.OpenAI:
    return openai.OpenAI(base_url=fake.openai_base_url, api_key=SECRET, max_retries=0, **options)


def anthropic_client(fake: WireFake, **options: Any) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=fake.anthropic_base_url, api_key=SECRET, max_retries=0, **options)


def sent(fake: WireFake, send: Callable[[], Any]) -> tuple[WireRequest, Any]:
    """The request the SDK sent for ``send()`` (as the interceptor records it) and its answer."""
    before = fake.count
    answer = send()
    logged = fake.requests[before]
    request = WireRequest(logged.method, fake.url + logged.path, logged.path, "127.0.0.1",
                          tuple(logged.headers.items()), logged.raw)
    return request, answer


def run_batch(api: WireBatchAPI, items: list[WireBatchItem]) -> tuple[
        dict[str, WireAnswer], dict[str, str], BatchStatus]:
    batch_id = api.create(items)
    for _ in range(20):
        status = api.status(batch_id)
        if status.ended:
            answers, failures = api.results(batch_id, status, [item.custom_id for item in items])
            return answers, failures, status
    raise AssertionError("the batch never ended")


@contextmanager
def serving(handle: Callable[[BaseHTTPRequestHandler], None]) -> Iterator[tuple[str, list[str]]]:
    """A loopback HTTP server answering every request with ``handle``; yields its URL and the
    paths it received."""
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:  # noqa: N802 (the stdlib's name)
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            seen.append(self.path)
            handle(self)

        do_GET = do_POST  # noqa: N815

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()


def replay(body: bytes, content_type: str) -> Callable[[BaseHTTPRequestHandler], None]:
    def handle(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)
    return handle


def parsed(answer: WireAnswer, call: Callable[[str], Any]) -> Any:
    """What the real SDK makes of ``answer``: ``call(base_url)`` against a server replaying it."""
    assert answer.status == 200 and answer.headers == (("content-type", "application/json"),)
    with serving(replay(answer.body, answer.content_type)) as (url, _):
        return call(url)


def tool_calls(message: Any) -> list[tuple[str, Any]]:
    return [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls or []]


# -- OpenAI chat completions ----------------------------------------------------------------------


def test_chat_bodies_with_tools_go_in_one_batch_and_the_sdk_parses_the_same_answers(fake: WireFake) -> None:
    client = openai_client(fake)
    first_q = [{"role": "user", "content": ASK}]
    tool_req, tool_sync = sent(fake, lambda: client.chat.completions.create(
        model="gpt-test", messages=first_q, tools=TOOLS))  # type: ignore[arg-type]
    follow_up = [*first_q, tool_sync.choices[0].message.model_dump(exclude_none=True),
                 {"role": "tool", "tool_call_id": tool_sync.choices[0].message.tool_calls[0].id,
                  "content": json.dumps({"status": "delayed"})}]
    loop_req, loop_sync = sent(fake, lambda: client.chat.completions.create(
        model="gpt-test", messages=follow_up, tools=TOOLS))  # type: ignore[arg-type]
    plain_req, plain_sync = sent(fake, lambda: client.chat.completions.create(
        model="gpt-test", messages=[{"role": "user", "content": "I was charged twice."}]))
    items = [WireBatchItem("tool", CHAT, tool_req), WireBatchItem("loop", CHAT, loop_req),
             WireBatchItem("plain", CHAT, plain_req)]
    assert all(refusal(CHAT, item.request) is None for item in items)
    assert len({batch_route(item) for item in items}) == 1
    fake.clear()
    api = WireBatchAPI(items, policy=NO_SLEEP)
    answers, failures, status = run_batch(api, items)

    assert failures == {} and sorted(answers) == ["loop", "plain", "tool"]
    assert (api.provider, status.state, status.counts["completed"]) == ("openai", "completed", 3)
    # 1 upload + 1 create + 3 polls (2 pending) + 1 output file (no error file): all counted
    assert api.http_requests == 6 == fake.count == len(fake.requests_to("batch"))
    assert fake.requests_to("chat") == []  # nothing went to the synchronous endpoint
    (batch,) = fake.batches.batches.values()
    assert [body for _, body in batch.requests] == [json.loads(i.request.body) for i in items]

    def create(url: str, request: WireRequest) -> Any:
        body = json.loads(request.body)
        return openai.OpenAI(base_url=url + "/v1", api_key="replay", max_retries=0).chat.completions.create(
            **body)

    tool = parsed(answers["tool"], lambda url: create(url, tool_req))
    loop = parsed(answers["loop"], lambda url: create(url, loop_req))
    plain = parsed(answers["plain"], lambda url: create(url, plain_req))
    assert isinstance(tool, openai.types.chat.ChatCompletion)
    assert tool_calls(tool.choices[0].message) == tool_calls(tool_sync.choices[0].message) == [
        ("lookup_order", {"order_id": "A-1001"})]
    assert tool.choices[0].finish_reason == "tool_calls"
    assert json.loads(loop.choices[0].message.content) == json.loads(loop_sync.choices[0].message.content)
    assert "A-1001 is delayed" in loop.choices[0].message.content
    assert plain.choices[0].message.content == plain_sync.choices[0].message.content
    assert tool.usage is not None and tool.usage.prompt_tokens == tool_sync.usage.prompt_tokens


def test_embeddings_bodies_batch_at_the_embeddings_endpoint(fake: WireFake) -> None:
    client = openai_client(fake)
    request, synchronous = sent(fake, lambda: client.embeddings.create(model="emb-test",
                                                                       input=["late order", "refund"]))
    item = WireBatchItem("emb", EMBEDDINGS, request)
    answers, failures, _ = run_batch(WireBatchAPI([item], policy=NO_SLEEP), [item])
    assert failures == {}
    (batch,) = fake.batches.batches.values()
    assert batch.api == "embeddings"
    vectors = parsed(answers["emb"], lambda url: openai.OpenAI(
        base_url=url + "/v1", api_key="replay").embeddings.create(model="emb-test",
                                                                  input=["late order", "refund"]))
    assert [d.embedding for d in vectors.data] == [d.embedding for d in synchronous.data]


# -- OpenAI responses -----------------------------------------------------------------------------


def test_responses_bodies_batch_and_parse_as_sdk_responses(fake: WireFake) -> None:
    client = openai_client(fake)
    tool_req, tool_sync = sent(fake, lambda: client.responses.create(
        model="gpt-test", input=ASK, tools=RESPONSES_TOOLS, store=False))  # type: ignore[arg-type]
    call = tool_sync.output[0]
    follow = [{"role": "user", "content": ASK},
              {"type": "function_call", "call_id": call.call_id, "name": call.name,
               "arguments": call.arguments},
              {"type": "function_call_output", "call_id": call.call_id,
               "output": json.dumps({"status": "delivered"})}]
    loop_req, loop_sync = sent(fake, lambda: client.responses.create(
        model="gpt-test", input=follow, tools=RESPONSES_TOOLS, store=False))  # type: ignore[arg-type]
    items = [WireBatchItem("r-tool", RESPONSES, tool_req), WireBatchItem("r-loop", RESPONSES, loop_req)]
    answers, failures, _ = run_batch(WireBatchAPI(items, policy=NO_SLEEP), items)
    assert failures == {}
    (batch,) = fake.batches.batches.values()
    assert batch.api == "responses"

    def create(url: str, request: WireRequest) -> Any:
        return openai.OpenAI(base_url=url + "/v1", api_key="replay", max_retries=0).responses.create(
            **json.loads(request.body))

    tool = parsed(answers["r-tool"], lambda url: create(url, tool_req))
    loop = parsed(answers["r-loop"], lambda url: create(url, loop_req))
    assert isinstance(tool, openai.types.responses.Response)
    assert [(o.type, o.name, json.loads(o.arguments)) for o in tool.output] == [
        ("function_call", "lookup_order", {"order_id": "A-1001"})]
    assert json.loads(loop.output_text) == json.loads(loop_sync.output_text)
    assert "A-1001 is delivered" in loop.output_text


# -- Anthropic messages ---------------------------------------------------------------------------


def test_anthropic_message_bodies_batch_with_their_version_and_beta_headers(fake: WireFake) -> None:
    client = anthropic_client(fake, default_headers={"anthropic-beta": "tools-2024-05-16"})
    tool_req, tool_sync = sent(fake, lambda: client.messages.create(
        model="claude-test", max_tokens=200, tools=ANTHROPIC_TOOLS,  # type: ignore[arg-type]
        messages=[{"role": "user", "content": ASK}]))
    block = tool_sync.content[0]
    follow = [{"role": "user", "content": ASK},
              {"role": "assistant", "content": [block.model_dump()]},
              {"role": "user", "content": [{"type": "tool_result", "tool_use_id": block.id,
                                            "content": json.dumps({"status": "lost"})}]}]
    loop_req, loop_sync = sent(fake, lambda: client.messages.create(
        model="claude-test", max_tokens=200, tools=ANTHROPIC_TOOLS,  # type: ignore[arg-type]
        messages=follow))  # type: ignore[arg-type]
    items = [WireBatchItem("m-tool", MESSAGES, tool_req), WireBatchItem("m-loop", MESSAGES, loop_req)]
    fake.clear()
    api = WireBatchAPI(items, policy=NO_SLEEP)
    answers, failures, status = run_batch(api, items)
    assert failures == {} and (api.provider, status.state) == ("anthropic", "ended")
    create = fake.requests[0]
    assert (create.method, create.path) == ("POST", "/v1/messages/batches")
    assert create.headers["anthropic-beta"] == "tools-2024-05-16"
    assert create.headers["anthropic-version"] == tool_req.header("anthropic-version")
    assert [r["params"] for r in create.body["requests"]] == [json.loads(i.request.body) for i in items]
    assert api.http_requests == 5 == fake.count  # create + 3 polls + results

    def create_message(url: str, request: WireRequest) -> Any:
        return anthropic.Anthropic(base_url=url, api_key="replay", max_retries=0).messages.create(
            **json.loads(request.body))

    tool = parsed(answers["m-tool"], lambda url: create_message(url, tool_req))
    loop = parsed(answers["m-loop"], lambda url: create_message(url, loop_req))
    assert isinstance(tool, anthropic.types.Message)
    assert [(b.type, b.name, b.input) for b in tool.content] == [
        ("tool_use", "lookup_order", {"order_id": "A-1001"})]
    assert tool.stop_reason == "tool_use"
    assert json.loads(loop.content[0].text) == json.loads(loop_sync.content[0].text)


# -- failures ------------------------------------------------------------------------------------


def test_a_per_request_error_is_a_failure_with_the_providers_reason(fake: WireFake) -> None:
    client = openai_client(fake)
    good, _ = sent(fake, lambda: client.chat.completions.create(
        model="gpt-test", messages=[{"role": "user", "content": ASK}]))
    orphan = json.loads(good.body)
    orphan["messages"].append({"role": "tool", "tool_call_id": "call_nobody", "content": "x"})
    bad = WireRequest(good.method, good.url, good.path, good.host, good.headers,
                      json.dumps(orphan).encode())
    items = [WireBatchItem("good", CHAT, good), WireBatchItem("bad", CHAT, bad)]
    answers, failures, status = run_batch(WireBatchAPI(items, policy=NO_SLEEP), items)
    assert sorted(answers) == ["good"] and sorted(failures) == ["bad"]
    assert status.counts["failed"] == 1
    assert "HTTP 400" in failures["bad"] and "must be a response to a preceeding message" in failures["bad"]

    messages = anthropic_client(fake)
    ok, _ = sent(fake, lambda: messages.messages.create(
        model="claude-test", max_tokens=50, messages=[{"role": "user", "content": ASK}]))
    wrong = json.loads(ok.body)
    wrong["messages"] = [{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_nobody", "content": "x"}]}]
    broken = WireRequest(ok.method, ok.url, ok.path, ok.host, ok.headers, json.dumps(wrong).encode())
    items = [WireBatchItem("ok", MESSAGES, ok), WireBatchItem("wrong", MESSAGES, broken)]
    answers, failures, _ = run_batch(WireBatchAPI(items, policy=NO_SLEEP), items)
    assert sorted(answers) == ["ok"]
    assert "request errored: invalid_request_error: messages.0.content: unexpected `tool_use_id`" in (
        failures["wrong"])


@pytest.mark.parametrize("family", ["openai", "anthropic"])
def test_an_expired_batch_answers_what_it_finished_and_fails_the_rest_with_the_reason(family: str) -> None:
    with WireFake(openai_key=SECRET, anthropic_key=SECRET, batch_expire_after=1) as fake:
        if family == "openai":
            client = openai_client(fake)
            requests = [sent(fake, lambda q=q: client.chat.completions.create(  # type: ignore[misc]
                model="gpt-test", messages=[{"role": "user", "content": q}]))[0] for q in ("one", "two")]
            api_name = CHAT
        else:
            messages = anthropic_client(fake)
            requests = [sent(fake, lambda q=q: messages.messages.create(  # type: ignore[misc]
                model="claude-test", max_tokens=50, messages=[{"role": "user", "content": q}]))[0]
                for q in ("one", "two")]
            api_name = MESSAGES
        items = [WireBatchItem(f"n{i}", api_name, r) for i, r in enumerate(requests)]
        api = WireBatchAPI(items, policy=NO_SLEEP)
        answers, failures, status = run_batch(api, items)
        again, ghosts = api.results(next(iter(fake.batches.batches)), status, ["n0", "ghost"])
    assert sorted(answers) == ["n0"] and sorted(failures) == ["n1"]
    assert list(again) == ["n0"] and list(ghosts) == ["ghost"]  # only what was asked for
    assert f"no result for this request (the batch ended {status.state})" in ghosts["ghost"]
    if family == "openai":
        assert status.state == "expired"
        assert "batch_expired: This request could not be executed before the completion window" in (
            failures["n1"])
    else:
        assert status.counts["expired"] == 1 and "request expired" in failures["n1"]


def test_a_streamed_request_a_non_json_body_and_an_unbatchable_api_are_refused_with_reasons() -> None:
    def request(body: bytes, url: str = "https://api.openai.com/v1/chat/completions") -> WireRequest:
        return WireRequest("POST", url, url.split(".com", 1)[1], "api.openai.com",
                           (("authorization", f"Bearer {SECRET}"),), body)

    assert refusal(CHAT, request(b'{"model": "m", "messages": []}')) is None
    streamed = refusal(CHAT, request(b'{"model": "m", "stream": true, "messages": []}'))
    assert streamed is not None and '"stream": true' in streamed and "never event streams" in streamed
    not_json = refusal(CHAT, request(b"model=m&stream=1"))
    assert not_json is not None and "body is not JSON" in not_json
    listed = refusal(CHAT, request(b"[1, 2]"))
    assert listed is not None and "not a JSON object" in listed
    unknown = refusal("openai.audio", request(b"{}"))
    assert unknown is not None and "no provider batch API" in unknown
    azure = refusal(CHAT, request(b"{}", "https://x.openai.azure.com/openai/deployments/d/chat/completions"
                                         "?api-version=2024-10-21"))
    assert azure is not None and "Azure OpenAI" in azure
    for reason in (streamed, not_json, listed, unknown, azure):
        assert SECRET not in reason
    with pytest.raises(ValueError, match="body is not JSON"):
        WireBatchAPI([WireBatchItem("x", CHAT, request(b"not json"))])


# -- the key, redirects, deadlines --------------------------------------------------------------------


def leaky_brain(api: str, request: JsonObject) -> Any:
    """Echoes the key in an answer, and in the error of a request asking for ``fail``."""
    text = json.dumps(request.get("messages") or request.get("input"))
    if "fail" in text:
        raise openai_error(400, f"refused for key {SECRET} (Bearer {SECRET})")
    if "echo" in text:
        return f"your key is {SECRET}"
    return triage_brain(api, request)


def test_the_key_appears_in_no_message_no_answer_no_route_and_no_exception() -> None:
    with WireFake(leaky_brain, openai_key=SECRET, anthropic_key=SECRET) as fake:
        client = openai_client(fake)
        echo, _ = sent(fake, lambda: client.chat.completions.create(
            model="gpt-test", messages=[{"role": "user", "content": "echo"}]))
        fail = WireRequest(echo.method, echo.url, echo.path, echo.host, echo.headers,
                           echo.body.replace(b"echo", b"fail"))
        items = [WireBatchItem("echo", CHAT, echo), WireBatchItem("fail", CHAT, fail)]
        assert echo.header("authorization") == f"Bearer {SECRET}"  # the key really is in the request
        api = WireBatchAPI(items, policy=NO_SLEEP)
        answers, failures, _ = run_batch(api, items)
        with pytest.raises(ProviderError) as unknown:
            api.status("batch_nope")
    texts = [repr(item) for item in items] + [repr(api), str(unknown.value), api.label]
    texts += [str(batch_route(item)) for item in items] + list(failures.values())
    texts += [answer.body.decode() for answer in answers.values()]
    assert "[REDACTED]" in answers["echo"].body.decode() and "[REDACTED]" in failures["fail"]
    assert "HTTP 404" in str(unknown.value)
    for text in texts:
        assert SECRET not in text and SECRET[3:] not in text


def test_a_redirect_is_refused_and_the_key_never_reaches_the_other_host(fake: WireFake) -> None:
    client = openai_client(fake)
    request, _ = sent(fake, lambda: client.chat.completions.create(
        model="gpt-test", messages=[{"role": "user", "content": ASK}]))
    fake.clear()

    def redirect(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(307)
        handler.send_header("Location", fake.url + handler.path)
        handler.send_header("Content-Length", "0")
        handler.end_headers()

    with serving(redirect) as (url, seen):
        moved = WireRequest(request.method, url + request.path, request.path, "127.0.0.1",
                            request.headers, request.body)
        item = WireBatchItem("moved", CHAT, moved)
        with pytest.raises(ProviderError) as refused:
            WireBatchAPI([item], policy=NO_SLEEP).create([item])
    message = str(refused.value)
    assert "HTTP 307 redirect to" in message and "refused" in message and SECRET not in message
    assert seen == ["/v1/files"] and fake.count == 0  # asked once, never followed


def test_each_batch_request_has_a_deadline() -> None:
    release = threading.Event()

    def stall(handler: BaseHTTPRequestHandler) -> None:
        release.wait(10)

    with serving(stall) as (url, _):
        path = "/v1/chat/completions"
        request = WireRequest("POST", url + path, path, "127.0.0.1", (("authorization", f"Bearer {SECRET}"),),
                              b'{"model": "m", "messages": [{"role": "user", "content": "hi"}]}')
        item = WireBatchItem("slow", CHAT, request)
        api = WireBatchAPI([item], timeout_s=0.3, policy=RetryPolicy(max_attempts=1))
        with pytest.raises(ProviderError, match=r"no complete answer within 0.3s"):
            api.status("batch_1")
        release.set()


# -- routes and items -----------------------------------------------------------------------------


def item_at(url: str, api: str = CHAT, key: str = SECRET, **headers: str) -> WireBatchItem:
    auth = ("x-api-key", key) if api == MESSAGES else ("authorization", f"Bearer {key}")
    path = "/" + url.split("/", 3)[3]
    return WireBatchItem("c1", api, WireRequest("POST", url, path, "h", (
        auth, ("x-stainless-retry-count", "0"), ("idempotency-key", "stainless-retry-1"),
        *headers.items()), b"{}"))


def test_batch_route_separates_base_urls_apis_beta_headers_and_keys() -> None:
    chat = batch_route(item_at("https://a.example/v1/chat/completions"))
    assert chat[:3] == ("openai", "https://a.example/v1", CHAT)
    assert batch_route(item_at("https://a.example/v1/chat/completions")) == chat
    assert batch_route(item_at("https://b.example/v1/chat/completions")) != chat
    assert batch_route(item_at("https://a.example/v1/responses", RESPONSES)) != chat
    assert batch_route(item_at("https://p.example/proxy/openai/v1/chat/completions"))[1] == (
        "https://p.example/proxy/openai/v1")
    beta_a = batch_route(item_at("https://api.anthropic.com/v1/messages", MESSAGES,
                                 **{"anthropic-version": "2023-06-01", "anthropic-beta": "a-1"}))
    beta_b = batch_route(item_at("https://api.anthropic.com/v1/messages", MESSAGES,
                                 **{"anthropic-version": "2023-06-01", "anthropic-beta": "b-2"}))
    assert beta_a != beta_b and beta_a[:3] == ("anthropic", "https://api.anthropic.com/v1", MESSAGES)
    assert "anthropic-beta=a-1" in beta_a
    other_key = batch_route(item_at("https://a.example/v1/chat/completions", key="sk-another-key-0000000000"))
    assert other_key != chat and SECRET not in str(chat)
    with pytest.raises(ValueError, match="cannot share this batch route"):
        WireBatchAPI([item_at("https://a.example/v1/chat/completions"),
                      item_at("https://b.example/v1/chat/completions")])


def test_items_need_valid_unique_custom_ids_and_a_real_key() -> None:
    with pytest.raises(ValueError, match="custom_id"):
        WireBatchItem("has space", CHAT, item_at("https://a.example/v1/chat/completions").request)
    item = item_at("https://a.example/v1/chat/completions")
    with pytest.raises(ValueError, match="appears twice"):
        WireBatchAPI([item]).create([item, item])
    placeholder = item_at("https://a.example/v1/chat/completions",
                          key="harness-placeholder-key-not-a-secret")
    with pytest.raises(ProviderError, match="placeholder"):
        WireBatchAPI([placeholder])
    with pytest.raises(ValueError, match="has not ended"):
        WireBatchAPI([item]).results("batch_1", BatchStatus(False, "in_progress"), ["c1"])
