"""``meridian hooks snippet``: the ``.pre-commit-config.yaml`` entries that run Meridian's
hooks through the pre-commit framework, working without an activated virtual environment.

Two forms:

- the default, ``language: python``: the framework builds its own environment and installs
  the distribution (``meridian-gates`` at this version) into it, so the entries work on any
  machine and can be committed;
- ``--python PATH``: ``language: system`` with the absolute interpreter that has Meridian
  (this machine only; for repositories that must not install anything).
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from meridian import DISTRIBUTION, __version__
from meridian.errors import MeridianError

HOOKS = (("meridian-pre-commit", "pre-commit"), ("meridian-pre-push", "pre-push"))
HEADER = """\
# .pre-commit-config.yaml: Meridian's hooks through the pre-commit framework
# (install both stages: pre-commit install --hook-type pre-commit --hook-type pre-push)
"""


def _hook(hook_id: str, stage: str, entry: str, language: str, extra: str = "") -> str:
    return (f"      - id: {hook_id}\n"
            f"        name: meridian {stage}\n"
            f"        entry: {entry}\n"
            f"        language: {language}\n"
            f"{extra}"
            f"        stages: [{stage}]\n"
            f"        pass_filenames: false\n"
            f"        always_run: true\n"
            f"        require_serial: true\n")


def render(python: str | None = None) -> str:
    """The entries: the framework-built environment, or the interpreter ``python``."""
    if python is None:
        requirement = f"{DISTRIBUTION}=={__version__}"
        body = "".join(_hook(hook_id, stage, f"python -I -m meridian hook {stage}", "python",
                             f'        additional_dependencies: ["{requirement}"]\n')
                       for hook_id, stage in HOOKS)
        note = (f"# The framework installs {requirement} into its own environment, so no virtual\n"
                "# environment needs to be active; keep the version in step with the project's.\n")
    else:
        interpreter = _check_interpreter(python)
        body = "".join(_hook(hook_id, stage, f"{shlex.quote(interpreter)} -I -m meridian hook {stage}",
                             "system") for hook_id, stage in HOOKS)
        note = (f"# Runs Meridian with {interpreter} (this machine only: the path is absolute).\n")
    return HEADER + note + "repos:\n  - repo: local\n    hooks:\n" + body


def _check_interpreter(python: str) -> str:
    path = Path(python)
    if not path.is_absolute():
        raise MeridianError(f"--python {python}: expected an absolute path to a Python "
                            "interpreter (the hook runs without PATH lookups)")
    if not path.is_file() or not os.access(path, os.X_OK):
        raise MeridianError(f"--python {python}: no executable file there")
    return str(path)
