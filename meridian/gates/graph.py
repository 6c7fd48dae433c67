"""``.meridian/gates.yaml``: the gate graph, validated with file and line.

The models here are the single source of the file's shape; the JSON Schema published
at ``.meridian-template/schemas/gates.schema.json`` is generated from them
(``python -m meridian.gates.graph`` prints it). Beyond field types, loading checks
what a schema cannot: duplicate ids, needs naming unknown gates, and cycles, which
are printed as a path (``a -> b -> c -> a``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

from meridian import yamlio
from meridian.config import Config, load_config
from meridian.errors import ConfigError, MeridianError
from meridian.gates import globs, graph_rules
from meridian.gates.graph_rules import junit_problem

if TYPE_CHECKING:  # meridian.features is imported only when a gate requires features
    from meridian.features import Feature

DEFAULT_CHECK_TIMEOUT_S = 600.0
DEFAULT_JUNIT = "build/junit.xml"
GATE_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"
SCHEMA_ID = "https://meridian.invalid/schemas/gates.schema.json"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CheckSpec(_Strict):
    """A shell command run from the repository root; exit 0 means the check passed."""

    run: str = Field(min_length=1, description="shell command, run from the repository root")
    timeout: float = Field(default=DEFAULT_CHECK_TIMEOUT_S, gt=0, allow_inf_nan=False,
                           description="seconds before the command is killed (a failed check)")


def _check_from_string(value: Any) -> Any:
    if isinstance(value, str):
        return {"run": value}
    if not isinstance(value, dict):
        raise PydanticCustomError(
            "check", "a check is a command string or a mapping with run: and timeout:")
    return value


Check = Annotated[CheckSpec, BeforeValidator(_check_from_string,
                                             json_schema_input_type=str | CheckSpec)]


class EvaluateSpec(_Strict):
    threshold: float | None = Field(
        default=None, ge=0, le=10,
        description="pass needs the weighted overall >= this (default: config evaluator.threshold)")
    evaluator: Literal["auto", "heuristic", "anthropic", "claude-code", "command"] | None = Field(
        default=None, description="override the config's evaluator kind for this gate")
    command: str | None = Field(
        default=None, min_length=1,
        description="program for the command evaluator (bundle JSON on stdin, verdict JSON out)")
    require: Literal["model"] | None = Field(
        default=None, description="'model': the offline heuristic alone cannot pass this gate")
    block_pre_existing: bool | None = Field(
        default=None, description="offline findings in lines the gate did not change block too "
        "(default: config evaluator.block_pre_existing, false)")


DEFAULT_MUTATION_FUNCTIONS = 20
DEFAULT_MUTATION_TIMEOUT_S = 300.0


class MutationSpec(_Strict):
    """The mutation smoke check's switch and budget (``meridian.gates.mutation``).
    In gates.yaml ``mutation: false`` is short for ``{enabled: false}``, ``true`` for
    the defaults."""

    enabled: bool = Field(default=True, description="false: the check does not run")
    max_functions: int = Field(
        default=DEFAULT_MUTATION_FUNCTIONS, ge=1, le=10_000,
        description="changed functions mutated at most; the rest are reported as not tried")
    timeout_s: float = Field(
        default=DEFAULT_MUTATION_TIMEOUT_S, gt=0, allow_inf_nan=False,
        description="seconds for all mutants together; those not finished in time are "
        "reported as timed out or not tried, never as passed")


def _mutation_from_bool(value: Any) -> Any:
    if isinstance(value, bool):
        return {"enabled": value}
    if isinstance(value, (dict, MutationSpec)):
        return value
    raise PydanticCustomError(
        "mutation", "expected false (switched off), true (the defaults) or a mapping with "
        "max_functions: (an integer >= 1) and timeout_s: (seconds > 0)")


Mutation = Annotated[MutationSpec, BeforeValidator(_mutation_from_bool,
                                                   json_schema_input_type=bool | MutationSpec)]


class ApprovalSpec(_Strict):
    """A token a human must give after the verdict passed. The token itself is never
    stored here: either its sha256 (recommended) or the name of an environment
    variable that holds it in the approver's shell."""

    token_sha256: str | None = Field(
        default=None, pattern=r"^[0-9a-fA-F]{64}$",
        description="sha256 hex of the token (printf %s TOKEN | sha256sum)")
    token_env: str | None = Field(
        default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
        description="environment variable holding the token where the human approves")

    @model_validator(mode="before")
    @classmethod
    def _never_plain(cls, value: Any) -> Any:
        if isinstance(value, dict) and "token" in value:
            raise PydanticCustomError(
                "plain_token", "never store the token itself; give token_sha256 "
                "(printf %s TOKEN | sha256sum) or token_env")
        return value

    @model_validator(mode="after")
    def _exactly_one(self) -> ApprovalSpec:
        if (self.token_sha256 is None) == (self.token_env is None):
            raise PydanticCustomError("approval", "give exactly one of token_sha256 or token_env")
        return self


class FeatureRequirements(_Strict):
    """Features (of the features file, ``paths.features``) the gate needs hardened.

    At submit, after the checks ran, completion is computed from the JUnit report at
    ``junit``, which one of the checks writes (``pytest --junitxml=build/junit.xml``).
    """

    hardened: list[str] = Field(default_factory=list,
                                description="feature ids that must be hardened for the gate to pass")
    junit: str = Field(default=DEFAULT_JUNIT, min_length=1,
                       description="JUnit XML report a check of this gate writes, relative to "
                       "the repository root; read at submit after the checks ran")


class GateSpec(_Strict):
    id: str = Field(pattern=GATE_ID_PATTERN)
    needs: list[str] = Field(default_factory=list, description="gates that must pass first")
    description: str = ""
    acceptance: str = Field(default="", description="the criteria the evaluator judges against")
    artifacts: list[str] = Field(default_factory=list,
                                 description="globs relative to the repository root")
    checks: list[Check] = Field(default_factory=list)
    evaluate: EvaluateSpec = Field(default_factory=EvaluateSpec)
    approval: ApprovalSpec | None = None
    estimate_hours: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    features: FeatureRequirements | None = None
    exclude: list[str] = Field(
        default_factory=list, description="globs of artifact files the offline scan does not "
        "judge (they stay artifacts: in the subject, the diff and a model's bundle)")
    mutation: Mutation = Field(
        default_factory=MutationSpec, description="the mutation smoke check at gate submit: "
        "each changed Python function's body replaced by a raise, the checks run against "
        "it; false switches it off (default: on, max_functions 20, timeout_s 300)")


class GatesFile(_Strict):
    model_config = ConfigDict(
        extra="forbid",
        title="Meridian gate graph",
        json_schema_extra={"$id": SCHEMA_ID},
    )

    version: Literal[1] = 1
    gates: list[GateSpec] = Field(min_length=1)


@dataclass(frozen=True)
class Graph:
    """A validated gate graph; ``order`` is dependency order (declaration order breaks ties)."""

    path: Path
    root: Path
    specs: dict[str, GateSpec]
    order: list[str]
    lines: dict[str, int] = field(default_factory=dict)
    # The project settings the graph was loaded with: a gate's definition (what its
    # verdict is bound to, see ``meridian.gates.definition``) includes its evaluator settings.
    config: Config = field(default_factory=Config)
    # The features file's definitions of the features gates require (empty when no gate
    # requires any or the file does not exist): part of those gates' definitions too.
    features: dict[str, Feature] = field(default_factory=dict)

    def __contains__(self, gate_id: object) -> bool:
        return gate_id in self.specs

    def gate(self, gate_id: str) -> GateSpec:
        try:
            return self.specs[gate_id]
        except KeyError:
            raise MeridianError(
                f"{self.path}: no gate '{gate_id}' (gates: {', '.join(self.order)})"
            ) from None

    def ordered(self) -> list[GateSpec]:
        return [self.specs[g] for g in self.order]

    def dependents(self, gate_id: str) -> list[str]:
        return [g for g in self.order if gate_id in self.specs[g].needs]

    def artifact_matcher(self, gate_id: str) -> Callable[[str], bool]:
        patterns = tuple(self.gate(gate_id).artifacts)
        return lambda path: globs.matches_any(patterns, path)

    def gate_for_path(self, path: str) -> list[str]:
        """Ids of the gates whose artifact globs cover ``path`` (repo-relative), in order."""
        rel = globs.normalise(path)
        return [g for g in self.order if globs.matches_any(self.specs[g].artifacts, rel)]


def gates_path(root: Path, config: Config | None = None) -> Path:
    config = config or load_config(root)
    return root / config.paths.gates


def load_graph(root: Path, config: Config | None = None) -> Graph:
    """Load and validate the project's gate graph (ConfigError names file and line)."""
    config = config or load_config(root)
    path = gates_path(root, config)
    if not yamlio.present(path):
        raise ConfigError(
            f"{_shown(path)}: no gate graph; write one or run `meridian init --template NAME` "
            "(`meridian init --list-templates` lists them)"
        )
    located = yamlio.load(_shown(path))
    graph = parse_graph(located, root, config=config, features_path=root / config.paths.features)
    _token_env_policy(root, path, located, graph)
    return graph


TOKEN_ENV_FIX = ("use token_sha256 instead (printf %s TOKEN | sha256sum): an agent that can "
                 "read the variable has the token")
_warned_token_env: set[tuple[str, str, str]] = set()


def _committed_token_envs(root: Path, path: Path) -> set[tuple[str, str]] | None:
    """(gate, variable) of every ``approval.token_env`` in the gates file as HEAD has it;
    None when that cannot be read (not a git repository, the file outside it)."""
    import pygit2

    from meridian import gitio

    try:
        repo = gitio.open_repo(root)
        workdir = gitio.workdir(repo)
        if workdir is None:
            return None
        relative = path.resolve().relative_to(workdir.resolve()).as_posix()
        head = gitio.head_commit(repo)
        if head is None:
            return set()
        return token_envs_at(repo, head, relative)
    except (MeridianError, ValueError, OSError, pygit2.GitError):
        return None


def token_envs_at(repo: Any, commit: str | None, relative: str) -> set[tuple[str, str]]:
    """(gate, variable) of every ``approval.token_env`` in the gates file ``relative`` at
    ``commit`` (none: no commit, no such file, or a file that does not parse).

    ``meridian ci`` and the pre-push hook compare these between a trusted point (the
    range's base, the remote's tip, a pushed commit's parent) and the pushed tip: a
    ``--no-verify`` commit makes a token_env "existing" at HEAD, never at the base."""
    import pygit2

    from meridian import gitio

    if commit is None:
        return set()
    blob = gitio.blob_data(gitio.tree_entry(
        repo, gitio.commit_tree(repo, pygit2.Oid(hex=commit)), relative))
    if blob is None:
        return set()
    try:
        data = yamlio.parse(blob.decode("utf-8", "replace"), relative).data
    except ConfigError:
        return set()
    found: set[tuple[str, str]] = set()
    gates = data.get("gates") if isinstance(data, dict) else None
    for entry in gates if isinstance(gates, list) else []:
        approval = entry.get("approval") if isinstance(entry, dict) else None
        if isinstance(approval, dict) and isinstance(approval.get("token_env"), str):
            found.add((str(entry.get("id")), approval["token_env"]))
    return found


def _token_env_policy(root: Path, path: Path, located: yamlio.Located, graph: Graph) -> None:
    """``approval.token_env`` is refused in a new config: one that HEAD's gates file does
    not already hold for that gate and variable (adding it, or pointing it at another
    variable, is new). An existing one is loaded with a warning naming the fix."""
    using = [(index, spec) for index, spec in enumerate(graph.ordered())
             if spec.approval is not None and spec.approval.token_env is not None]
    if not using:
        return
    committed = _committed_token_envs(root, path)
    entries = located.data.get("gates") if isinstance(located.data, dict) else None
    for _, spec in using:
        assert spec.approval is not None and spec.approval.token_env is not None
        index = next((i for i, e in enumerate(entries or [])
                      if isinstance(e, dict) and e.get("id") == spec.id), 0)
        loc = ("gates", index, "approval", "token_env")
        if committed is not None and (spec.id, spec.approval.token_env) not in committed:
            raise located.error(loc, f"gate {spec.id}: token_env is refused in new configs; "
                                     + TOKEN_ENV_FIX)
        key = (str(path), spec.id, spec.approval.token_env)
        if key not in _warned_token_env:
            _warned_token_env.add(key)
            print(f"meridian: warning: {located.where(loc)}: gate {spec.id}: approval.token_env "
                  f"${spec.approval.token_env} is deprecated; {TOKEN_ENV_FIX}", file=sys.stderr)


def _shown(path: Path) -> Path:
    """``path`` relative to the current directory when it is below it (shorter messages)."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve())
    except ValueError:
        return path


def parse_graph(located: yamlio.Located, root: Path, *, config: Config | None = None,
                features_path: Path | None = None) -> Graph:
    """Validate a loaded gates file. ``features_path``: the features file, against which
    the feature ids gates require are checked when it exists."""
    if not isinstance(located.data, dict):
        raise located.error((), "expected a mapping with a 'gates:' list")
    model = yamlio.validate(GatesFile, located)
    specs: dict[str, GateSpec] = {}
    lines: dict[str, int] = {}
    for index, spec in enumerate(model.gates):
        if spec.id in specs:
            raise located.error(
                ("gates", index, "id"),
                f"duplicate gate id '{spec.id}' (first declared at line {lines[spec.id]})",
            )
        specs[spec.id] = spec
        lines[spec.id] = located.line(("gates", index, "id")) or 0
    for index, spec in enumerate(model.gates):
        for need_index, need in enumerate(spec.needs):
            if need in spec.needs[:need_index]:
                raise located.error(("gates", index, "needs", need_index),
                                    f"'{need}' is already listed in needs")
            if need not in specs:
                raise located.error(
                    ("gates", index, "needs", need_index),
                    f"unknown gate '{need}' (gates: {', '.join(specs)})",
                )
        for key in ("artifacts", "exclude"):
            for glob_index, pattern in enumerate(getattr(spec, key)):
                problem = globs.pattern_problem(pattern)
                if problem:
                    raise located.error(("gates", index, key, glob_index),
                                        f"'{pattern}': {problem}")
    for index, spec in enumerate(model.gates):
        if spec.features is not None:
            _check_feature_requirement(located, index, spec)
    features = _required_features(located, model.gates, features_path)
    cycle = find_cycle(specs)
    if cycle:
        # Point at the needs entry of the first-declared gate that closes the cycle.
        index = list(specs).index(cycle[0])
        need_index = specs[cycle[0]].needs.index(cycle[-2])
        raise located.error(("gates", index, "needs", need_index),
                            "cycle in needs: " + " -> ".join(cycle)
                            + " (each gate needs the one before it)")
    return Graph(path=Path(located.path), root=root, specs=specs,
                 order=dependency_order(specs), lines=lines, config=config or Config(),
                 features=features)


def _check_feature_requirement(located: yamlio.Located, index: int, spec: GateSpec) -> None:
    assert spec.features is not None
    where = ("gates", index, "features")
    for position, feature_id in enumerate(spec.features.hardened):
        if feature_id in spec.features.hardened[:position]:
            raise located.error((*where, "hardened", position),
                                f"'{feature_id}' is already listed in hardened")
    junit = spec.features.junit
    problem = junit_problem(junit)
    if problem:
        raise located.error((*where, "junit"), f"'{junit}': {problem}")


def _required_features(located: yamlio.Located, gates: list[GateSpec],
                       features_path: Path | None) -> dict[str, Feature]:
    """The definitions of the features gates require; an unknown id is a located error."""
    required = [spec for spec in gates if spec.features and spec.features.hardened]
    if not required or features_path is None or not features_path.is_file():
        return {}
    from meridian.features import load_features

    shown = yamlio.display_path(features_path)
    known = {feature.id: feature for feature in load_features(features_path)}
    for index, spec in enumerate(gates):
        for position, feature_id in enumerate(spec.features.hardened if spec.features else []):
            if feature_id not in known:
                listed = ", ".join(known) or "none"
                raise located.error(("gates", index, "features", "hardened", position),
                                    f"unknown feature '{feature_id}' (features in {shown}: {listed})")
    return {feature_id: known[feature_id] for spec in required
            for feature_id in (spec.features.hardened if spec.features else [])}


def find_cycle(specs: dict[str, GateSpec]) -> list[str] | None:
    """The first cycle found (declaration order), as a closed path [a, b, ..., a]."""
    return graph_rules.find_cycle({gate_id: spec.needs for gate_id, spec in specs.items()})


def dependency_order(specs: dict[str, GateSpec]) -> list[str]:
    """Every gate after all of its needs; among ready gates, declaration order."""
    return graph_rules.dependency_order({gate_id: spec.needs for gate_id, spec in specs.items()})


def schema_json() -> str:
    """The published JSON Schema of gates.yaml (stable text: sorted keys, 2-space indent;
    with ``$schema`` and a title: ``meridian.schemas``)."""
    from meridian import schemas

    return schemas.render(schemas.gates_schema())


if __name__ == "__main__":
    print(schema_json(), end="")
