"""Agent-controlled text in the PR comment (compare --format markdown) is inert."""

from __future__ import annotations

import re

from meridian.evals import compare as cmp
from tests.evals.runs_support import make_run

HOSTILE = ("KeyError: 'q'\n### injected heading\n<img src=x onerror=alert(1)> "
           "[click](https://evil.example) ![i](https://evil.example/p.png) | col | "
           "@octo-org/security `code` **bold** <!-- hide -->")


def test_an_infra_error_message_cannot_forge_markdown_or_mention_anyone() -> None:
    baseline = make_run({"a": "pass"})
    candidate = make_run({"a": ["infra_error"]}, a={"error": HOSTILE})
    markdown = cmp.render_markdown(cmp.compare(candidate, baseline))
    body = "\n".join(markdown.splitlines()[1:])
    assert not re.search(r"^\s*#", body, re.MULTILINE)  # no heading but ours
    assert "<img" not in markdown and "<!--" not in markdown
    assert "](" not in markdown.replace("\\](", "").replace("\\]\\(", "")
    assert "@octo" not in markdown and "@\u200boct" in markdown
    assert "'q'" in markdown and "&#x27;" not in markdown  # quotes stay readable
    line = next(l for l in markdown.splitlines() if "KeyError" in l)
    assert "|" not in line.replace("\\|", "")  # cannot open a table cell


def test_a_hostile_task_id_is_inert_in_every_section() -> None:
    evil = "x](https://evil.example) @admin ### h"
    baseline = make_run({evil: "pass", "gone": "pass"})
    candidate = make_run({evil: "fail", "new <b>": "pass"})
    markdown = cmp.render_markdown(cmp.compare(candidate, baseline))
    assert "](" not in markdown.replace("\\]\\(", "")
    assert "@admin" not in markdown and "<b>" not in markdown
    assert markdown.count("\n###") == 0 and markdown.startswith("### ")
