"""Support triage on ``AsyncAnthropic`` over aiohttp (the SDK's ``DefaultAioHttpClient``), streamed."""

from anthropic import AsyncAnthropic, DefaultAioHttpClient

client = AsyncAnthropic(http_client=DefaultAioHttpClient())  # built at import time, kept


async def triage(scenario):
    messages = list(scenario.messages or [{"role": "user", "content": scenario.input}])
    async with client.messages.stream(model=scenario.params.get("model", "claude-sonnet-4-5"),
                                      max_tokens=512, messages=messages,
                                      system="You triage support messages in one short line.") as stream:
        parts = [text async for text in stream.text_stream]
    return "".join(parts)
