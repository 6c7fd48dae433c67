"""The definition a verdict is bound to, and its hash (``spec_hash``).

A verdict is bound to the artifacts it read (``subject``) and to the definition that
decided it: the gate's entry in ``gates.yaml`` as loaded and the evaluator settings
from ``config.yaml`` in effect for it. Editing either after a pass (``threshold: 0``,
a dropped check, a command evaluator that prints 10s) makes the gate stale, exactly
as an edited artifact does.

What is hashed is built field by field rather than dumped from the models, so a
Meridian release that adds an optional key to ``gates.yaml`` does not turn every
passed gate stale. Only what can change an outcome is in it:

- the gate: ``acceptance``, ``artifacts``, ``checks`` (command and timeout),
  ``evaluate`` (threshold, evaluator, command; ``require`` and ``block_pre_existing``
  when set), ``approval``, ``features``; ``exclude`` when non-empty, ``mutation`` when
  not the default (keys added later are hashed only when set, so a verdict bound
  before they existed stays current);
- the effective evaluator settings (``config.yaml`` with the gate's ``evaluate:``
  overrides): ``kind`` as configured (``auto`` is not resolved: whether
  ``ANTHROPIC_API_KEY`` is set in the shell that runs ``status`` is not a change of
  definition; the verdict's ``evaluator`` records what ran), ``threshold``, ``command``
  when the kind is ``command``, the model when the kind is ``auto`` or ``anthropic``;
- for a gate requiring hardened features (``feature_tests``), each one's test lists
  from the features file (None while the file does not list it);
- for a gate judged by ``evaluator: command``, the git blob id of each tracked file of
  the project the command names (``programs``: ``python3 tools/judge.py`` runs
  ``tools/judge.py``, and editing it into a rubber stamp makes the pass stale;
  ``meridian.gates.programs``), present only when it names one.

``description``, ``needs`` and ``estimate_hours`` are not in it: ``needs`` are enforced
by the state of the gates they name, and the other two do not decide anything.
"""

from __future__ import annotations

import hashlib
from typing import Any

from meridian.config import Config, EvaluatorSettings
from meridian.gates.graph import GateSpec, Graph, MutationSpec
from meridian.records import canonical_json


def evaluator_settings(config: Config, spec: GateSpec) -> EvaluatorSettings:
    """The config's evaluator settings with the gate's ``evaluate:`` overrides applied."""
    overrides: dict[str, object] = {}
    if spec.evaluate.threshold is not None:
        overrides["threshold"] = spec.evaluate.threshold
    if spec.evaluate.evaluator is not None:
        overrides["kind"] = spec.evaluate.evaluator
    if spec.evaluate.command is not None:
        overrides["command"] = spec.evaluate.command
    if spec.evaluate.require is not None:
        overrides["require"] = spec.evaluate.require
    if spec.evaluate.block_pre_existing is not None:
        overrides["block_pre_existing"] = spec.evaluate.block_pre_existing
    return config.evaluator.model_copy(update=overrides)


def _evaluator(settings: EvaluatorSettings) -> dict[str, Any]:
    effective: dict[str, Any] = {"kind": settings.kind, "threshold": settings.threshold}
    if settings.kind == "command":
        effective["command"] = settings.command
    if settings.kind in ("auto", "anthropic"):
        effective["model"] = settings.anthropic.model
        if settings.anthropic.base_url is not None:  # absent by default: old hashes hold
            effective["base_url"] = settings.anthropic.base_url
    if settings.kind == "claude-code":
        effective["model"] = settings.claude_code.model
    # Newer keys only when set, so a definition hashed before they existed is unchanged.
    if settings.require is not None:
        effective["require"] = settings.require
    if settings.block_pre_existing:
        effective["block_pre_existing"] = True
    return effective


def definition(graph: Graph, gate_id: str) -> dict[str, Any]:
    """Everything that decides ``gate_id``'s outcome, as plain JSON values."""
    spec = graph.gate(gate_id)
    approval = None
    if spec.approval is not None:
        approval = {"token_sha256": (spec.approval.token_sha256 or "").lower() or None,
                    "token_env": spec.approval.token_env}
    features = None
    if spec.features is not None:
        features = {"hardened": list(spec.features.hardened), "junit": spec.features.junit}
    evaluate: dict[str, Any] = {"threshold": spec.evaluate.threshold,
                                "evaluator": spec.evaluate.evaluator,
                                "command": spec.evaluate.command}
    if spec.evaluate.require is not None or spec.evaluate.block_pre_existing is not None:
        evaluate["require"] = spec.evaluate.require
        evaluate["block_pre_existing"] = spec.evaluate.block_pre_existing
    gate: dict[str, Any] = {
        "acceptance": spec.acceptance,
        "artifacts": list(spec.artifacts),
        "checks": [{"run": check.run, "timeout": check.timeout} for check in spec.checks],
        "evaluate": evaluate,
        "approval": approval,
        "features": features,
    }
    # Keys added after verdicts were first bound to definitions: hashed only when they
    # differ from the default, so existing passes do not all turn stale.
    if spec.exclude:
        gate["exclude"] = list(spec.exclude)
    if spec.mutation != MutationSpec():
        gate["mutation"] = spec.mutation.model_dump(mode="json")
    settings = evaluator_settings(graph.config, spec)
    defined: dict[str, Any] = {"gate": gate, "evaluator": _evaluator(settings)}
    if settings.kind == "command":
        # The repository files the command runs (``python3 tools/judge.py``): editing
        # one changes the judge. Present only when the command names one, so a command
        # verdict bound before this was hashed stays current unless it runs a file.
        from meridian.gates.programs import blob_id, command_files

        named = command_files(graph.root, settings.command)
        if named:
            defined["programs"] = {path: blob_id(graph.root / path) for path in named}
    if spec.features is not None and spec.features.hardened:
        # What proves each required feature: editing its test lists is a change of definition.
        defined["feature_tests"] = {
            feature_id: (graph.features[feature_id].tests.model_dump(mode="json")
                         if feature_id in graph.features else None)
            for feature_id in spec.features.hardened}
    return defined


def hash_definition(value: dict[str, Any]) -> str:
    """sha256 hex of the canonical JSON (sorted keys, no spaces) of a definition."""
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


def spec_hash(graph: Graph, gate_id: str) -> str:
    return hash_definition(definition(graph, gate_id))


def changed_parts(before: dict[str, Any], now: dict[str, Any]) -> list[str]:
    """Which parts differ (``checks``, ``evaluator.threshold``, ``feature_tests``, ...)."""
    parts: list[str] = []
    for section in sorted(set(before) | set(now)):
        old, new = before.get(section), now.get(section)
        if old == new:
            continue
        if section in ("gate", "evaluator") and isinstance(old, dict) and isinstance(new, dict):
            prefix = "" if section == "gate" else "evaluator."
            parts += [prefix + key for key in sorted(set(old) | set(new))
                      if old.get(key) != new.get(key)]
        else:
            parts.append(section)
    return sorted(parts)
