"""``meridian init --ci NAME``: copy a CI workflow template into the project.

Templates live in ``.meridian-template/ci/`` (see ``meridian.templates``). An existing
workflow file is never overwritten: it may hold the user's edits.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from meridian.errors import MeridianError

# name -> (template file under ci/, destination relative to the project root)
CI_TEMPLATES: dict[str, tuple[str, Path]] = {
    "github": ("github-actions.yml", Path(".github") / "workflows" / "meridian.yml"),
}


def template_path(name: str) -> Path:
    from meridian.templates import template_root

    if name not in CI_TEMPLATES:
        raise MeridianError(f"unknown CI template {name!r} (templates: {', '.join(CI_TEMPLATES)})")
    path = template_root() / "ci" / CI_TEMPLATES[name][0]
    if not path.is_file():
        raise MeridianError(f"{path}: CI template missing (this installation is incomplete)")
    return path


# Where GitHub looks for a CODEOWNERS file, in its order.
CODEOWNERS_PLACES = (Path(".github") / "CODEOWNERS", Path("CODEOWNERS"), Path("docs") / "CODEOWNERS")
OWNED = ("/.meridian/", "/.claude/", "/.github/workflows/", "/.pre-commit-config.yaml")


def codeowners_entry(owner: str) -> str:
    """The lines that make a code owner's review required for the harness and CI."""
    lines = ["# Meridian: the harness (gates, rules, config), the Claude Code settings and the",
             "# pre-commit framework's config that run its hooks, and the CI workflow that",
             "# runs `meridian ci` are human-owned.",
             "# With branch protection requiring code owner review, an agent cannot weaken them",
             "# unseen (see docs/ci.md in Meridian's repository)."]
    lines += [f"{path} {owner}" for path in OWNED]
    return "\n".join(lines) + "\n"


def install_codeowners(root: Path, owner: str, outcome: Any) -> None:
    """Write .github/CODEOWNERS, or, when a CODEOWNERS file exists, say what to add to it."""
    existing = next((p for p in CODEOWNERS_PLACES if (root / p).exists()), None)
    entry = codeowners_entry(owner)
    if existing is not None:
        text = (root / existing).read_text(encoding="utf-8", errors="replace")
        if all(path in text for path in OWNED):
            outcome.kept.append(f"{existing} (already names owners for {', '.join(OWNED)})")
            return
        outcome.warnings.append(f"{existing} exists and was not changed; add these lines to "
                                "it:\n" + entry)
        return
    target = root / CODEOWNERS_PLACES[0]
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(entry, encoding="utf-8")
    outcome.created.append(f"{CODEOWNERS_PLACES[0]} (code owner review for {', '.join(OWNED)}; "
                           f"owner {owner}: change it to your GitHub user or team)")


def install(name: str, root: Path, outcome: Any, owner: str | None = None) -> None:
    """Copy template ``name`` to its destination unless a file is already there."""
    if name == "github" and owner:
        install_codeowners(root, owner, outcome)
    source = template_path(name)
    relative = CI_TEMPLATES[name][1]
    target = root / relative
    if target.exists():
        outcome.kept.append(f"{relative} (exists; not overwritten)")
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    outcome.created.append(str(relative))
