"""Support triage on Chat Completions with ``stream=True`` and usage in the last chunk; client at import."""

from openai import OpenAI

client = OpenAI()
last_usage = None


def triage(scenario):
    global last_usage
    messages = [{"role": "system", "content": "Triage the support message. Answer only JSON with "
                                              "category, priority and reply."}]
    messages += scenario.messages or [{"role": "user", "content": scenario.input}]
    stream = client.chat.completions.create(
        model=scenario.params.get("model", "gpt-4o-mini"),
        messages=messages,
        stream=True,
        stream_options={"include_usage": True},
    )
    parts = []
    for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            parts.append(chunk.choices[0].delta.content)
        if chunk.usage is not None:
            last_usage = chunk.usage
    return "".join(parts)
