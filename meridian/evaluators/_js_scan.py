"""JavaScript/TypeScript findings for the heuristic evaluator, through careful patterns.

There is no JS parser in the standard library, so the source is first *masked*: a
small lexer separates comments, string/template/regex literals and code, keeping every
offset and line in place. Patterns then run on the right view: skip calls on code with
literals blanked (so ``"it.skip("`` in a string is not a skip), "not implemented" on
code with literals kept, markers on comments only. A test body is the span between an
``it(``/``test(`` and its matching ``)``, found by counting parentheses on blanked code.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePosixPath

from meridian.evaluators.findings import Finding, Severity

TEST_DIRS = frozenset({"__tests__", "test", "tests", "spec", "e2e"})
TEST_NAME = re.compile(r"\.(test|spec)\.[cm]?[jt]sx?$")

MARKER = re.compile(r"\b(TODO|FIXME|XXX|TBD)\b")
ADMISSION = re.compile(r"\b(not\s+(?:yet\s+)?implemented|unimplemented|placeholder)\b", re.IGNORECASE)
THROW_UNFINISHED = re.compile(
    r"""\bthrow\s+(?:(?:new\s+)?\w*\s*\(?\s*(['"`])[^'"`\n]*?"""
    r"""\b(?:not\s+(?:yet\s+)?implemented|unimplemented|(?-i:TODO))\b"""
    r"""|new\s+NotImplemented\w*)""", re.IGNORECASE)
PLACEHOLDER_RETURN = re.compile(
    r"""\breturn\s*(?:null|undefined|0|false|''|""|``|\[\s*\]|\{\s*\})?\s*;?\s*$""")
SKIP_CALL = re.compile(
    r"(?<![\w.$])(?:(?:it|test|describe|context|suite|specify)\.(skip|todo|fixme|only)"
    r"|(xit|xtest|xdescribe|xcontext|xspecify))\s*[(`]")
# An exported function declaration: a module's API. Local no-ops (`function noop() {}`,
# `() => {}` callbacks) are idiomatic JavaScript and are left alone.
FUNCTION_DECLARATION = re.compile(
    r"(?<![\w$.])export\s+(?:default\s+)?(?:async\s+)?function\s*\*?\s*([A-Za-z_$][\w$]*)"
    r"\s*(?:<[^>(]*>)?\s*\(")
EMPTY_BODY_AFTER_PARAMS = re.compile(r"\s*(?::[^{};=]*)?\{\s*\}")
MOCHA_SELF_SKIP = re.compile(r"\bthis\.skip\s*\(")
TEST_CALL = re.compile(r"(?<![\w.$])(it|test|specify)\s*\(")
COMMENTED_TEST = re.compile(r"""^\s*(?://+|/\*+|\*+)?\s*(?:it|test|describe)(?:\.\w+)?\s*\(\s*['"`]""")
# Anything in a test body that can make it fail.
ASSERTION = re.compile(
    r"\b(?:expect|assert|should)(?:[A-Z_]\w*)?\s*[.(<]|\.should\b"
    r"|\b(?:verify|check)(?:[A-Z_]\w*)?\s*\("
    r"|\bt\.(?:is|not|true|false|truthy|falsy|deepEqual|notDeepEqual|throws|throwsAsync"
    r"|notThrows|regex|snapshot|equal|ok|notOk|fail|plan|match|same|strictEqual)\s*\("
    r"|\bthrow\b")
# Assertions that hold whatever the code does: a literal, or a value compared with itself.
_LITERAL = r"""(?:true|false|null|undefined|-?\d+(?:\.\d+)?|'[^'\n]*'|"[^"\n]*"|`[^`$\n]*`)"""
TRIVIAL_ASSERTION = re.compile(
    r"\bexpect\(\s*(" + _LITERAL + r"|[\w$]+(?:\.[\w$]+)*)\s*\)\s*\.(?:not\.)?"
    r"(?:toBe|toEqual|toStrictEqual)\(\s*\1\s*\)"
    r"|\bexpect\(\s*(?:true|1|'[^'\n]+'|\"[^\"\n]+\")\s*\)\s*\.(?:toBeTruthy|toBeDefined)\(\s*\)"
    r"|\bexpect\(\s*(?:false|null|0)\s*\)\s*\.(?:toBeFalsy|toBeNull)\(\s*\)"
    r"|\bassert(?:\.ok)?\(\s*(?:true|1|'[^'\n]+'|\"[^\"\n]+\")\s*\)"
    r"|\bassert\.(?:equal|strictEqual|deepEqual|deepStrictEqual)\(\s*(" + _LITERAL
    + r"|[\w$]+(?:\.[\w$]+)*)\s*,\s*\2\s*\)"
    r"|\bt\.(?:is|deepEqual|equal)\(\s*(" + _LITERAL + r"|[\w$]+)\s*,\s*\3\s*\)"
    r"|\bt\.(?:true|truthy|pass)\(\s*(?:true)?\s*\)")
# `const ok = true;`: a name that holds one literal for good.
CONST_LITERAL = re.compile(r"(?<![\w$.])const\s+([A-Za-z_$][\w$]*)\s*(?::\s*[\w$]+\s*)?=\s*("
                           + _LITERAL + r")\s*[;\n]")
EXPECT_VALUE = re.compile(r"\bexpect\(\s*([A-Za-z_$][\w$]*)\s*\)\s*\.(not\.)?(toBe|toEqual|"
                          r"toStrictEqual|toBeTruthy|toBeFalsy|toBeDefined|toBeNull)\(\s*("
                          + _LITERAL + r")?\s*\)"
                          r"|\bassert(?:\.ok|\.equal|\.strictEqual|\.deepEqual|\.deepStrictEqual)?"
                          r"\(\s*([A-Za-z_$][\w$]*)\s*(?:,\s*(" + _LITERAL + r"))?\s*\)")
EXPECT_CALL = re.compile(r"\bexpect\s*(?:<[^<>()]*>)?\s*\(")
PROMISE_MATCHER = re.compile(r"\.\s*(?:resolves|rejects)\b")
EACH_EMPTY = re.compile(r"(?<![\w.$])(?:it|test|describe|specify)(?:\.(?:only|concurrent|skip))?"
                        r"\.each\s*\(\s*(?:\[\s*\]|([A-Za-z_$][\w$]*))\s*\)")
CONST_EMPTY = re.compile(r"(?<![\w$.])const\s+([A-Za-z_$][\w$]*)\s*(?::[^=;]+)?=\s*\[\s*\]\s*[;\n]")
# Assertion functions taken out of an assertion module by name:
# `const { strictEqual } = require('node:assert')`, `import { equal as eq } from 'assert'`,
# `const { deepStrictEqual } = assert`.
DESTRUCTURED = re.compile(r"(?<![\w$.])(?:const|let|var)\s*\{([^{}]*)\}\s*=\s*(?:require\s*\(\s*"
                          r"(['\"`])([^'\"`]+)\2\s*\)|([A-Za-z_$][\w$.]*))")
NAMED_IMPORT = re.compile(r"(?<![\w$.])import\s*(?:[A-Za-z_$][\w$]*\s*,\s*)?\{([^{}]*)\}\s*from\s*"
                          r"(['\"`])([^'\"`]+)\2")
ASSERT_MODULE = re.compile(r"(?:^|[:/@])(?:chai|expect)$|assert", re.IGNORECASE)
ASSERT_OBJECT = re.compile(r"^(?:assert\w*|chai|expect|t|\w*[Aa]ssert\w*)(?:\.\w+)*$")
# A named function of the file: `function check(...) {`, `const check = (...) => {`.
LOCAL_FUNCTION = re.compile(r"(?<![\w$.])(?:async\s+)?function\s*\*?\s*([A-Za-z_$][\w$]*)\s*\(|"
                            r"(?<![\w$.])(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*(?:async\s*)?"
                            r"(?:function\b[^(]*\(|\([^()]*\)\s*(?::[^=]+)?=>|[A-Za-z_$][\w$]*\s*=>)")
# An exported function whose whole body returns nothing computed.
EMPTY_RETURN_BODY = re.compile(r"\s*(?::\s*([^{};=]+?))?\s*\{\s*return\s*(?:null|undefined|\[\s*\]|"
                               r"\{\s*\}|''|\"\"|``)?\s*;?\s*\}")
TRY_BLOCK = re.compile(r"\btry\s*\{")
CATCH_AFTER = re.compile(r"\s*catch\s*(?:\([^)]*\))?\s*\{")
EMPTY_CATCH = re.compile(r"\bcatch\s*(?:\([^)]*\))?\s*\{\s*\}")
MODULE_MOCK = re.compile(r"""\b(?:jest|vi)\.(?:mock|doMock)\(\s*(['"`])([^'"`]+)\1""")
NOOP_NAME = re.compile(r"(?:^|_)(?:noop|nop|no_?op|do_?nothing|identity|ignore)(?:_|$)|^noop|Noop$|"
                       r"^(?:noop|nop|doNothing|ignore)", re.IGNORECASE)
REGEX_ALLOWED_AFTER = re.compile(r"(?:^|[(,=:\[!&|?{};+\-*%<>~^]|\b(?:return|typeof|case|in|of|"
                                 r"delete|void|throw|new|yield|await|else|do))\s*$")


def is_js_test_file(path: str) -> bool:
    pure = PurePosixPath(path)
    return bool(TEST_NAME.search(pure.name)) or any(p in TEST_DIRS for p in pure.parts[:-1])


@dataclass(frozen=True)
class Masked:
    code: str  # comments blanked, literals kept
    blank: str  # comments and the insides of literals blanked
    comments: list[tuple[int, str]]  # (1-based line, text) per comment line


def mask(source: str) -> Masked:
    code = list(source)
    blank = list(source)
    comments: list[tuple[int, str]] = []
    newlines = [i for i, c in enumerate(source) if c == "\n"]

    def line_of(offset: int) -> int:
        return bisect.bisect_right(newlines, offset - 1) + 1

    def erase(view: list[str], start: int, end: int) -> None:
        for k in range(start, end):
            if view[k] != "\n":
                view[k] = " "

    def literal_end(start: int) -> int | None:
        """End (exclusive) of the string/template literal opening at ``start``.

        None when a quote is not closed on its line: JS strings cannot span lines, so
        that quote is not a string (an apostrophe in JSX text, most likely).
        """
        quote = source[start]
        k = start + 1
        depth = 0  # nesting of ${ } inside a template
        while k < len(source):
            c = source[k]
            if c == "\\":
                k += 2
                continue
            if quote != "`" and c == "\n":
                return None
            if quote == "`" and c == "$" and source[k + 1:k + 2] == "{":
                depth += 1
                k += 2
                continue
            if quote == "`" and depth and c == "{":
                depth += 1
            elif quote == "`" and depth and c == "}":
                depth -= 1
            elif quote == "`" and depth and c in "'\"`":
                k = literal_end(k) or k + 1
                continue
            elif c == quote and not depth:
                return k + 1
            k += 1
        return len(source) if quote == "`" else None

    def regex_end(start: int) -> int | None:
        k = start + 1
        in_class = False
        while k < len(source) and source[k] != "\n":
            c = source[k]
            if c == "\\":
                k += 2
                continue
            if c == "[":
                in_class = True
            elif c == "]":
                in_class = False
            elif c == "/" and not in_class:
                return k + 1
            k += 1
        return None

    i = 0
    while i < len(source):
        c = source[i]
        nxt = source[i + 1:i + 2]
        if c == "/" and nxt == "/":
            end = source.find("\n", i)
            end = len(source) if end < 0 else end
            comments.append((line_of(i), source[i:end]))
            erase(code, i, end)
            erase(blank, i, end)
            i = end
        elif c == "/" and nxt == "*":
            end = source.find("*/", i + 2)
            end = len(source) if end < 0 else end + 2
            first = line_of(i)
            for offset, text in enumerate(source[i:end].split("\n")):
                comments.append((first + offset, text))
            erase(code, i, end)
            erase(blank, i, end)
            i = end
        elif c in "'\"`":
            literal_stop = literal_end(i)
            if literal_stop is None:
                i += 1
                continue
            erase(blank, i + 1, literal_stop - 1)
            i = literal_stop
        elif c == "/" and REGEX_ALLOWED_AFTER.search("".join(blank[max(0, i - 40):i])):
            regex_stop = regex_end(i)
            if regex_stop is None:
                i += 1
            else:
                erase(blank, i + 1, regex_stop - 1)
                i = regex_stop
        else:
            i += 1
    return Masked("".join(code), "".join(blank), comments)


def _matching_paren(text: str, open_index: int) -> int:
    depth = 0
    for k in range(open_index, len(text)):
        if text[k] == "(":
            depth += 1
        elif text[k] == ")":
            depth -= 1
            if depth == 0:
                return k
    return len(text)


def _has_top_level_comma(text: str) -> bool:
    depth = 0
    for c in text:
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            return True
    return False


CLASS_DECLARATION = re.compile(r"(?<![\w$.])class\s+([A-Za-z_$][\w$]*)[^{;]*\{")
EXTENDS = re.compile(r"(?<![\w$.])class\b[^{;]*?\bextends\s+([A-Za-z_$][\w$.]*)")
DEFAULT_BINDING = re.compile(
    r"""(?<![\w$.])(?:import\s+([A-Za-z_$][\w$]*)\s*(?:,\s*\{[^}]*\}\s*)?from|"""
    r"""(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*require\s*\()\s*\(?\s*(['"`])([^'"`]+)\3""")
RENAMED_BINDING = re.compile(r"([A-Za-z_$][\w$]*)\s*(?:\bas\b|:)\s*([A-Za-z_$][\w$]*)")


def subclassed_classes(files: dict[str, str]) -> frozenset[str]:
    """Class names some JS/TS class among ``files`` (path -> text) extends: the name
    after ``extends``, resolved through ``import { A as B }``/``const { A: B } =
    require(...)``, and, for a default import or ``require`` of a file in the tree, the
    classes that file declares. A base's ``throw new Error('not implemented')`` is its
    contract when a subclass implements the method."""
    names: set[str] = set()
    masks = {path: mask(text) for path, text in files.items()}
    declared = {path: {m.group(1) for m in CLASS_DECLARATION.finditer(masked.blank)}
                for path, masked in masks.items()}
    for path, masked in masks.items():
        extended = {m.group(1).split(".")[-1] for m in EXTENDS.finditer(masked.blank)}
        if not extended:
            continue
        renamed = {local: original for original, local in RENAMED_BINDING.findall(masked.blank)}
        names |= {renamed.get(name, name) for name in extended}
        for match in DEFAULT_BINDING.finditer(masked.code):
            local = match.group(1) or match.group(2)
            if local not in extended or not match.group(4).startswith("."):
                continue
            parts: list[str] = []
            for part in f"{PurePosixPath(path).parent}/{match.group(4)}".split("/"):
                if part == "..":
                    if parts:
                        parts.pop()
                elif part not in (".", ""):
                    parts.append(part)
            stem = "/".join(parts)
            for candidate, classes in declared.items():
                bare = re.sub(r"\.[cm]?[jt]sx?$", "", candidate)
                if stem in (candidate, bare) or bare == f"{stem}/index":
                    names |= classes
    return frozenset(names)


def scan_js(path: str, source: str, *, subclassed: frozenset[str] = frozenset()
            ) -> list[Finding]:
    """``subclassed``: class names a class in the scanned tree extends (see
    ``subclassed_classes``)."""
    masked = mask(source)
    newlines = [i for i, c in enumerate(source) if c == "\n"]
    issues: list[Finding] = []
    code_lines = masked.code.split("\n")

    def line_of(offset: int) -> int:
        return bisect.bisect_right(newlines, offset - 1) + 1

    def add(check: str, severity: Severity, line: int, message: str) -> None:
        issues.append(Finding(severity=severity, file=path, line=line, message=message,
                              check=check))

    stub_lines: set[int] = set()
    base_spans = [(m.end() - 1, _matching_brace(masked.blank, m.end() - 1))
                  for m in CLASS_DECLARATION.finditer(masked.blank) if m.group(1) in subclassed]
    for match in THROW_UNFINISHED.finditer(masked.code):
        line = line_of(match.start())
        stub_lines.add(line)
        if any(start < match.start() < end for start, end in base_spans):
            continue  # a base class's contract: a subclass in the tree implements it
        add("stub_code", "high", line, "throws a 'not implemented' error: the code is a stub")

    for match in FUNCTION_DECLARATION.finditer(masked.blank):
        close = _matching_paren(masked.blank, match.end() - 1)
        body = EMPTY_BODY_AFTER_PARAMS.match(masked.blank, close + 1)
        if body is None:
            _empty_result(masked, match, close, line_of, add, stub_lines)
            continue
        first, last = line_of(match.start()), line_of(body.end() - 1)
        stub_lines.update(range(first, last + 1))
        if NOOP_NAME.search(match.group(1)):
            continue  # an exported no-op says so in its name
        add("stub_code", "high", first, f"function `{match.group(1)}` is a stub: its body is empty")

    marker_lines = {line for line, text in masked.comments if MARKER.search(text)}
    for number, text in enumerate(code_lines, 1):
        if PLACEHOLDER_RETURN.search(text) and (number in marker_lines
                                                or number - 1 in marker_lines):
            stub_lines.add(number)
            stub_lines.add(number - 1)
            add("stub_code", "high", number,
                f"placeholder `{text.strip()}` next to a TODO/FIXME marker")

    for line, text in masked.comments:
        if line in stub_lines:
            continue
        marker = MARKER.search(text)
        if marker is not None:
            add("stub_code", "low", line,
                f"{marker.group(1)} marker left in a comment: {text.strip()[:120]}")
        elif ADMISSION.search(text):
            add("stub_code", "medium", line,
                f"comment admits unfinished work: {text.strip()[:120]}")

    if not is_js_test_file(path):
        for match in EMPTY_CATCH.finditer(masked.blank):
            add("swallowed_error", "medium", line_of(match.start()),
                "an empty `catch` block does nothing with the error: every failure here is hidden")
        return issues

    for line, text in masked.comments:
        if COMMENTED_TEST.match(text):
            add("skipped_test", "high", line, f"commented-out test: {text.strip()[:120]}")
    for match in SKIP_CALL.finditer(masked.blank):
        spelled = match.group(0).rstrip("(`").strip()
        reason = ("focused test: every other test in the file is skipped"
                  if match.group(1) == "only" else "test switched off or left to do")
        add("skipped_test", "high", line_of(match.start()), f"{reason}: `{spelled}`")
    for match in MOCHA_SELF_SKIP.finditer(masked.blank):
        add("skipped_test", "high", line_of(match.start()), "test skips itself: `this.skip()`")
    empty_names = {m.group(1) for m in CONST_EMPTY.finditer(masked.blank)}
    for match in EACH_EMPTY.finditer(masked.blank):
        if match.group(1) is None or match.group(1) in empty_names:
            add("skipped_test", "high", line_of(match.start()),
                f"`{match.group(0)[:60]}` has no cases: the test it defines never runs")
    constants = {m.group(1): m.group(2) for m in CONST_LITERAL.finditer(masked.code)}
    asserting = _asserting_names(masked)
    subject = TEST_NAME.sub("", PurePosixPath(path).name)
    for match in MODULE_MOCK.finditer(masked.code):
        mocked = PurePosixPath(match.group(2)).name
        mocked = re.sub(r"\.[cm]?[jt]sx?$", "", mocked)
        if mocked and mocked in (subject, "index" if subject == "index" else subject):
            add("hollow_test", "high", line_of(match.start()),
                f"the module under test, `{match.group(2)}`, is replaced by a mock in its own "
                "test: the tests check the mock, not the code")
    for match in TEST_CALL.finditer(masked.blank):
        open_index = match.end() - 1
        close_index = _matching_paren(masked.blank, open_index)
        arguments = masked.blank[open_index + 1:close_index]
        title = _title(masked.code[open_index + 1:close_index])
        line = line_of(match.start())
        end = line_of(close_index)
        if not _has_top_level_comma(arguments):
            add("skipped_test", "high", line, f"test {title}has no body (pending)")
            continue
        found = [m.start() for m in ASSERTION.finditer(arguments)]
        if asserting:
            found += [m.start() for m in re.finditer(
                r"(?<![\w$.])(?:" + "|".join(map(re.escape, sorted(asserting)))
                + r")\s*\(", arguments)]
        if not found:
            issues.append(Finding(severity="high", file=path, line=line, end_line=end,
                                  scope_line=line, check="hollow_test",
                                  message=f"test {title}cannot fail: no expect/assert in its body"))
            continue
        base = open_index + 1
        trivial = [m.span() for m in TRIVIAL_ASSERTION.finditer(masked.code, base, close_index)]
        trivial += _constant_expectations(masked.code, base, close_index, constants)
        trivial += _unchecked_expectations(masked.blank, base, close_index)
        swallowed = _swallowed_spans(masked.blank, base, close_index)
        standing = [k for k in found
                    if not any(s <= base + k < e for s, e in trivial)
                    and not any(s <= base + k < e for s, e in swallowed)]
        if standing:
            continue
        why = ("its assertions are inside a `try` whose `catch` swallows the failure"
               if swallowed and not trivial else
               "its only assertions always hold or are never checked (a literal, a value "
               "compared with itself, a constant, `expect(x)` with no matcher, a "
               "`.resolves`/`.rejects` neither awaited nor returned)")
        issues.append(Finding(severity="high", file=path, line=line, end_line=end,
                              scope_line=line, check="hollow_test",
                              message=f"test {title}cannot fail: {why}"))
    return issues


def _literal_value(text: str) -> str:
    """A JS literal's value as comparable text (quotes normalised)."""
    text = text.strip()
    if text[:1] in "'\"`" and text[-1:] == text[:1]:
        return "s:" + text[1:-1]
    return text


_TRUTHY = {"true": True, "false": False, "null": False, "undefined": False}


def _truthy(text: str) -> bool | None:
    value = _literal_value(text)
    if value.startswith("s:"):
        return bool(value[2:])
    if value in _TRUTHY:
        return _TRUTHY[value]
    try:
        return float(value) != 0
    except ValueError:
        return None


def _constant_expectations(code: str, start: int, stop: int,
                           constants: dict[str, str]) -> list[tuple[int, int]]:
    """``const ok = true; expect(ok).toBe(true)``: an expectation on a name that holds
    one literal, which the matcher's answer is decided by."""
    spans = []
    for match in EXPECT_VALUE.finditer(code, start, stop):
        name = match.group(1) or match.group(5)
        if name not in constants:
            continue
        value = constants[name]
        if match.group(1):
            matcher, expected = match.group(3), match.group(4)
            if expected is not None or matcher in ("toBeTruthy", "toBeFalsy", "toBeDefined",
                                                   "toBeNull"):
                spans.append(match.span())
        else:
            expected = match.group(6)
            if expected is not None or _truthy(value) is not None:
                spans.append(match.span())
    return spans


def _unchecked_expectations(blank: str, start: int, stop: int) -> list[tuple[int, int]]:
    """``expect(x);`` with no matcher, and ``expect(p).resolves.toBe(...)`` neither
    awaited nor returned: nothing is checked (the promise's matcher settles after the
    test has ended)."""
    spans = []
    for match in EXPECT_CALL.finditer(blank, start, stop):
        close = _matching_paren(blank, match.end() - 1)
        after = blank[close + 1:close + 200]
        if not after.lstrip().startswith("."):
            spans.append((match.start(), close + 1))
            continue
        if PROMISE_MATCHER.match(after.lstrip()):
            before = blank[max(start, match.start() - 200):match.start()]
            statement = re.split(r"[;{}]|\n\s*\n", before)[-1]
            if not re.search(r"\b(?:await|return)\b|=>\s*$", statement):
                spans.append((match.start(), close + 1))
    return spans


def _asserting_names(masked: Masked) -> set[str]:
    """Local names that assert: functions taken out of an assertion module by name, and
    the file's named functions whose body asserts (or calls one that does)."""
    names: set[str] = set()
    for match in DESTRUCTURED.finditer(masked.code):
        source = match.group(3) or match.group(4) or ""
        if (match.group(3) and ASSERT_MODULE.search(source)) or (
                match.group(4) and ASSERT_OBJECT.match(source)):
            names |= _bound_names(match.group(1))
    for match in NAMED_IMPORT.finditer(masked.code):
        if ASSERT_MODULE.search(match.group(3)):
            names |= _bound_names(match.group(1), renamed_by="as")
    functions: dict[str, str] = {}
    for match in LOCAL_FUNCTION.finditer(masked.blank):
        name = match.group(1) or match.group(2)
        brace = masked.blank.find("{", match.end())
        if brace < 0:
            continue
        functions[name] = masked.blank[brace:_matching_brace(masked.blank, brace) + 1]
    for _ in range(3):
        pattern = re.compile(r"(?<![\w$.])(?:" + "|".join(map(re.escape, sorted(names)))
                             + r")\s*\(") if names else None
        grown = {name for name, body in functions.items() if name not in names and (
            ASSERTION.search(body) or (pattern is not None and pattern.search(body)))}
        if not grown:
            break
        names |= grown
    return names


def _bound_names(inside: str, renamed_by: str = ":") -> set[str]:
    """The local names a ``{ a, b: c }`` pattern (or ``{ a, b as c }`` import) binds."""
    names = set()
    for part in inside.split(","):
        part = part.strip()
        if not part or part.startswith("..."):
            continue
        if renamed_by == "as" and re.search(r"\bas\b", part):
            part = re.split(r"\bas\b", part)[-1]
        elif renamed_by == ":" and ":" in part:
            part = part.split(":")[-1]
        part = part.split("=")[0].strip()
        if re.fullmatch(r"[A-Za-z_$][\w$]*", part):
            names.add(part)
    return names


# A return type that admits nothing: `void`, `null`, `undefined`, `any`, `unknown`.
_NOTHING_TYPE = re.compile(r"\b(?:void|null|undefined|any|unknown|never)\b")


def _empty_result(masked: Masked, match: re.Match[str], close: int,
                  line_of: Callable[[int], int],
                  add: Callable[[str, Severity, int, str], None], stub_lines: set[int]) -> None:
    """An exported function taking parameters whose whole body returns nothing computed
    (``return [];``, ``return null;``) while its return type (TypeScript) or its JSDoc
    block promises a result."""
    params = masked.blank[match.end():close].strip()
    if not params:
        return
    body = EMPTY_RETURN_BODY.match(masked.blank, close + 1)
    if body is None:
        return
    declared = body.group(1)
    before = masked.code[:match.start()].rstrip()
    jsdoc = before.endswith("*/") and before.rfind("/**") >= 0
    if declared is not None:
        if _NOTHING_TYPE.search(declared):
            return
    elif not jsdoc:
        return
    doc_start = masked.code.rfind("/**", 0, match.start()) if jsdoc else -1
    doc = masked.code[doc_start:match.start()] if doc_start >= 0 else ""
    if re.search(r"\bno[- ]?op\b|\bempty\b|\bnothing\b|\bnull\b|\bdefault\b|\boverrid",
                 doc, re.IGNORECASE):
        return
    if NOOP_NAME.search(match.group(1)):
        return
    first, last = line_of(match.start()), line_of(body.end() - 1)
    stub_lines.update(range(first, last + 1))
    inside = masked.code[close + 1:body.end()]
    shown = " ".join(inside[inside.find("{") + 1:inside.rfind("}")].split())
    add("stub_code", "high", first,
        f"function `{match.group(1)}` ignores its parameters and returns nothing computed "
        f"(`{shown[:60]}`): its {'return type' if declared else 'JSDoc'} promises a result")


def _swallowed_spans(blank: str, start: int, stop: int) -> list[tuple[int, int]]:
    """Spans of ``try`` blocks whose ``catch`` neither rethrows nor asserts."""
    spans = []
    for match in TRY_BLOCK.finditer(blank, start, stop):
        open_brace = match.end() - 1
        close = _matching_brace(blank, open_brace)
        catch = CATCH_AFTER.match(blank, close + 1)
        if catch is None:
            continue
        handler_close = _matching_brace(blank, catch.end() - 1)
        handler = blank[catch.end():handler_close]
        if re.search(r"\bthrow\b|\bexpect\s*\(|\bassert\w*\s*[.(]|\bfail\s*\(|\bdone\s*\(", handler):
            continue
        spans.append((open_brace, close))
    return spans


def _matching_brace(text: str, open_index: int) -> int:
    depth = 0
    for k in range(open_index, len(text)):
        if text[k] == "{":
            depth += 1
        elif text[k] == "}":
            depth -= 1
            if depth == 0:
                return k
    return len(text)


def _title(arguments: str) -> str:
    found = re.match(r"""\s*(['"`])(.*?)\1""", arguments, re.DOTALL)
    return f"'{found.group(2)[:80]}' " if found else ""
