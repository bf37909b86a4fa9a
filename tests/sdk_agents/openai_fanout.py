"""Support triage that classifies urgency and category at once, on two threads of its own."""

from concurrent.futures import ThreadPoolExecutor

from openai import OpenAI

client = OpenAI()


def _ask(question, text):
    reply = client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "system", "content": question},
                                       {"role": "user", "content": text}])
    return reply.choices[0].message.content


def triage(scenario):
    text = scenario.input
    with ThreadPoolExecutor(max_workers=2) as pool:
        category = pool.submit(_ask, "Name the category of this support message.", text)
        urgency = pool.submit(_ask, "Say how urgent this support message is.", text)
        return f"{category.result()} / {urgency.result()}"
