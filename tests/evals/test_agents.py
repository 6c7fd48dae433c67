"""Agents: every naming form of load_agent, the command protocol, the reference tools."""

from __future__ import annotations

import json
import shlex
import sys
import textwrap
from pathlib import Path

import pytest

from meridian.errors import MeridianError
from meridian.evals.agents import Agent, AgentInfraError, ReferenceAgent, agent_label, load_agent
from meridian.evals.agents.reference import read_intent
from meridian.evals.agents.tools import (
    KnowledgeBase,
    ToolError,
    calculate,
    format_number,
    string_op,
)
from meridian.evals.runner import InfraError, TaskTimeout
from meridian.evals.types import GraderSpec, Task, Trajectory

TASK = Task(id="t1", input="What is 6 * 7?", expected=42, timeout_s=10,
            graders=[GraderSpec(name="exact_match")], expected_tools=["calculator"],
            reference_steps=1, tags=["arithmetic"], metadata={"unit": "none"})

AGENT_MODULE = '''
from meridian.evals.recorder import TrajectoryRecorder


class EchoAgent:
    name = "echo"
    version = "1.2"

    def run(self, task):
        rec = TrajectoryRecorder(task.id)
        with rec.step("tool", "echo", input=task.input) as step:
            step.output = task.input
        return rec.finish(final_output=task.input)


def build():
    return EchoAgent()


instance = EchoAgent()


class Anonymous:
    def run(self, task):
        return EchoAgent().run(task)


class NeedsWiring:
    def __init__(self, client):
        self.client = client

    def run(self, task):
        return EchoAgent().run(task)


class Holder:
    agent = EchoAgent()


not_an_agent = 42
'''


@pytest.fixture
def agent_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    (tmp_path / "my_eval_agents.py").write_text(AGENT_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    return "my_eval_agents"


def script(tmp_path: Path, body: str) -> str:
    """A ``command:`` spec running ``body`` as a Python program."""
    path = tmp_path / "agent.py"
    path.write_text("import json, sys\n" + textwrap.dedent(body))
    return f"command:{shlex.quote(sys.executable)} {shlex.quote(str(path))}"


# ------------------------------------------------------------------ naming forms


@pytest.mark.parametrize(("spec", "version"), [("reference-v1", "v1"), ("reference-v2", "v2")])
def test_builtin_reference_agents(spec: str, version: str) -> None:
    agent = load_agent(spec)
    assert isinstance(agent, ReferenceAgent) and isinstance(agent, Agent)
    assert agent_label(agent) == f"reference@{version}"
    assert agent.run(TASK).final_output == "42"


@pytest.mark.parametrize("attr", ["EchoAgent", "build", "instance", "Holder.agent"])
def test_module_attr_resolves_a_class_a_factory_or_an_instance(agent_module: str, attr: str) -> None:
    agent = load_agent(f"{agent_module}:{attr}")
    assert (agent.name, agent.version) == ("echo", "1.2")
    traj = agent.run(TASK)
    assert traj.final_output == "What is 6 * 7?" and traj.steps[0].name == "echo"


def test_module_attr_without_name_and_version_is_labelled_from_its_spec(agent_module: str) -> None:
    agent = load_agent(f"{agent_module}:Anonymous")
    assert (agent.name, agent.version) == (f"{agent_module}:Anonymous", "unversioned")
    assert agent.run(TASK).completed


@pytest.mark.parametrize(("spec", "message"), [
    ("gpt-agent", ("agent 'gpt-agent': unknown agent (expected reference-v1, reference-v2, "
                   "command:PROGRAM or module:attr)")),
    ("no_such_module_xyz:Agent", ("agent 'no_such_module_xyz:Agent': cannot import 'no_such_module_xyz': "
                                  "No module named 'no_such_module_xyz'")),
    ("{mod}:Missing", "agent '{mod}:Missing': '{mod}' has no attribute 'Missing'"),
    ("{mod}:not_an_agent", "agent '{mod}:not_an_agent': int object has no run(task) method"),
    ("{mod}:NeedsWiring", ("agent '{mod}:NeedsWiring': calling NeedsWiring with no arguments failed: "
                           "TypeError: NeedsWiring.__init__() missing 1 required positional argument: "
                           "'client'")),
    ("command:", "agent 'command:': no program given (expected command:PROGRAM [ARGS])"),
    (":x", "agent ':x': expected module:attr (e.g. mypkg.agent:build)"),
])
def test_bad_agent_specs_say_what_is_wrong(agent_module: str, spec: str, message: str) -> None:
    with pytest.raises(MeridianError) as err:
        load_agent(spec.format(mod=agent_module))
    assert str(err.value) == message.format(mod=agent_module)


def test_a_module_that_fails_to_import_is_a_clean_error(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "broken_syntax_agent.py").write_text("def run(:\n")
    (tmp_path / "raising_agent.py").write_text("raise RuntimeError('needs a config file')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(MeridianError, match=r"^agent 'broken_syntax_agent:A': importing "
                                            r"'broken_syntax_agent' failed: SyntaxError: "):
        load_agent("broken_syntax_agent:A")
    with pytest.raises(MeridianError) as err:
        load_agent("raising_agent:A")
    assert str(err.value) == ("agent 'raising_agent:A': importing 'raising_agent' failed: "
                              "RuntimeError: needs a config file")


# ------------------------------------------------------------------ command agents


def test_command_agent_reads_the_task_on_stdin_and_prints_a_trajectory(tmp_path: Path) -> None:
    spec = script(tmp_path, f"""
        import os
        raw = sys.stdin.read()
        open({str(tmp_path / "stdin.json")!r}, "w").write(raw)
        task = json.loads(raw)
        steps = [{{"index": 0, "kind": "tool", "name": "calculator", "input": {{"e": task["input"]}},
                  "output": 42, "cost_usd": 0.002, "tokens_in": 50}}]
        print("log: starting", os.environ["MERIDIAN_AGENT_PROTOCOL"])
        print(json.dumps({{"protocol": "meridian.agent/1", "steps": steps, "final_output": "42"}}))
    """)
    agent = load_agent(spec)
    assert agent.name == "command:" + Path(sys.executable).name
    assert agent.version.startswith("sha256:")
    traj = agent.run(TASK)
    assert isinstance(traj, Trajectory)
    assert (traj.task_id, traj.final_output, traj.completed) == ("t1", "42", True)
    assert (traj.cost_usd, traj.tokens_in) == (0.002, 50)
    # The agent never sees the target, the graders or the references.
    sent = json.loads((tmp_path / "stdin.json").read_text())
    assert sent == {"protocol": "meridian.agent/1", "id": "t1", "input": "What is 6 * 7?",
                    "metadata": {"unit": "none"}, "timeout_s": 10.0}
    assert "42" not in (tmp_path / "stdin.json").read_text()


def test_visible_fields_are_the_only_extras_an_agent_sees(tmp_path: Path) -> None:
    spec = script(tmp_path, f"""
        open({str(tmp_path / "stdin.json")!r}, "w").write(sys.stdin.read())
        print(json.dumps({{"final_output": "x"}}))
    """)
    load_agent(spec).run(TASK.model_copy(update={"visible": ["expected_tools", "tags"]}))
    sent = json.loads((tmp_path / "stdin.json").read_text())
    assert sent["expected_tools"] == ["calculator"] and sent["tags"] == ["arithmetic"]
    assert "expected" not in sent and "graders" not in sent and "reference_steps" not in sent
    shown = TASK.for_agent()
    assert shown.expected is None and not hasattr(shown, "graders")
    with pytest.raises(ValueError, match="graders are never shown to the agent"):
        Task(id="x", input="q", visible=["graders"])


def test_command_agent_exit_75_is_a_transient_infra_error(tmp_path: Path) -> None:
    agent = load_agent(script(tmp_path, "sys.stderr.write('429 rate limited'); sys.exit(75)"))
    with pytest.raises(InfraError, match=r"exited 75 \(temporary failure\): 429 rate limited$"):
        agent.run(TASK)


@pytest.mark.parametrize(("body", "message"), [
    ("sys.stderr.write('Traceback\\nKeyError: boom\\n'); sys.exit(3)",
     "exited 3: Traceback | KeyError: boom"),
    ("pass", "printed nothing on stdout (expected a trajectory as JSON)"),
    ("print('the answer is 42')", "stdout is not JSON (Expecting value at line 1): 'the answer is 42'"),
    ("print(json.dumps([1, 2]))", "stdout is JSON but not an object (expected a trajectory)"),
    ("print(json.dumps({'task_id': 'other', 'final_output': 1}))",
     "trajectory is for task 'other', expected 't1'"),
    ("print(json.dumps({'steps': [{'index': 0, 'kind': 'tool'}]}))",
     "stdout is not a trajectory: steps[0].name: required field is missing"),
    ("print(json.dumps({'final_output': 1, 'surprise': True}))",
     "stdout is not a trajectory: surprise: unknown key"),
])
def test_command_agent_bad_output_is_the_agents_failure(tmp_path: Path, body: str, message: str) -> None:
    agent = load_agent(script(tmp_path, body))
    with pytest.raises(AgentInfraError) as err:
        agent.run(TASK)
    assert str(err.value) == f"agent {agent.program!r}: {message}"  # type: ignore[attr-defined]


def test_command_agent_that_hangs_is_killed_at_the_task_timeout(tmp_path: Path) -> None:
    agent = load_agent(script(tmp_path, "import time; time.sleep(30)"))
    # TaskTimeout, not AgentInfraError: the runner records a hang as the agent failing.
    with pytest.raises(TaskTimeout, match=r"no answer within 0.5s \(killed\)$"):
        agent.run(TASK.model_copy(update={"timeout_s": 0.5}))


def test_command_agent_missing_or_unexecutable_program_is_refused_at_load(tmp_path: Path) -> None:
    with pytest.raises(MeridianError, match=r"^agent 'command:.*nope': program '.*nope' not found$"):
        load_agent(f"command:{tmp_path / 'nope'}")
    plain = tmp_path / "plain.sh"
    plain.write_text("#!/bin/sh\n")
    with pytest.raises(MeridianError, match=r"program '.*plain.sh' is not executable$"):
        load_agent(f"command:{plain}")


def test_command_agent_version_fingerprints_the_script_too(tmp_path: Path) -> None:
    spec = script(tmp_path, "print('{}')")
    before = load_agent(spec).version
    (tmp_path / "agent.py").write_text("import json, sys\nprint('{\"final_output\": 1}')\n")
    after = load_agent(spec).version
    assert before.startswith("sha256:") and after.startswith("sha256:") and before != after


# ------------------------------------------------------------------ reference tools


@pytest.mark.parametrize(("expression", "value"), [
    ("6 * 7", 42.0), ("(12 + 30) / 2", 21.0), ("2 ^ 10", 1024.0), ("-3 + 5 % 3", -1.0), ("7 // 2", 3.0),
])
def test_calculator(expression: str, value: float) -> None:
    assert calculate(expression) == value


@pytest.mark.parametrize(("expression", "message"), [
    ("__import__('os').system('true')", "unsupported element"),
    ("x + 1", "unsupported element 'x'"),
    ("1 / 0", "division by zero"),
    ("2 ** 100000", "exponent 100000 is too large"),
    ("15% of 80", "cannot parse"),
    ("'a' * 3", "unsupported element"),
])
def test_calculator_refuses_anything_but_arithmetic(expression: str, message: str) -> None:
    with pytest.raises(ToolError, match=message):
        calculate(expression)


def test_knowledge_base_normalises_keys_and_unstable_entries_fail_once() -> None:
    kb = KnowledgeBase()
    assert kb.lookup("What is the capital of France?") == "Paris"
    with pytest.raises(ToolError, match="timed out"):
        kb.lookup("the capital of Kenya")
    assert kb.lookup("capital of kenya") == "Nairobi"
    with pytest.raises(ToolError, match="no entry for 'capital of atlantis'"):
        kb.lookup("capital of Atlantis")


def test_string_ops_and_number_format() -> None:
    assert string_op("reverse", "Tokyo") == "oykoT"
    assert string_op("vowel_count", "evaluation") == 6
    with pytest.raises(ToolError, match="unknown string operation 'rot13'"):
        string_op("rot13", "x")
    assert (format_number(42.0), format_number(1 / 3), format_number(1e20)) == ("42", "0.3333333333", "1e+20")


def test_intents() -> None:
    assert read_intent("What is 6 * 7?").kind == "arithmetic"
    assert read_intent("Reverse 'Hello'.").literal == "Hello"
    assert read_intent("Reverse the capital of Japan.").subject == "the capital of Japan"
    assert read_intent("What is pi times 2?").kind == "lookup_arith"
    assert read_intent("Write a poem.").kind == "unknown"


def test_v1_and_v2_give_the_same_answer_with_different_trajectories() -> None:
    v1, v2 = ReferenceAgent("v1", simulate_latency=False), ReferenceAgent("v2", simulate_latency=False)
    t1, t2 = v1.run(TASK), v2.run(TASK)
    assert t1.final_output == t2.final_output == "42"
    assert [s.name for s in t2.steps] == ["route", "calculator"]
    assert [s.name for s in t1.steps] == ["route", "lookup", "lookup", "calculator", "calculator"]
    assert [s.error is not None for s in t1.steps] == [False, True, True, False, False]
    assert t1.cost_usd > t2.cost_usd > 0
    # Deterministic: the same task gives the same steps, figures and answer every time.
    again = v1.run(TASK)
    strip = {"latency_s": True, "steps": {"__all__": {"latency_s", "started_at"}}}
    assert again.model_dump(exclude=strip) == t1.model_dump(exclude=strip)  # type: ignore[arg-type]


def test_v2_retries_a_timed_out_lookup_and_v1_gives_up() -> None:
    task = Task(id="k", input="What is the capital of Kenya?")
    v1 = ReferenceAgent("v1", simulate_latency=False).run(task)
    v2 = ReferenceAgent("v2", simulate_latency=False).run(task)
    assert (v2.completed, v2.final_output) == (True, "Nairobi")
    assert [s.error is not None for s in v2.steps] == [False, True, False]
    assert not v1.completed and v1.final_output is None
    assert v1.error == ("gave up after a failed step: ToolError: knowledge base timed out looking up "
                        "'capital of kenya'")


def test_reference_agent_rejects_unknown_versions() -> None:
    with pytest.raises(ValueError, match="v1 or v2"):
        ReferenceAgent("v3")  # type: ignore[arg-type]


def test_the_reference_agent_round_trips_through_the_command_protocol(tmp_path: Path) -> None:
    body = """
        from meridian.evals.agents import load_agent
        from meridian.evals.agents.command import read_task
        task = read_task(sys.stdin.read())
        print(load_agent("reference-v2").run(task).model_dump_json())
    """
    spec = script(tmp_path, f"sys.path.insert(0, {str(Path.cwd())!r})\n" + textwrap.dedent(body))
    traj = load_agent(spec).run(TASK)
    assert traj.final_output == "42" and [s.name for s in traj.steps] == ["route", "calculator"]
    assert json.loads(traj.model_dump_json())["steps"][1]["input"] == {"expression": "6 * 7"}
