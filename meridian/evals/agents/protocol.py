"""The ``command:`` agent protocol as JSON Schemas (``meridian eval schema``).

Version 1 (``meridian.agent/1``): what the program reads on stdin is ``input``,
what it prints on stdout is ``output``. ``command.py`` is the implementation; these
schemas are generated from the same pydantic models, so they cannot drift from it.
"""

from __future__ import annotations

from typing import Any

from meridian.evals.agents.command import EX_TEMPFAIL, PROTOCOL
from meridian.evals.types import AgentTask, Trajectory


def input_schema() -> dict[str, Any]:
    schema = AgentTask.model_json_schema()
    schema["title"] = "meridian.agent/1 input (stdin)"
    schema["description"] = (
        "The task as the agent may see it. Only id, input, metadata and timeout_s are "
        "always present; other fields appear only when the suite lists them under "
        "`visible:`. Targets, graders and references are never sent otherwise.")
    schema["properties"] = {"protocol": {"const": PROTOCOL, "description": "protocol version"},
                            **schema["properties"]}
    schema["required"] = ["protocol", "id", "input", "metadata", "timeout_s"]
    return schema


def output_schema() -> dict[str, Any]:
    schema = Trajectory.model_json_schema()
    schema["title"] = "meridian.agent/1 output (stdout)"
    schema["description"] = (
        "The trajectory: one JSON object, the whole stdout or its last line. task_id "
        "defaults to the task's, totals to the sums over the steps, completed to 'a final "
        "output and no error'. latency_s is what the agent reports; the harness measures "
        "its own and uses that. Exit 0 with this object; exit "
        f"{EX_TEMPFAIL} (EX_TEMPFAIL) for a transient failure (retried, an infra error); "
        "any other exit status, or output that is not this object, fails the task.")
    properties = dict(schema["properties"])
    properties.pop("reported_latency_s", None)
    schema["properties"] = {"protocol": {"enum": [PROTOCOL, 1],
                                         "description": "optional; when given, must be 1"},
                            **properties}
    schema["required"] = []
    return schema


def schemas() -> dict[str, Any]:
    return {"protocol": PROTOCOL, "input": input_schema(), "output": output_schema()}
