"""Project templates: gate graphs per stack, copied by ``meridian init --template NAME``.

Templates live in ``.meridian-template/`` at the top of the source tree; a wheel carries
the same folder as ``meridian/_data/template`` (see ``meridian.resources``). Layout:

    gates/<name>.yaml        the gate graph, copied to .meridian/gates.yaml
    gates/<name>/...         extra files copied to the repository root (e.g. DATA_CONTRACT.md)
    schemas/*.schema.json    JSON Schemas of the files users write
"""

from __future__ import annotations

import shutil
from pathlib import Path

from meridian.config import load_config
from meridian.errors import MeridianError


def template_root() -> Path:
    """The templates directory: the wheel's package data, else the source checkout's."""
    from meridian.resources import resource_dir

    return resource_dir("template", "gates")


def list_templates() -> list[str]:
    """Names of the gate-graph templates, sorted."""
    return sorted(path.stem for path in (template_root() / "gates").glob("*.yaml"))


def template_files(name: str) -> dict[Path, Path]:
    """Source file -> destination relative to the project root, for template ``name``."""
    gates_dir = template_root() / "gates"
    source = gates_dir / f"{name}.yaml"
    if not source.is_file():
        raise MeridianError(
            f"unknown template '{name}' (templates: {', '.join(list_templates())})"
        )
    files = {source: Path("GATES")}
    extras = gates_dir / name
    if extras.is_dir():
        for path in sorted(extras.rglob("*")):
            if path.is_file():
                files[path] = path.relative_to(extras)
    return files


def install_template(name: str, root: Path) -> list[Path]:
    """Copy template ``name`` into the project at ``root``; return the files created.

    The gate graph goes to the configured gates path (``.meridian/gates.yaml`` by
    default); extra files go to the root. An existing file is never overwritten.
    """
    gates_path = root / load_config(root).paths.gates
    created: list[Path] = []
    for source, relative in template_files(name).items():
        target = gates_path if relative == Path("GATES") else root / relative
        if target.exists():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        created.append(target)
    return created
