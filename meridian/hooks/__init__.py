"""Enforcement where the work happens: git hooks and Claude Code hooks.

- ``install``: ``meridian hooks install|uninstall`` (thin stubs from the top-level
  ``hooks/`` folder, chaining any hook that was there).
- ``precommit`` / ``prepush``: what ``meridian hook pre-commit|pre-push`` check.
- ``claude``: ``meridian hook claude EVENT`` (the Claude Code hook contract);
  ``claude_settings``: the entries ``meridian init --claude`` merges into
  ``.claude/settings.json``.
- ``ci``: the CI workflow templates ``meridian init --ci NAME`` copies.
- ``project``: the checked project settings a hook needs, cached by file content.

The pre-commit path is hot: modules here import only what they use, and nothing on
that path imports rich, anthropic or jsonschema.
"""
