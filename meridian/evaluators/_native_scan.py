"""Go, Rust, Java/Kotlin and shell findings for the heuristic evaluator.

No parser for these languages ships with Python, so the source is masked first (the
JS/TS lexer: ``//`` and ``/* */`` comments, string, raw-string and char literals; shell
uses ``#`` comments by line): patterns then run on code with comments blanked, and a
test body is the span between a test header's ``{`` and its matching ``}`` on code with
literals blanked. What each language's rules find is documented in docs/gates.md.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable

from meridian.evaluators._js_scan import ADMISSION, MARKER, Masked, _matching_brace, mask
from meridian.evaluators.findings import Finding, Severity

UNFINISHED_TEXT = r"(?:[^\"\n]*?\b(?:not\s+(?:yet\s+)?implemented|unimplemented|implement\s+me|(?-i:TODO|FIXME))\b[^\"\n]*)"

GO_PANIC = re.compile(r"\bpanic\(\s*(?:\"" + UNFINISHED_TEXT + r"\"|`" + UNFINISHED_TEXT
                      + r"`)\s*\)", re.IGNORECASE)
GO_ERROR_STUB = re.compile(r"\breturn\b[^\n]*\b(?:errors\.New|fmt\.Errorf)\(\s*\"" + UNFINISHED_TEXT
                           + r"\"", re.IGNORECASE)
GO_TEST = re.compile(r"\bfunc\s+(Test\w*|Example\w*|Fuzz\w*)\s*\(\s*\w+\s+\*testing\.[TF]\s*\)")
GO_ASSERT = re.compile(r"\b\w+\.(?:Error|Errorf|Fatal|Fatalf|Fail|FailNow)\s*\(|"
                       r"\b(?:assert|require|is|qt|check|be)\.\w+\s*\(|\bcmp\.Diff\s*\(|"
                       r"\b[a-z]\w*\s*\(\s*t\s*[,)]|\bpanic\s*\(")
GO_TRIVIAL = re.compile(r"\b(?:assert|require)\.True\(\s*t\s*,\s*true\s*[,)]|"
                        r"\b(?:assert|require)\.(?:Equal|EqualValues|Exactly)\(\s*t\s*,\s*"
                        r"([^,()]+?)\s*,\s*\1\s*[,)]|\bif\s+false\s*\{[^{}]*\}|"
                        r"\bif\s+([\w.]+)\s*!=\s*\2\s*\{[^{}]*\}")
GO_SKIP = re.compile(r"\b\w+\.(?:Skip|Skipf|SkipNow)\s*\(")
GO_COMMENTED_TEST = re.compile(r"^\s*//+\s*func\s+Test\w*\s*\(")
GO_EMPTY_ERR = re.compile(r"\bif\s+err\s*!=\s*nil\s*\{\s*\}")
# `_ = err`: an error value assigned to the blank identifier, to silence "unused".
GO_BLANK_ERR = re.compile(r"(?<![\w.])_\s*=\s*(?:err|e|\w*[eE]rr(?:or)?)\s*(?:$|;|//)", re.MULTILINE)
GO_PLACEHOLDER = re.compile(r"\breturn\s*(?:nil|0|\"\"|false|[\w.]+\{\})?(?:\s*,\s*(?:nil|0|\"\"|false))*\s*$")

RUST_STUB_MACRO = re.compile(r"\b(?:todo|unimplemented)!\s*[(\[{]")
RUST_STUB_PANIC = re.compile(r"\bpanic!\(\s*\"" + UNFINISHED_TEXT + r"\"", re.IGNORECASE)
RUST_TEST = re.compile(r"#\[(?:[\w:]+::)?test\]\s*(?:#\[[^\]]*\]\s*)*(?:pub\s+)?(?:async\s+)?fn\s+(\w+)")
RUST_ASSERT = re.compile(r"\b(?:\w*assert\w*|panic)!|\.unwrap\(\)|\.expect\(|\.unwrap_err\(\)|\?\s*;|"
                         r"#\[should_panic|\b(?:check|verify|assert|expect)_\w*\s*\(")
RUST_TRIVIAL = re.compile(r"\bassert!\(\s*true\s*[,)]|\b(?:assert_eq|debug_assert_eq)!\(\s*"
                          r"([^,()]+?)\s*,\s*\1\s*[,)]")
# `let ok = true;`: an immutable binding of one literal (trivial when asserted on, if the
# body binds the name only once: `let` may shadow it).
RUST_LITERAL_LET = re.compile(r"\blet\s+([a-z_]\w*)\s*(?::\s*[\w&']+\s*)?=\s*(true|false|-?\d+|"
                              r"\"[^\"\n]*\")\s*;")
RUST_FN = re.compile(r"(?<![\w#])fn\s+([a-z_]\w*)\s*(?:<[^>{]*>)?\s*\(")
RUST_IGNORE = re.compile(r"#\[ignore(?:\s*=\s*\"[^\"]*\")?\]")
RUST_CFG_IGNORE = re.compile(r"#\[cfg_attr\([^\]]*\bignore\b[^\]]*\]")
RUST_COMMENTED_TEST = re.compile(r"^\s*//+\s*(?:#\[test\]|fn\s+test_\w*\s*\()")
RUST_EMPTY_ERR = re.compile(r"\bErr\(\s*_\w*\s*\)\s*=>\s*(?:\{\s*\}|\(\)\s*,)")

JVM_UNSUPPORTED = re.compile(
    r"\bthrow\s+(?:new\s+)?UnsupportedOperationException\s*\(\s*(?:\)|\"" + UNFINISHED_TEXT
    + r"\")|\bthrow\s+(?:new\s+)?NotImplementedError\s*\(", re.IGNORECASE)
KOTLIN_TODO = re.compile(r"(?<![\w.])TODO\s*\(")
JVM_TEST = re.compile(r"@(?:org\.junit\.(?:jupiter\.api\.)?)?Test\b(?:\([^)]*\))?\s*"
                      r"(?:@\w+(?:\([^)]*\))?\s*)*(?:public\s+|internal\s+)?(?:void\s+|fun\s+)"
                      r"`?(\w[\w ]*)`?\s*\(")
JVM_ASSERT = re.compile(r"\b(?:assert\w*|verify\w*|fail|expect\w*|check\w*|should\w*)\s*[({]|"
                        r"\bassert\b|\.should\w*\b|\bthrow\b")
JVM_SKIP = re.compile(r"@(?:Disabled|Ignore)\b")
JVM_COMMENTED_TEST = re.compile(r"^\s*//+\s*@Test\b")
JVM_EMPTY_CATCH = re.compile(r"\bcatch\s*\([^)]*\)\s*\{\s*\}")

SHELL_EXIT_MARKED = re.compile(r"^\s*(?:[^#\n]*;\s*)?exit\s+[1-9]\d*\s*(?:;\s*)?#.*"
                               r"(?:\b(?:TODO|FIXME)\b|not\s+(?:yet\s+)?implemented)", re.IGNORECASE)
SHELL_SAYS_UNFINISHED = re.compile(r"\b(?:echo|printf)\b[^\n#]*(?:not\s+(?:yet\s+)?implemented|"
                                   r"unimplemented|\bTODO\b)", re.IGNORECASE)
SHELL_EXIT = re.compile(r"\bexit\s+[1-9]\d*\b")


class _Source:
    def __init__(self, path: str, source: str) -> None:
        self.path = path
        self.source = source
        self.masked: Masked = mask(source)
        self.newlines = [i for i, c in enumerate(source) if c == "\n"]
        self.issues: list[Finding] = []
        self.stub_lines: set[int] = set()

    def line_of(self, offset: int) -> int:
        return bisect.bisect_right(self.newlines, offset - 1) + 1

    def add(self, check: str, severity: Severity, line: int, message: str, *,
            end: int | None = None, scope: int | None = None) -> None:
        self.issues.append(Finding(severity=severity, file=self.path, line=line, message=message,
                                   check=check, end_line=end, scope_line=scope))

    def stubs(self, pattern: re.Pattern[str], message: str, *, in_literals: bool = True) -> None:
        """``in_literals``: the pattern reads a literal's text (a panic message); else it
        runs on code with literals blanked (a macro name inside a string is data)."""
        view = self.masked.code if in_literals else self.masked.blank
        for match in pattern.finditer(view):
            line = self.line_of(match.start())
            if line not in self.stub_lines:
                self.stub_lines.add(line)
                self.add("stub_code", "high", line, message)

    def placeholder_returns(self, pattern: re.Pattern[str]) -> None:
        marked = {line for line, text in self.masked.comments if MARKER.search(text)}
        for number, text in enumerate(self.masked.code.split("\n"), 1):
            if pattern.search(text) and (number in marked or number - 1 in marked):
                self.stub_lines.update((number, number - 1))
                self.add("stub_code", "high", number,
                         f"placeholder `{text.strip()}` next to a TODO/FIXME marker")

    def markers(self) -> None:
        for line, text in self.masked.comments:
            if line in self.stub_lines or "meridian:" in text:
                continue
            marker = MARKER.search(text)
            if marker is not None:
                self.add("stub_code", "low", line,
                         f"{marker.group(1)} marker left in a comment: {text.strip()[:120]}")
            elif ADMISSION.search(text):
                self.add("stub_code", "medium", line,
                         f"comment admits unfinished work: {text.strip()[:120]}")

    def commented_tests(self, pattern: re.Pattern[str]) -> None:
        for line, text in self.masked.comments:
            if pattern.match(text):
                self.add("skipped_test", "high", line, f"commented-out test: {text.strip()[:120]}")

    def swallowed(self, pattern: re.Pattern[str], spelled: str) -> None:
        for match in pattern.finditer(self.masked.blank):
            line = self.line_of(match.start())
            self.add("swallowed_error", "medium", line,
                     f"{spelled} does nothing with the error: every failure here is hidden")

    def asserting_functions(self, header: re.Pattern[str], can_fail: re.Pattern[str],
                            tests: re.Pattern[str]) -> set[str]:
        """The file's functions that are not tests and whose body asserts (or calls one
        that does): a test calling one can fail."""
        blank = self.masked.blank
        test_names = {m.group(1).strip() for m in tests.finditer(blank)}
        bodies: dict[str, str] = {}
        for match in header.finditer(blank):
            brace = blank.find("{", match.end())
            if brace >= 0 and match.group(1) not in test_names:
                bodies[match.group(1)] = blank[brace:_matching_brace(blank, brace) + 1]
        names: set[str] = set()
        for _ in range(3):
            calls = _calls_of(names)
            grown = {name for name, body in bodies.items() if name not in names and (
                can_fail.search(body) or (calls is not None and calls.search(body)))}
            if not grown:
                break
            names |= grown
        return names

    def tests(self, header: re.Pattern[str], can_fail: re.Pattern[str],
              trivial: re.Pattern[str] | None,
              extra: Callable[[str, int, int, int, str], None] | None = None,
              helpers: set[str] | None = None,
              exempt: Callable[[re.Match[str]], bool] | None = None,
              constant_trivial: Callable[[str, int], list[tuple[int, int]]] | None = None
              ) -> None:
        """Each test body: hollow when no assertion is in it, or every one is trivial.
        ``helpers``: functions of the file that assert (a call to one is an assertion);
        ``exempt``: a test whose header says how it fails (``#[should_panic]``);
        ``constant_trivial``: spans of assertions on a name bound to one literal."""
        blank = self.masked.blank
        calls = _calls_of(helpers or set())
        for match in header.finditer(blank):
            name = match.group(1).strip()
            if exempt is not None and exempt(match):
                continue
            brace = blank.find("{", match.end())
            if brace < 0:
                continue
            close = _matching_brace(blank, brace)
            body_blank = blank[brace + 1:close]
            body_code = self.masked.code[brace + 1:close]
            first, last = self.line_of(match.start()), self.line_of(close)
            if extra is not None:
                extra(body_blank, brace + 1, first, last, name)
            assertions = [m.span() for m in can_fail.finditer(body_blank)]
            if calls is not None:
                assertions += [m.span() for m in calls.finditer(body_blank)]
            if not assertions:
                self.add("hollow_test", "high", first,
                         f"test `{name}` cannot fail: no assertion in its body",
                         end=last, scope=first)
                continue
            if trivial is not None:
                spans = [m.span() for m in trivial.finditer(body_code)]
                if constant_trivial is not None:
                    spans += constant_trivial(body_code, 0)
                if all(any(s <= a < e for s, e in spans) for a, _ in assertions):
                    self.add("hollow_test", "high", first,
                             f"test `{name}` cannot fail: its only assertions always hold "
                             "(a literal, a value compared with itself, or a name bound to one "
                             "literal)", end=last, scope=first)


def _calls_of(names: set[str]) -> re.Pattern[str] | None:
    if not names:
        return None
    return re.compile(r"(?<![\w.])(?:" + "|".join(map(re.escape, sorted(names))) + r")\s*\(")


def _rust_constant_asserts(body: str, _offset: int) -> list[tuple[int, int]]:
    """``let ok = true; assert!(ok)``, ``let n = 3; assert_eq!(n, 3)``: the outcome is
    decided by the literal the name was bound to."""
    spans = []
    for binding in RUST_LITERAL_LET.finditer(body):
        name, value = binding.group(1), binding.group(2)
        if len(re.findall(rf"\blet\s+(?:mut\s+)?{name}\b", body)) != 1:
            continue
        pattern = re.compile(rf"\b(?:debug_)?assert!\(\s*{name}\s*[,)]" if value == "true" else
                             rf"\b(?:debug_)?assert_(?:eq|ne)!\(\s*(?:{name}\s*,\s*(?:true|false|"
                             rf"-?\d+|\"[^\"\n]*\")|(?:true|false|-?\d+|\"[^\"\n]*\")\s*,\s*{name})"
                             rf"\s*[,)]")
        spans += [m.span() for m in pattern.finditer(body)]
        if value != "true":
            continue
        spans += [m.span() for m in re.finditer(
            rf"\b(?:debug_)?assert_(?:eq|ne)!\(\s*(?:{name}\s*,\s*(?:true|false)|"
            rf"(?:true|false)\s*,\s*{name})\s*[,)]", body)]
    return spans


def _should_panic(src: _Source) -> Callable[[re.Match[str]], bool]:
    """A ``#[should_panic]`` test fails unless its body panics: the panic is its check."""
    def exempt(match: re.Match[str]) -> bool:
        blank = src.masked.blank
        start = max(blank.rfind("}", 0, match.start()), blank.rfind(";", 0, match.start()))
        attributes = blank[max(start, 0):match.end()]
        return "should_panic" in attributes
    return exempt


def _go(src: _Source) -> None:
    src.stubs(GO_PANIC, "panics with 'not implemented': the code is a stub")
    src.stubs(GO_ERROR_STUB, "returns a 'not implemented' error: the code is a stub")
    src.placeholder_returns(GO_PLACEHOLDER)
    src.markers()
    if not src.path.endswith("_test.go"):
        src.swallowed(GO_EMPTY_ERR, "`if err != nil {}`")
        src.swallowed(GO_BLANK_ERR, "`_ = err`")
        return
    src.commented_tests(GO_COMMENTED_TEST)

    def skips(body: str, offset: int, first: int, last: int, name: str) -> None:
        for match in GO_SKIP.finditer(body):
            depth = body[:match.start()].count("{") - body[:match.start()].count("}")
            line = src.line_of(offset + match.start())
            if depth == 0:
                src.add("skipped_test", "high", line,
                        f"test `{name}` skips itself unconditionally", scope=first)
            else:
                src.add("skipped_test", "medium", line,
                        f"test `{name}` skips itself when a condition holds", scope=first)

    src.tests(GO_TEST, GO_ASSERT, GO_TRIVIAL, skips)


def _rust(src: _Source) -> None:
    src.stubs(RUST_STUB_MACRO, "`todo!()`/`unimplemented!()`: the code is a stub",
              in_literals=False)
    src.stubs(RUST_STUB_PANIC, "panics with 'not implemented': the code is a stub")
    src.markers()
    src.swallowed(RUST_EMPTY_ERR, "`Err(_) => {}`")
    src.commented_tests(RUST_COMMENTED_TEST)
    for match in RUST_IGNORE.finditer(src.masked.code):
        src.add("skipped_test", "high", src.line_of(match.start()),
                "test switched off: `#[ignore]`")
    for match in RUST_CFG_IGNORE.finditer(src.masked.code):
        src.add("skipped_test", "medium", src.line_of(match.start()),
                "test ignored when a condition holds: `#[cfg_attr(..., ignore)]`")
    src.tests(RUST_TEST, RUST_ASSERT, RUST_TRIVIAL,
              helpers=src.asserting_functions(RUST_FN, RUST_ASSERT, RUST_TEST),
              exempt=_should_panic(src), constant_trivial=_rust_constant_asserts)


def _jvm(src: _Source, kotlin: bool) -> None:
    src.stubs(JVM_UNSUPPORTED, "throws UnsupportedOperationException/NotImplementedError as a "
                               "'not implemented' stub")
    if kotlin:
        src.stubs(KOTLIN_TODO, "`TODO()`: the code is a stub (it throws NotImplementedError)",
                  in_literals=False)
    src.markers()
    src.swallowed(JVM_EMPTY_CATCH, "an empty `catch` block")
    src.commented_tests(JVM_COMMENTED_TEST)
    for match in JVM_SKIP.finditer(src.masked.blank):
        src.add("skipped_test", "high", src.line_of(match.start()),
                f"test switched off: `{match.group(0)}`")
    src.tests(JVM_TEST, JVM_ASSERT, None)


def _shell(path: str, source: str) -> list[Finding]:
    issues: list[Finding] = []
    lines = source.splitlines()
    stub_lines: set[int] = set()
    for number, line in enumerate(lines, 1):
        if SHELL_EXIT_MARKED.search(line):
            stub_lines.add(number)
            issues.append(Finding(severity="high", file=path, line=number, check="stub_code",
                                  message=f"exits with an error marked unfinished: {line.strip()[:100]}"))
        elif SHELL_SAYS_UNFINISHED.search(line) and any(
                SHELL_EXIT.search(after.split("#")[0]) for after in lines[number - 1:number + 2]):
            stub_lines.add(number)
            issues.append(Finding(severity="high", file=path, line=number, check="stub_code",
                                  message=f"says it is not implemented and exits: {line.strip()[:100]}"))
    for number, line in enumerate(lines, 1):
        if number in stub_lines or "#" not in line or "meridian:" in line:
            continue
        comment = line[line.index("#"):]
        if number == 1 and comment.startswith("#!"):
            continue
        marker = MARKER.search(comment)
        if marker is not None:
            issues.append(Finding(severity="low", file=path, line=number, check="stub_code",
                                  message=f"{marker.group(1)} marker left in a comment: "
                                          f"{comment.strip()[:120]}"))
    return issues


def scan_native(path: str, source: str, language: str) -> list[Finding]:
    if language == "shell":
        return _shell(path, source)
    src = _Source(path, source)
    if language == "go":
        _go(src)
    elif language == "rust":
        _rust(src)
    else:
        _jvm(src, kotlin=language == "kotlin")
    return src.issues
