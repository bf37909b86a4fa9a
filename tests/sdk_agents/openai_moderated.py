"""Support triage on the Responses API behind a moderation guardrail, with a token count first."""

from openai import OpenAI

REFUSAL = "We can help once the message is respectful. category: abuse"
INSTRUCTIONS = "Triage the support message; answer JSON with category, priority, reply."


def triage(scenario):
    client = OpenAI()
    text = scenario.input or scenario.messages[-1]["content"]
    screened = client.moderations.create(model="omni-moderation-latest", input=text)
    if screened.results[0].flagged:
        return REFUSAL
    model = scenario.params.get("model", "gpt-4.1-mini")
    counted = client.responses.input_tokens.count(model=model, instructions=INSTRUCTIONS, input=text)
    response = client.responses.create(model=model, instructions=INSTRUCTIONS, input=text,
                                       max_output_tokens=max(64, 1024 - counted.input_tokens))
    return response.output_text
