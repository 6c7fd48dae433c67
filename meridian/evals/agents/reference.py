"""The reference agent: deterministic, rule-based, no LLM and no network.

It is a fixture for measuring the harness, not an assistant. Both versions read
the task with the same rules and own the same tools (calculator, lookup,
string_op); they differ only in routing policy, which stands in for a prompt
change:

- v1 wastes steps: it asks the knowledge base about arithmetic before computing,
  double-checks answers by calling the same tool again, and gives up after a
  failed call (or on a percentage, which it hands to the calculator raw).
- v2 routes directly to the right tool and retries a call that failed once.

Each step is billed deterministically as if one model call had chosen it, so the
cost graders have data. Tools pause a fixed few milliseconds to stand in for
remote services, so latencies are real measured time with something in them.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from typing import Any, Literal

from meridian.evals.agents.tools import (
    KnowledgeBase,
    ToolError,
    calculate,
    format_number,
    string_op,
)
from meridian.evals.recorder import TrajectoryRecorder
from meridian.evals.types import AgentTask, Trajectory

Version = Literal["v1", "v2"]

# Seconds each step pauses, standing in for the remote services behind the tools.
SIMULATED_LATENCY_S = {"route": 0.003, "lookup": 0.006, "calculator": 0.001, "string_op": 0.001}
# USD per token, input and output (the price of a mid-size model).
PRICE_IN, PRICE_OUT = 3e-6, 15e-6

_STRING_VERBS = {
    "reverse": "reverse",
    "uppercase": "upper",
    "lowercase": "lower",
    "title-case": "title",
    "how many characters are in": "length",
    "what is the length of": "length",
    "count the words in": "word_count",
    "count the vowels in": "vowel_count",
}
_ARITH_WORDS = {"times": "*", "multiplied by": "*", "plus": "+", "minus": "-", "divided by": "/"}


@dataclass(frozen=True)
class Intent:
    """What the task asks, as the shared rules read it."""

    kind: Literal["arithmetic", "percentage", "lookup", "lookup_arith", "string", "json_fact",
                  "facts", "unknown"]
    expression: str = ""
    subject: str = ""
    subjects: tuple[str, ...] = ()
    literal: str | None = None
    op: str = ""
    operand: str = ""


def read_intent(text: str) -> Intent:
    """Classify the task input with a fixed list of patterns (first match wins)."""
    stripped = text.strip()
    lowered = stripped.lower().rstrip("?.! ")
    lowered = re.sub(r"^(?:what is|what's|compute|calculate|evaluate)\s+", "", lowered)
    if re.fullmatch(r"[\d\s+\-*/().^]+", lowered) and re.search(r"\d", lowered):
        return Intent("arithmetic", expression=" ".join(lowered.split()))
    match = re.fullmatch(r"([\d.]+)\s*% of ([\d.]+)", lowered)
    if match:
        return Intent("percentage", expression=f"{match[1]}% of {match[2]}", operand=match[1],
                      subject=match[2])
    for verb, op in _STRING_VERBS.items():
        match = re.match(rf"{re.escape(verb)}\s+(.+)$", stripped.rstrip("?.! "), re.IGNORECASE)
        if match:
            target = match[1].strip()
            quoted = re.fullmatch(r"""(?:the (?:string|word) )?(['"])(.*)\1""", target)
            if quoted:
                return Intent("string", op=op, literal=quoted[2])
            return Intent("string", op=op, subject=target)
    match = re.fullmatch(r"give (.+) and its length as json", lowered)
    if match:
        return Intent("json_fact", subject=match[1])
    match = re.fullmatch(r"list the capitals of (.+)", lowered)
    if match:
        countries = [c.strip() for c in re.split(r",|\band\b", match[1]) if c.strip()]
        return Intent("facts", subjects=tuple(f"capital of {c}" for c in countries))
    words = "|".join(re.escape(w) for w in _ARITH_WORDS)
    match = re.fullmatch(rf"(?:the )?(.+?) ({words}) ([\d.]+)", lowered)
    if match:
        return Intent("lookup_arith", subject=match[1], op=_ARITH_WORDS[match[2]], operand=match[3])
    match = re.fullmatch(r"(?:name )?(?:the )?((?:capital|speed|number|boiling|chemical|author|"
                         r"largest|avogadro|pi)\b.*)", lowered)
    if match:
        return Intent("lookup", subject=match[1])
    return Intent("unknown")


class _Session:
    """One run of the agent on one task: the recorder, the tools, the bill."""

    def __init__(self, task: AgentTask, simulate_latency: bool) -> None:
        self.task = task
        self.recorder = TrajectoryRecorder(task.id)
        self.knowledge = KnowledgeBase()
        self.simulate_latency = simulate_latency

    def _bill(self, step: Any, payload: Any) -> None:
        # The context a model would read grows with every step taken so far.
        step.tokens_in = 220 + 45 * len(self.recorder.steps) + len(json.dumps(payload)) // 4
        step.tokens_out = 24
        step.cost_usd = round(step.tokens_in * PRICE_IN + step.tokens_out * PRICE_OUT, 8)

    def _pause(self, name: str) -> None:
        if self.simulate_latency:
            time.sleep(SIMULATED_LATENCY_S.get(name, 0.0))

    def route(self, intent: Intent) -> None:
        payload = self.task.input
        with self.recorder.step("llm", "route", input=payload) as step:
            self._pause("route")
            self._bill(step, payload)
            step.output = intent.kind

    def call(self, tool: str, payload: dict[str, Any]) -> tuple[bool, Any]:
        """``(True, result)`` or ``(False, error message)``; the step is recorded either way."""
        try:
            with self.recorder.step("tool", tool, input=payload) as step:
                self._pause(tool)
                self._bill(step, payload)
                step.output = self._execute(tool, payload)
                return True, step.output
        except ToolError as exc:
            return False, str(exc)

    def _execute(self, tool: str, payload: dict[str, Any]) -> Any:
        if tool == "calculator":
            return calculate(payload["expression"])
        if tool == "lookup":
            return self.knowledge.lookup(payload["query"])
        if tool == "string_op":
            return string_op(payload["op"], payload["text"])
        raise ToolError(f"no tool named {tool!r}")


class ReferenceAgent:
    """``reference-v1`` or ``reference-v2``; see the module docstring for the difference."""

    name = "reference"

    def __init__(self, version: Version = "v2", *, simulate_latency: bool = True) -> None:
        if version not in ("v1", "v2"):
            raise ValueError(f"reference agent version must be v1 or v2, not {version!r}")
        self.version: str = version
        self.simulate_latency = simulate_latency

    def run(self, task: AgentTask) -> Trajectory:
        session = _Session(task, self.simulate_latency)
        intent = read_intent(task.input if isinstance(task.input, str) else json.dumps(task.input))
        session.route(intent)
        handler = getattr(self, f"_{intent.kind}")
        answer: str | None = handler(session, intent)
        if answer is None:
            failed = session.recorder.steps[-1].error or "gave up"
            return session.recorder.fail(f"gave up after a failed step: {failed}")
        return session.recorder.finish(final_output=answer)

    # ------------------------------------------------------------ policies

    def _lookup_value(self, session: _Session, subject: str, *, double_check: bool = True) -> Any:
        """Ask the knowledge base; v2 retries once, v1 double-checks a success instead."""
        ok, value = session.call("lookup", {"query": subject})
        if not ok and self.version == "v2" and "timed out" in value:
            ok, value = session.call("lookup", {"query": subject})
        if ok and self.version == "v1" and double_check:
            session.call("lookup", {"query": subject})
        return value if ok else None

    def _compute(self, session: _Session, expression: str) -> str | None:
        ok, value = session.call("calculator", {"expression": expression})
        if not ok:
            return None
        if self.version == "v1":
            session.call("calculator", {"expression": expression})  # "double-check"
        return format_number(value)

    def _arithmetic(self, session: _Session, intent: Intent) -> str | None:
        if self.version == "v1":
            # The wrong tool first: the question, then the bare expression, as lookups.
            session.call("lookup", {"query": str(session.task.input)})
            session.call("lookup", {"query": intent.expression})
        answer = self._compute(session, intent.expression)
        if answer is None and self.version == "v2":
            error = session.recorder.steps[-1].error or ""
            return f"undefined ({error.split(': ', 1)[-1]})"
        return answer

    def _percentage(self, session: _Session, intent: Intent) -> str | None:
        if self.version == "v1":
            return self._compute(session, intent.expression)  # "15% of 80" does not parse
        return self._compute(session, f"{intent.operand} / 100 * {intent.subject}")

    def _lookup(self, session: _Session, intent: Intent) -> str | None:
        value = self._lookup_value(session, intent.subject)
        if value is None:
            return self._unknown_answer(session)
        return format_number(value) if isinstance(value, int | float) else str(value)

    def _lookup_arith(self, session: _Session, intent: Intent) -> str | None:
        if self.version == "v1":
            session.call("calculator", {"expression": f"{intent.subject} {intent.op} {intent.operand}"})
        value = self._lookup_value(session, intent.subject, double_check=False)
        if not isinstance(value, int | float):
            return None if self.version == "v1" else self._unknown_answer(session)
        ok, result = session.call("calculator", {"expression": f"{value!r} {intent.op} {intent.operand}"})
        return format_number(result) if ok else None

    def _string(self, session: _Session, intent: Intent) -> str | None:
        text = intent.literal
        if text is None:
            value = self._lookup_value(session, intent.subject)
            if value is None:
                return None if self.version == "v1" else self._unknown_answer(session)
            text = str(value)
        elif self.version == "v1":
            session.call("lookup", {"query": text})  # looks the literal up "for context"
        ok, result = session.call("string_op", {"op": intent.op, "text": text})
        return str(result) if ok else None

    def _json_fact(self, session: _Session, intent: Intent) -> str | None:
        value = self._lookup_value(session, intent.subject)
        if value is None:
            return None
        ok, length = session.call("string_op", {"op": "length", "text": str(value)})
        if not ok:
            return None
        if self.version == "v1":
            # v1 stringifies every field, which the schema's integer type rejects.
            return json.dumps({"answer": str(value), "length": str(length)})
        body = json.dumps({"answer": str(value), "length": length}, indent=2)
        return f"```json\n{body}\n```"

    def _facts(self, session: _Session, intent: Intent) -> str | None:
        values = []
        for subject in intent.subjects:
            value = self._lookup_value(session, subject)
            if value is None and self.version == "v1":
                return None
            values.append("unknown" if value is None else str(value))
        return ", ".join(values)

    def _unknown(self, session: _Session, intent: Intent) -> str | None:
        return "I don't know how to answer that."

    def _unknown_answer(self, session: _Session) -> str | None:
        if self.version == "v1":
            return None
        error = session.recorder.steps[-1].error or ""
        return f"I don't know ({error.split(': ', 1)[-1]})."
