"""Support triage on Anthropic Messages that counts its prompt's tokens first and trims old turns."""

import anthropic

BUDGET = 4000  # input tokens the team allows one answer
SYSTEM = "You triage support messages. Answer JSON: category, priority, reply."

client = anthropic.Anthropic()  # built at import time, from the environment


def triage(scenario):
    model = scenario.params.get("model", "claude-sonnet-4-5")
    messages = list(scenario.messages or [{"role": "user", "content": scenario.input}])
    counted = client.messages.count_tokens(model=model, system=SYSTEM, messages=messages)
    while counted.input_tokens > BUDGET and len(messages) > 1:
        messages = messages[2:]  # drop the oldest exchange
        counted = client.messages.count_tokens(model=model, system=SYSTEM, messages=messages)
    message = client.messages.create(model=model, max_tokens=512, system=SYSTEM, messages=messages)
    text = "".join(block.text for block in message.content if block.type == "text")
    return f"{text} [{counted.input_tokens} input tokens]"
