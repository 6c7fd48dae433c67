"""The heuristic checks that read file contents, with no dependency beyond the stdlib.

``scan_tree(files, disabled, changed=...)`` is the whole scan: every file's findings
(Python through ``ast``, JS/TS, Go, Rust, Java/Kotlin and shell through masked
patterns), the cross-file rule (a function returning the literal its test expects),
the inline ``meridian: allow`` exceptions, and each finding flagged ``pre_existing``
when it lies outside the change. The pre-commit hook runs it over the staged blobs with
the staged hunks as the change; ``meridian.evaluators.heuristic`` runs it over a gate's
bundle with the lines changed since the gate's base commit. The check ids and what
each one finds are documented in ``heuristic`` and docs/gates.md.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Protocol

from meridian.errors import ConfigError
from meridian.evaluators._python_scan import (
    MARKER,
    FileTests,
    TreeFacts,
    constant_returns,
    expected_literals,
    scan_python,
    tests_of_file,
    tree_facts,
)
from meridian.evaluators.changes import Ranges, Suppressed, apply_allows, mark_pre_existing
from meridian.evaluators.findings import SEVERITY_ORDER, Finding

# The JS/TS reader and the Go/Rust/JVM/shell one compile some 60 patterns when imported
# (~12 ms): they are imported when a file of theirs is read, so a commit of Python files
# (the pre-commit hook scans the staged ones) never pays for them.
JS_SUFFIXES = frozenset({".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".mts", ".cts"})
NATIVE_LANGUAGES = {".go": "go", ".rs": "rust", ".java": "java", ".kt": "kotlin",
                    ".kts": "kotlin", ".sh": "shell", ".bash": "shell", ".zsh": "shell"}
_SHEBANG_SHELL = re.compile(r"#!\s*/\S*(?:env\s+)?(?:ba|z|da)?sh\b")


# Suffixes of the files a reader of this scan judges: one of them that cannot be read as
# text is a finding (``unreadable_source``), never a silent skip.
SOURCE_SUFFIXES = frozenset({".py", ".pyi", *JS_SUFFIXES, *NATIVE_LANGUAGES})


def unreadable_source(path: str) -> Finding | None:
    """A high ``syntax_error`` for a source file (a suffix the scan has a reader for)
    whose content could not be read as text: not UTF-8, no UTF-16/32 byte-order mark,
    not in the working-tree encoding ``.gitattributes`` names. The scan reads none of it
    (a stub checked out as UTF-16 looks binary), so it fails closed; other binary files
    (images, archives) are not judged. No line: it is part of the change wherever it is."""
    if PurePosixPath(path).suffix.lower() not in SOURCE_SUFFIXES:
        return None
    return Finding(severity="high", file=path, line=None, check="syntax_error",
                   message=f"{path}: source file that cannot be read as text (not UTF-8, "
                           "no UTF-16/32 byte-order mark, not in the working-tree-encoding "
                           ".gitattributes names): the scan cannot judge what it holds")


def is_js(path: str) -> bool:
    return PurePosixPath(path).suffix.lower() in JS_SUFFIXES


def is_js_test_file(path: str) -> bool:
    from meridian.evaluators._js_scan import is_js_test_file as of_js

    return of_js(path)


def native_language(path: str, content: str) -> str | None:
    """The language of a Go, Rust, Java/Kotlin or shell file (a shell script without a
    suffix by its ``#!`` line), or None."""
    suffix = PurePosixPath(path).suffix.lower()
    if suffix in NATIVE_LANGUAGES:
        return NATIVE_LANGUAGES[suffix]
    if not suffix and _SHEBANG_SHELL.match(content[:80]):
        return "shell"
    return None

CHECK_IDS: tuple[str, ...] = (
    "missing_artifact", "failing_check", "stub_code", "hollow_test", "skipped_test",
    "empty_file", "syntax_error", "swallowed_error",
)

# Empty by convention, not by neglect.
EMPTY_IS_FINE = frozenset({"__init__.py", "__init__.pyi", "py.typed", ".gitkeep", ".keep"})


class Located(Protocol):
    """A finding or an ``Issue``: both are ordered the same way."""

    @property
    def severity(self) -> str: ...
    @property
    def file(self) -> str | None: ...
    @property
    def line(self) -> int | None: ...
    @property
    def check(self) -> str | None: ...
    @property
    def message(self) -> str: ...


def order_key(item: Located) -> tuple[str, int, str, int, str]:
    """File, line, check, severity, message: the order findings are reported in."""
    return (item.file or "", item.line or 0, item.check or "", SEVERITY_ORDER[item.severity],
            item.message)


def check_disabled(disabled: Iterable[str]) -> frozenset[str]:
    """The disabled check ids, refused with the known ones when one is unknown."""
    disabled = frozenset(disabled)
    unknown = sorted(disabled - set(CHECK_IDS))
    if unknown:
        raise ConfigError(
            f"unknown heuristic check id {', '.join(map(repr, unknown))} "
            f"(known: {', '.join(CHECK_IDS)})")
    return disabled


def is_python_test_file(path: str) -> bool:
    pure = PurePosixPath(path)
    name = pure.name
    if not name.endswith(".py"):
        return False
    return name.startswith("test_") or name.endswith("_test.py") or name in (
        "tests.py", "conftest.py") or (name != "__init__.py" and any(
            part in ("tests", "test") for part in pure.parts[:-1]))


def is_test_path(path: str) -> bool:
    """A file of tests by its name or directory, in any language the scan reads."""
    pure = PurePosixPath(path)
    name = pure.name
    if is_python_test_file(path) or (is_js(path) and is_js_test_file(path)):
        return True
    if name.endswith("_test.go") or re.search(r"(?:Test|Tests|Spec)\.(?:java|kt)$", name):
        return True
    return pure.suffix == ".rs" and ("tests" in pure.parts[:-1] or name.endswith("_test.rs"))


def scan_file(path: str, content: str, *, truncated: bool = False,
              facts: TreeFacts | None = None, js_facts: frozenset[str] = frozenset()
              ) -> list[Finding]:
    """Every check's findings in one file (``truncated``: only the start of it was read;
    ``facts``/``js_facts``: what the other files scanned with it say, see ``tree_facts``
    and ``_js_scan.subclassed_classes``)."""
    if not content.strip():
        if truncated or PurePosixPath(path).name in EMPTY_IS_FINE:
            return []
        return [Finding(severity="medium", file=path, line=1, check="empty_file",
                        message="file is empty or only whitespace")]
    suffix = PurePosixPath(path).suffix.lower()
    if suffix in (".py", ".pyi"):
        return scan_python(path, content, is_test_file=is_python_test_file(path),
                           truncated=truncated, facts=facts)
    if is_js(path):
        from meridian.evaluators._js_scan import scan_js

        return scan_js(path, content, subclassed=js_facts)
    language = native_language(path, content)
    if language is not None:
        from meridian.evaluators._native_scan import scan_native

        return scan_native(path, content, language)
    # Any other text (docs, config, other languages): only unfinished-work markers.
    return [
        Finding(severity="low", file=path, line=number, check="stub_code",
                message=f"{match.group(1)} marker left in the file: {line.strip()[:120]}")
        for number, line in enumerate(content.splitlines(), 1)
        if (match := MARKER.search(line)) and "meridian:" not in line
    ]


def hard_coded_answers(files: Mapping[str, str]) -> list[Finding]:
    """A function that ignores its arguments and returns a literal equal to what a test
    in the same scan expects of it: the answer was written in, not computed."""
    tests = [text for path, text in files.items() if is_python_test_file(path)]
    if not tests:
        return []
    expected: dict[str, list[object]] = {}
    for text in tests:
        for name, values in expected_literals(text).items():
            expected.setdefault(name, []).extend(values)
    found = []
    for path, text in files.items():
        if not path.endswith(".py") or is_python_test_file(path):
            continue
        for constant in constant_returns(path, text):
            values = expected.get(constant.name, [])
            if any(type(v) is type(constant.value) and v == constant.value for v in values):
                found.append(Finding(
                    severity="high", file=path, line=constant.line, check="stub_code",
                    end_line=constant.end, scope_line=constant.scope,
                    message=(f"`{constant.name}` ignores its arguments and returns "
                             f"{constant.value!r}, the very value its test expects: a "
                             "hard-coded answer, not an implementation")))
    return found


def module_names(path: str, files: Iterable[str]) -> set[str]:
    """The dotted names a test may import ``path`` by: from its outermost package (the
    directories above it holding an ``__init__.py``), and each shorter tail of that;
    and, as namespace packages (PEP 420) or a rootdir on ``sys.path`` allow, the dotted
    path from the tree's root (``src/pricing.py`` as ``src.pricing``) and its tails."""
    pure = PurePosixPath(path)
    listed = set(files)
    parts = [pure.stem] if pure.stem != "__init__" else []
    directory = pure.parent
    while str(directory) != "." and f"{directory}/__init__.py" in listed:
        parts.insert(0, directory.name)
        directory = directory.parent
    if not parts:
        return set()
    names = {".".join(parts[i:]) for i in range(len(parts))}
    whole = [*pure.parent.parts, *([pure.stem] if pure.stem != "__init__" else [])]
    if whole and all(part.isidentifier() for part in whole):
        names |= {".".join(whole[i:]) for i in range(len(whole))}
    return names


def untested_changes(files: Mapping[str, str],
                     changed: Mapping[str, Ranges] | None) -> list[Finding]:
    """A changed Python module every test of which is switched off: the tests of a
    module are the test functions of the test files that import it; when there are
    some and none can run, the change ships a feature with no running test. High, at
    the module's first changed line, whether the skips are new or were already there."""
    test_files = {path: text for path, text in files.items() if is_python_test_file(path)}
    code = [path for path in sorted(files) if path.endswith(".py")
            and not is_python_test_file(path)
            and (changed is None or changed.get(path))]
    if not test_files or not code:
        return []
    parsed = {path: file_tests for path, text in test_files.items()
              if (file_tests := tests_of_file(text)) is not None and file_tests.tests}
    found: list[Finding] = []
    for path in code:
        names = module_names(path, files)
        importing = {test: tests for test, tests in parsed.items() if tests.imports & names}
        total = sum(len(t.tests) for t in importing.values())
        if not total or any(len(t.off) < len(t.tests) for t in importing.values()):
            continue
        first_file = min(importing)
        line, how = importing[first_file].off[importing[first_file].tests[0]]
        where = f"{first_file}:{line}"
        ranges = None if changed is None else changed.get(path)
        first = ranges[0][0] if ranges else 1
        shown = ", ".join(sorted(importing))
        found.append(Finding(
            severity="high", file=path, line=first, check="skipped_test",
            message=(f"the change touches `{path}` and every test of it is switched off "
                     f"({total} test(s) in {shown}; first at {where}: {how}): the code "
                     "ships with no running test")))
    return found


def _junit_names(path: str, qualname: str) -> tuple[str, str]:
    """A test as a pytest node id and as a JUnit ``classname.name``."""
    module = path[:-3].replace("/", ".") if path.endswith(".py") else path
    return f"{path}::{qualname.replace('.', '::')}", f"{module}.{qualname}"


def _feature_tests(ids: Iterable[str], parsed: Mapping[str, FileTests]) -> list[tuple[str, str]]:
    """(test file, test) of each test a features file lists, found among ``parsed``."""
    import fnmatch

    wanted = [re.sub(r"\[.*\]$", "", test_id) for test_id in ids]
    found = []
    for path, tests in sorted(parsed.items()):
        for test in tests.tests:
            node, dotted = _junit_names(path, test)
            if any(fnmatch.fnmatchcase(node, w) or fnmatch.fnmatchcase(dotted, w)
                   for w in wanted):
                found.append((path, test))
    return found


def features_left_untested(files: Mapping[str, str], changed: Mapping[str, Ranges] | None,
                           features: Mapping[str, Sequence[str]]) -> list[Finding]:
    """A feature of the features file whose listed tests are all switched off, when the
    change touches it (one of those test files, or a module they import): high, at the
    first changed line of what it touched."""
    parsed = {path: file_tests for path, text in files.items() if is_python_test_file(path)
              if (file_tests := tests_of_file(text)) is not None and file_tests.tests}
    if not parsed or not features:
        return []
    found: list[Finding] = []
    for feature, ids in sorted(features.items()):
        tests = _feature_tests(ids, parsed)
        if not tests or any(test not in parsed[path].off for path, test in tests):
            continue
        test_files = sorted({path for path, _ in tests})
        imported = set().union(*(parsed[p].imports for p in test_files))
        related = test_files + [p for p in sorted(files) if p.endswith(".py")
                                and p not in parsed and module_names(p, files) & imported]
        touched = [p for p in related if changed is None or changed.get(p)]
        if not touched:
            continue
        ranges = None if changed is None else changed.get(touched[0])
        path, test = tests[0]
        line, how = parsed[path].off[test]
        found.append(Finding(
            severity="high", file=touched[0], line=ranges[0][0] if ranges else 1,
            check="skipped_test",
            message=(f"feature `{feature}` has no running test: all {len(tests)} of the "
                     f"tests the features file lists for it are switched off (first "
                     f"{path}:{line}: {how}), and the change touches it")))
    return found


@dataclass
class ScanResult:
    findings: list[Finding] = field(default_factory=list)  # ``order_key`` order
    suppressed: list[Suppressed] = field(default_factory=list)

    def blocking(self) -> list[Finding]:
        return [f for f in self.findings if f.blocks]


def scan_tree(files: Mapping[str, str], disabled: frozenset[str] = frozenset(), *,
              changed: Mapping[str, Ranges] | None = None,
              truncated: frozenset[str] = frozenset(),
              features: Mapping[str, Sequence[str]] | None = None) -> ScanResult:
    """Scan ``files`` (path -> text) as one change.

    ``changed``: per path, the line ranges the change touched; a path missing from it
    is untouched. None: there is no base to compare with, so everything is the change.
    ``features``: feature id -> the test ids the features file lists for it.
    """
    disabled = check_disabled(disabled)
    # Cross-file facts: subclasses and test helpers defined in other files of the scan.
    facts = tree_facts({p: t for p, t in files.items() if p.endswith((".py", ".pyi"))},
                       is_python_test_file)
    js_facts: frozenset[str] = frozenset()
    if any(is_js(p) for p in files):
        from meridian.evaluators._js_scan import subclassed_classes

        js_facts = subclassed_classes({p: t for p, t in files.items() if is_js(p)})
    by_file: dict[str, list[Finding]] = {
        path: scan_file(path, files[path], truncated=path in truncated, facts=facts,
                        js_facts=js_facts) for path in sorted(files)}
    for finding in [*hard_coded_answers(files), *untested_changes(files, changed),
                    *features_left_untested(files, changed, features or {})]:
        by_file.setdefault(finding.file or "", []).append(finding)
    result = ScanResult()
    for path, findings in by_file.items():
        findings = [f for f in findings if f.check not in disabled]
        ranges = None if changed is None else changed.get(path, ())
        kept, suppressed = apply_allows(path, files.get(path, ""), findings, ranges)
        result.findings += kept
        result.suppressed += suppressed
    result.findings = sorted(mark_pre_existing(result.findings, changed), key=order_key)
    return result


def scan_findings(files: Mapping[str, str],
                  disabled: frozenset[str] = frozenset()) -> list[Finding]:
    """Findings in file contents (path -> text), all judged as new, in ``order_key``
    order; a disabled check and a finding an inline marker allows are left out."""
    return scan_tree(files, disabled).findings
