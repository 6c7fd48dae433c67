"""``meridian hooks install|uninstall``: thin stubs in ``.git/hooks``, politely.

- The stubs come from the top-level ``hooks/`` folder (shipped in the wheel as
  ``meridian/_data/hooks``, see ``meridian.resources``). Installing fills in the absolute path of the Python that
  runs Meridian now, so the hook works without an activated virtualenv; when that
  interpreter is gone the stub falls back to ``meridian`` on PATH.
- Every stub carries the marker line ``# meridian-hook-stub``: a hook with it is ours
  (rewritten when its text changed, left alone when identical); a hook without it is
  the user's, and is kept as ``<hook>.meridian-chained``, which the stub runs first,
  failing when it fails. ``uninstall`` removes our stubs and puts chained hooks back.
- Hooks go into the common ``.git/hooks`` (shared by every linked worktree). When
  ``core.hooksPath`` is set git never looks there, so installing would be a lie:
  it refuses and points to the pre-commit framework route instead.
"""

from __future__ import annotations

import os
import shlex
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from meridian import gitio
from meridian.errors import MeridianError

HOOK_TYPES = ("pre-commit", "pre-push")
MARKER = "# meridian-hook-stub"
CHAINED_SUFFIX = ".meridian-chained"
PYTHON_PLACEHOLDER = "@MERIDIAN_PYTHON@"


@dataclass(frozen=True)
class HookChange:
    hook: str
    path: str
    action: str  # installed, upgraded, unchanged, removed, restored, absent, foreign
    chained: str | None = None  # the user's hook kept beside ours, if any

    def describe(self) -> str:
        text = {
            "installed": f"installed {self.path}",
            "upgraded": f"upgraded {self.path}",
            "unchanged": f"{self.path} is already Meridian's (unchanged)",
            "removed": f"removed {self.path}",
            "restored": f"removed Meridian's {self.hook} and restored the hook that was there",
            "absent": f"{self.path}: no Meridian hook installed",
            "foreign": f"{self.path} is not Meridian's; left untouched",
        }[self.action]
        if self.chained and self.action in ("installed", "upgraded", "unchanged"):
            text += f" (the existing hook runs first: {Path(self.chained).name})"
        return text

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class HooksPathSet(MeridianError):
    """``core.hooksPath`` is set: git ignores ``.git/hooks``, so Meridian will not write there."""


def stub_dir() -> Path:
    """The stub scripts: the wheel's ``_data/hooks``, else the checkout's ``hooks/``."""
    from meridian.resources import resource_dir

    return resource_dir("hooks", "pre-commit")


FLAGS_PLACEHOLDER = "@MERIDIAN_FLAGS@"
# Isolated (-I: no PYTHON* variables, no user site, no script folder on sys.path): what
# the git command's environment holds cannot run code before Meridian's in the hook.
ISOLATED = "-I"
# ... unless Meridian itself lives in the user site (`pip install --user`), which -I
# leaves out: then -E -P (no PYTHON* variables, no work tree on sys.path).
USER_SITE_FLAGS = "-E -P"


def interpreter_flags(python: str | None = None) -> str:
    """The flags the stubs run ``python`` with: ``-I`` unless the running Meridian (the one
    ``python`` names) is installed in the user site."""
    if python not in (None, sys.executable):
        return ISOLATED
    import site

    import meridian

    try:
        user_site = Path(site.getusersitepackages()).resolve()
        package = Path(meridian.__file__).resolve()
    except (OSError, AttributeError, TypeError):
        return ISOLATED
    return USER_SITE_FLAGS if user_site in package.parents else ISOLATED


def render_stub(hook: str, python: str | None = None) -> str:
    text = (stub_dir() / hook).read_text(encoding="utf-8")
    return text.replace(PYTHON_PLACEHOLDER, shlex.quote(python or sys.executable)) \
        .replace(FLAGS_PLACEHOLDER, interpreter_flags(python))


def is_meridian_stub(path: Path) -> bool:
    try:
        with path.open("r", encoding="utf-8", errors="replace") as handle:
            head = handle.read(4096)
    except (FileNotFoundError, IsADirectoryError):
        return False
    return MARKER in head


def _refuse_hooks_path(repo: gitio.Repository) -> None:
    hooks_path = gitio.config_value(repo, "core.hooksPath")
    if hooks_path:
        raise HooksPathSet(
            f"core.hooksPath is set ({hooks_path}), so git ignores .git/hooks and a hook "
            "installed there would never run; not installing. Run Meridian through your hook "
            "manager instead: with the pre-commit framework, add the hook ids "
            "meridian-pre-commit and meridian-pre-push (`meridian hooks snippet` prints the "
            ".pre-commit-config.yaml entries, `repo: local`); or call `meridian hook pre-commit` "
            "and `meridian hook pre-push` from the hooks in that directory"
        )


def _write_executable(path: Path, text: str) -> None:
    temporary = path.with_name(f".{path.name}.meridian-tmp")
    temporary.write_text(text, encoding="utf-8")
    temporary.chmod(0o755)
    os.replace(temporary, path)


def install(repo: gitio.Repository, *, python: str | None = None) -> list[HookChange]:
    """Install (or upgrade) the stubs; an existing foreign hook is kept and chained."""
    _refuse_hooks_path(repo)
    directory = gitio.hooks_dir(repo)
    directory.mkdir(parents=True, exist_ok=True)
    changes = []
    for hook in HOOK_TYPES:
        path = directory / hook
        chained = directory / (hook + CHAINED_SUFFIX)
        text = render_stub(hook, python)
        kept = str(chained) if chained.exists() or chained.is_symlink() else None
        if is_meridian_stub(path):
            if path.read_text(encoding="utf-8") == text:
                changes.append(HookChange(hook, str(path), "unchanged", kept))
                continue
            _write_executable(path, text)
            changes.append(HookChange(hook, str(path), "upgraded", kept))
            continue
        if path.exists() or path.is_symlink():
            if kept:
                raise MeridianError(
                    f"{path} is not Meridian's and {chained.name} already exists beside it; "
                    f"merge them by hand (or remove one), then run `meridian hooks install` again")
            os.rename(path, chained)  # a symlink is moved as a link; the target is untouched
            kept = str(chained)
        _write_executable(path, text)
        changes.append(HookChange(hook, str(path), "installed", kept))
    return changes


def _stub_version(text: str) -> int:
    import re

    found = re.search(re.escape(MARKER) + r" v(\d+)", text[:4096])
    return int(found.group(1)) if found else 0


def refresh_stub(hook: str, where: str = ".") -> bool:
    """Upgrade this repository's ``hook`` stub in place when it is Meridian's and older
    than the one this Meridian ships (a v2 stub ran Python without ``-I``), keeping the
    interpreter it names; True when rewritten. Run by the hook itself, so a machine whose
    stubs were installed before the upgrade is fixed by its next commit or push; never
    fails the hook."""
    try:
        repo = gitio.open_repo(where)
        path = gitio.hooks_dir(repo) / hook
        if not is_meridian_stub(path) or path.is_symlink():
            return False
        text = path.read_text(encoding="utf-8")
        wanted_text = (stub_dir() / hook).read_text(encoding="utf-8")
        if _stub_version(text) >= _stub_version(wanted_text):
            return False
        named = next((line.split("=", 1)[1] for line in text.splitlines()
                      if line.startswith("MERIDIAN_PYTHON=")), None)
        python = shlex.split(named)[0] if named and shlex.split(named) else None
        _write_executable(path, render_stub(hook, python))
    except Exception:  # noqa: BLE001 - an upgrade never stands in the hook's way
        return False
    print(f"meridian: upgraded {path} (stub v{_stub_version(text)} -> "
          f"v{_stub_version(wanted_text)})", file=sys.stderr)
    return True


def uninstall(repo: gitio.Repository) -> list[HookChange]:
    """Remove Meridian's stubs and restore the hooks they chained."""
    directory = gitio.hooks_dir(repo)
    changes = []
    for hook in HOOK_TYPES:
        path = directory / hook
        chained = directory / (hook + CHAINED_SUFFIX)
        if not is_meridian_stub(path):
            action = "foreign" if path.exists() or path.is_symlink() else "absent"
            changes.append(HookChange(hook, str(path), action))
            continue
        if chained.exists() or chained.is_symlink():
            os.replace(chained, path)
            changes.append(HookChange(hook, str(path), "restored", str(chained)))
        else:
            path.unlink()
            changes.append(HookChange(hook, str(path), "removed"))
    return changes


def install_for_init(repo: gitio.Repository, outcome: Any) -> None:
    """``meridian init``: install the hooks and say so in the outcome (never fails init
    because of core.hooksPath: that is reported as a kept setting instead)."""
    try:
        changes = install(repo)
    except HooksPathSet:
        hooks_path = gitio.config_value(repo, "core.hooksPath")
        outcome.kept.append(f"core.hooksPath ({hooks_path}): git hooks not installed; "
                            "run Meridian from your hook manager (`meridian hooks snippet`)")
        return
    for change in changes:
        name = f".git/hooks/{change.hook}"
        chained = " (existing hook kept and chained)" if change.chained else ""
        if change.action in ("installed", "upgraded"):
            outcome.created.append(f"{name} ({change.action}){chained}")
        else:
            outcome.kept.append(f"{name}{chained}")
