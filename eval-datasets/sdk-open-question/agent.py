"""Pipeline work agent on the OpenAI Responses API, streamed: every question for the user is declared.

The team's production code on the official ``openai`` SDK, with no harness
import. It streams each turn (``client.responses.create(..., stream=True)``)
as its chat UI does, keeps the ``response.completed`` event, and chains the
tool round with ``previous_response_id``. A question left for the user must go
through ``declare_open_question``, which this process answers from its own
question register (an in-memory stand-in for the tracked open-question log);
the final answer is the turn's JSON report.
"""

import json

from openai import OpenAI

MODEL = "gpt-4.1"
#: Tool rounds one turn may take before the agent gives up.
MAX_ROUNDS = 4

INSTRUCTIONS = """You are a work agent in the delivery pipeline of {team}, which builds {product} ({stack}).
In this session you act as: {role}. A worker turns stories into code and reports what it did; qa
reviews a handed-in task against its story, its requirements and the user's decisions, and gives
one verdict.

Every doubt you leave for the user goes through declare_open_question, one call per question, with
your suggestion and what it affects (rule:<id>, story:<id>, task:<id>). Never end a turn with a
question that exists only in your text: nobody tracks it. The question must stand on its own for
someone reading the queue a week later (at most 500 characters; the suggestion at most 300).
Do not declare anything when the requirement is clear, and never guess a decision that is the user's.

As qa: a requirement marked "not confirmed by the user", or contradicted by a standing user decision,
is needs_user_decision (declare the question on the task), never changes_requested, and never
approved on a guess. changes_requested is only for defects the developer can fix, listed in findings.

Finish with one JSON object and nothing else: {{"role": "worker"|"qa", "summary": "<statements only,
at most 600 characters, asking nothing>", "open_questions_declared": <number of calls you made>}},
plus "verdict" (qa only: approved, changes_requested or needs_user_decision) and "findings" (a list,
for changes_requested)."""

TOOLS = [{
    "type": "function",
    "name": "declare_open_question",
    "description": "Record a question only the user can settle as a tracked open question. It stays in "
                   "the user's Open questions queue until answered; the answer reaches developer and QA.",
    "parameters": {
        "type": "object", "additionalProperties": False, "required": ["question", "affects"],
        "properties": {
            "question": {"type": "string", "minLength": 1, "maxLength": 500},
            "suggestion": {"type": "string", "minLength": 1, "maxLength": 300},
            "affects": {"type": "array", "minItems": 1, "uniqueItems": True,
                        "items": {"type": "string", "pattern": "^(rule|story|task):[A-Za-z0-9._-]+$"}},
        },
    },
    "strict": False,
}]


class QuestionRegister:
    """The open questions declared in one turn (the real service appends them to its log)."""

    def __init__(self):
        self.questions = []

    def declare(self, question, affects, suggestion=None):
        question_id = f"OQ-{len(self.questions) + 1}"
        self.questions.append({"id": question_id, "question": question, "suggestion": suggestion,
                               "affects": affects})
        return {"question_id": question_id, "status": "open"}


def _completed(stream):
    """Consume a streamed turn as the UI does; return the response of ``response.completed``."""
    for event in stream:
        if event.type == "response.output_text.delta":
            pass  # the chat UI renders event.delta here
        elif event.type == "response.completed":
            return event.response
        elif event.type in ("response.failed", "response.incomplete", "error"):
            raise RuntimeError(f"the model's stream ended with {event.type}")
    raise RuntimeError("the stream ended before response.completed")


def answer(scenario):
    """One turn of the work agent: its JSON report (the declared questions are tool calls)."""
    client = OpenAI()
    params = scenario.params
    instructions = INSTRUCTIONS.format(team=params["team"], product=params["product"],
                                       stack=params["stack"], role=params.get("role", "worker"))
    model = params.get("model", MODEL)
    register = QuestionRegister()
    text = scenario.input if not scenario.context else f"{scenario.context}\n\n{scenario.input}"
    response = _completed(client.responses.create(
        model=model, instructions=instructions, input=text, tools=TOOLS,
        temperature=0, stream=True))
    for _ in range(MAX_ROUNDS):
        calls = [item for item in response.output if item.type == "function_call"]
        if not calls:
            return json.loads(response.output_text)
        outputs = []
        for call in calls:
            if call.name != "declare_open_question":
                raise RuntimeError(f"the model called an unknown tool {call.name!r}")
            arguments = json.loads(call.arguments)
            outputs.append({"type": "function_call_output", "call_id": call.call_id,
                            "output": json.dumps(register.declare(**arguments))})
        response = _completed(client.responses.create(
            model=model, instructions=instructions, previous_response_id=response.id,
            input=outputs, tools=TOOLS, temperature=0, stream=True))
    raise RuntimeError(f"still calling tools after {MAX_ROUNDS} rounds")
