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


def install(name: str, root: Path, outcome: Any) -> None:
    """Copy template ``name`` to its destination unless a file is already there."""
    source = template_path(name)
    relative = CI_TEMPLATES[name][1]
    target = root / relative
    if target.exists():
        outcome.kept.append(f"{relative} (exists; not overwritten)")
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    outcome.created.append(str(relative))
