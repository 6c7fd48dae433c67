"""Where the data files Meridian ships live: from a wheel and from a source checkout.

The repository keeps them at the top level, where a user reading the source finds them:

    .meridian-template/   gate graph templates, rules, features, CI workflows, JSON Schemas
    suites/               the bundled evaluation suites
    hooks/                the git hook stub scripts

A wheel carries the same three folders inside the package, as ``meridian/_data/template``,
``meridian/_data/suites`` and ``meridian/_data/hooks`` (hatchling's ``force-include`` in
pyproject.toml maps them; no symlink is involved, so a checkout without symlinks, as on
Windows, builds a complete wheel). An editable install or a plain checkout has no
``_data`` folder and reads the top-level ones. This module imports only ``pathlib``: the
git hooks use it.
"""

from __future__ import annotations

from pathlib import Path

# resource name -> folder at the top of the source tree (the wheel's is _data/<name>)
SOURCE_FOLDERS = {
    "template": ".meridian-template",
    "suites": "suites",
    "hooks": "hooks",
}

PACKAGE = Path(__file__).resolve().parent


def candidates(name: str) -> list[Path]:
    """Where resource ``name`` may be, in the order looked at: the wheel's, the checkout's."""
    return [PACKAGE / "_data" / name, PACKAGE.parent / SOURCE_FOLDERS[name]]


def resource_dir(name: str, marker: str) -> Path:
    """The folder of resource ``name`` that holds ``marker`` (a file or folder in it).

    Raises ``MeridianError`` naming the places looked at when none does (an incomplete
    installation)."""
    places = candidates(name)
    for place in places:
        if (place / marker).exists():
            return place
    from meridian import DISTRIBUTION
    from meridian.errors import MeridianError

    raise MeridianError(
        f"Meridian's {SOURCE_FOLDERS[name]} data is missing from this installation (looked for "
        f"{marker} in {', '.join(str(p) for p in places)}); reinstall it: "
        f"pip install --force-reinstall {DISTRIBUTION}")
