"""Set up Meridian in a repository. Every step is idempotent and says what it did."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from meridian import gitio
from meridian.config import CONFIG_PATH, DEFAULT_CONFIG_TEXT, load_config
from meridian.errors import MeridianError
from meridian.ledger import Ledger


@dataclass
class Outcome:
    created: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        warned = [f"warning: {item}" for item in self.warnings]
        if not self.created:
            return ["Meridian is already set up here; nothing changed."] + [
                f"  kept {item}" for item in self.kept
            ] + warned
        return ([f"created {item}" for item in self.created]
                + [f"kept {item}" for item in self.kept] + warned)


def _fetch_remote_state(ledger: Ledger, remote: str, outcome: Outcome) -> bool:
    """In a clone, fetch the remote's state branch so init adopts it (one history).

    An unreachable remote is not fatal: a local history is started, and a later
    `meridian sync` merges the two by record id.
    """
    if not gitio.has_remote(ledger.repo, remote):
        return False
    from meridian.sync import fetch_state

    try:
        return fetch_state(ledger, remote) is not None
    except MeridianError as exc:
        outcome.warnings.append(f"could not fetch {ledger.branch} from {remote} ({exc}); "
                                "started a local one, `meridian sync` merges them later")
        return False


def initialise(path: str, *, template: str | None = None, hooks: bool = True,
               claude: bool = False, ci: str | None = None, features: bool = False) -> Outcome:
    repo = gitio.open_repo(path)
    root = gitio.workdir(repo)
    if root is None:
        raise MeridianError(f"{repo.path}: a bare repository has no work tree; run init in a clone")
    from meridian import rules, schemas, templates
    from meridian.hooks import ci as ci_templates
    from meridian.hooks import claude_settings, install

    if template is not None and template not in templates.list_templates():
        raise MeridianError(f"--template {template}: no such template (templates: "
                            f"{', '.join(templates.list_templates())})")
    outcome = Outcome()

    config_file = root / CONFIG_PATH
    if config_file.exists():
        outcome.kept.append(str(CONFIG_PATH))
    else:
        config_file.parent.mkdir(parents=True, exist_ok=True)
        config_file.write_text(DEFAULT_CONFIG_TEXT, encoding="utf-8")
        schemas.annotate(config_file, root, "config")
        outcome.created.append(str(CONFIG_PATH))
    config = load_config(root)
    ledger = Ledger(repo, config.branch)

    if ledger.exists():
        outcome.kept.append(f"branch {config.branch}")
    elif _fetch_remote_state(ledger, config.remote, outcome) and ledger.adopt_remote(config.remote):
        outcome.created.append(f"branch {config.branch} (adopted from {config.remote})")
    else:
        ledger.emit("meridian.init", {"branch": config.branch, **({"template": template} if template else {})},
                    summary="meridian init")
        outcome.created.append(f"branch {config.branch}")

    written = rules.write_default_rules(root)
    if written:
        schemas.annotate(written, root, "rules")
    (outcome.created if written else outcome.kept).append(config.paths.rules)
    gates_file = root / config.paths.gates
    if template:
        for created in templates.install_template(template, root):
            if Path(created) == gates_file:
                schemas.annotate(created, root, "gates")
            outcome.created.append(str(Path(created).relative_to(root)))
    if features:
        features_file = root / config.paths.features
        if features_file.exists():
            outcome.kept.append(config.paths.features)
        else:
            features_file.parent.mkdir(parents=True, exist_ok=True)
            features_file.write_bytes(
                (templates.template_root() / "features.yaml").read_bytes())
            schemas.annotate(features_file, root, "features")
            outcome.created.append(config.paths.features)
    copied, new_folder = schemas.install(root)
    if new_folder:
        outcome.created.append(f"{schemas.PROJECT_SCHEMAS}/ (JSON Schemas for editors)")
    elif copied:
        outcome.created.append(f"{schemas.PROJECT_SCHEMAS}/ (updated: {', '.join(copied)})")
    if hooks:
        install.install_for_init(repo, outcome)
    if claude:
        claude_settings.merge_into(root, outcome)
    if ci:
        name, email = gitio.identity(repo)
        ci_templates.install(ci, root, outcome, owner=email or name)
    return outcome
