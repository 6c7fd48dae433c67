"""YAML parsing that remembers where every value came from, without pydantic.

The parsing half of ``meridian.yamlio`` (which adds pydantic validation and re-exports
all of this): every YAML file Meridian reads is composed, bounded and built here, so the
plain readers that must decide exactly as the models' path (``gates/plain_definition.py``)
read the very same values, with the same duplicate-key, alias, merge-key and limit
handling. See ``meridian.yamlio`` for the limits.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from meridian.errors import ConfigError
from meridian.userfiles import MAX_BYTES, read_bounded

Loc = tuple[str | int, ...]
MAX_DEPTH = 64  # mappings and sequences inside each other
MAX_NODES = 100_000  # values built, each alias expansion counted again


class Located:
    """Parsed YAML plus the line (1-based) of every mapping key and sequence item."""

    def __init__(self, path: Path | str, data: Any, lines: dict[Loc, int]) -> None:
        self.path = str(path)
        self.data = data
        self._lines = lines

    def line(self, loc: Loc) -> int | None:
        """Line of the deepest known prefix of ``loc`` (pydantic locs may go deeper)."""
        loc = tuple(loc)
        while loc:
            if loc in self._lines:
                return self._lines[loc]
            loc = loc[:-1]
        return self._lines.get((), None)

    def where(self, loc: Loc) -> str:
        line = self.line(loc)
        return f"{self.path}:{line}" if line else self.path

    def error(self, loc: Loc, message: str) -> ConfigError:
        field = dotted(loc)
        prefix = f"{self.where(loc)}: "
        return ConfigError(prefix + (f"{field}: {message}" if field else message))


def dotted(loc: Loc) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


class _Builder:
    """Turns a composed YAML node tree into Python values, recording each line."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.lines: dict[Loc, int] = {}
        self.loader = yaml.SafeLoader("")
        self.nodes = 0

    def build(self, node: yaml.Node, loc: Loc, active: frozenset[int] = frozenset()) -> Any:
        if id(node) in active:  # an alias that contains itself: `a: &x [*x]`
            raise ConfigError(f"{self._where(node, loc)}: an alias refers to itself")
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise ConfigError(f"{self._where(node, loc)}: the document expands to more than "
                              f"{MAX_NODES} values (aliases repeated inside aliases?); write "
                              "the values out")
        if len(active) >= MAX_DEPTH:
            raise ConfigError(f"{self._where(node, loc)}: nested more than {MAX_DEPTH} levels "
                              "deep")
        self.lines.setdefault(loc, node.start_mark.line + 1)
        if isinstance(node, yaml.MappingNode):
            return self.mapping(node, loc, active | {id(node)})
        if isinstance(node, yaml.SequenceNode):
            items = []
            for index, item in enumerate(node.value):
                self.lines[loc + (index,)] = item.start_mark.line + 1
                items.append(self.build(item, loc + (index,), active | {id(node)}))
            return items
        return self.scalar(node, loc)

    def _where(self, node: yaml.Node, loc: Loc) -> str:
        field = dotted(loc[:8]) + ("..." if len(loc) > 8 else "")
        return f"{self.path}:{node.start_mark.line + 1}: {field or 'value'}"

    def mapping(self, node: yaml.MappingNode, loc: Loc, active: frozenset[int]) -> dict[Any, Any]:
        result: dict[Any, Any] = {}
        merged: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            line = key_node.start_mark.line + 1
            if key_node.tag == "tag:yaml.org,2002:merge":  # `<<: *base` merge keys
                sources = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
                for source in sources:
                    value = self.build(source, loc, active)
                    if not isinstance(value, dict):
                        raise ConfigError(f"{self.path}:{line}: {dotted(loc) or 'value'}: "
                                          "`<<` must merge a mapping")
                    merged = {**value, **merged}
                continue
            key = self.scalar(key_node, loc)
            if isinstance(key, (bool, float)) or key is None:
                key = str(key_node.value)  # `on:`, `null:`, `1.5:` keep the text written
            elif not isinstance(key, (str, int)):
                raise ConfigError(f"{self.path}:{line}: {dotted(loc) or 'key'}: "
                                  "keys must be plain strings or numbers")
            if key in result:
                raise ConfigError(f"{self.path}:{line}: {dotted(loc + (key,)) or key}: duplicate key")
            self.lines[loc + (key,)] = line
            result[key] = self.build(value_node, loc + (key,), active)
        return {**merged, **result}

    def scalar(self, node: yaml.Node, loc: Loc) -> Any:
        try:
            return self.loader.construct_object(node, deep=True)
        except (ValueError, TypeError, OverflowError, yaml.YAMLError) as exc:
            # e.g. a date that does not exist: `review: 2020-13-01`, or an unknown `!tag`
            where = f"{self.path}:{node.start_mark.line + 1}"
            field = dotted(loc)
            reason = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            raise ConfigError(f"{where}: {field + ': ' if field else ''}invalid value "
                              f"{node.value!r}: {reason}") from None


@lru_cache(maxsize=1)
def _c_loader() -> Any:
    """libyaml's safe loader when it is installed and bounds nesting itself, else None.

    Composing is most of the cost of a large suite (0.4 ms per task in pure Python),
    and libyaml composes ~10x faster. Its composer recurses in C, so it is used only
    when libyaml refuses deep nesting on its own (libyaml >= 0.2.5: 1,000 levels; our
    own limit, MAX_DEPTH, is checked by the builder either way); an older libyaml
    would let a file of brackets overflow the C stack.
    """
    loader = getattr(yaml, "CSafeLoader", None)
    if loader is None:
        return None
    deep = "[" * 5000 + "]" * 5000
    try:
        yaml.compose(deep, Loader=loader)
    except yaml.YAMLError:
        return loader  # refused: the nesting is bounded in C
    return None


def _compose(text: str) -> Any:
    loader = _c_loader()
    if loader is not None:
        try:
            return yaml.compose(text, Loader=loader)
        except yaml.YAMLError:
            pass  # composed again below, for the pure-Python parser's located message
    return yaml.compose(text, Loader=yaml.SafeLoader)


def parse(text: str, path: Path | str) -> Located:
    path = str(path)
    if len(text) > MAX_BYTES:
        raise ConfigError(f"{path}: larger than {MAX_BYTES // (1024 * 1024)} MiB; not a "
                          "Meridian file")
    try:
        node = _compose(text)
    except RecursionError:
        raise ConfigError(f"{path}: invalid YAML: nested too deeply") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = f":{mark.line + 1}" if mark else ""
        problem = (exc.problem or exc.context or "invalid YAML").splitlines()[0]
        raise ConfigError(f"{path}{line}: invalid YAML: {problem}") from None
    except yaml.YAMLError as exc:
        first = (str(exc).splitlines() or ["invalid YAML"])[0]
        raise ConfigError(f"{path}: invalid YAML: {first}") from None
    except (OverflowError, ValueError) as exc:
        # the scanner's chr() of an escape past U+10FFFF (`"\UFFFFFFFF"`), either composer
        raise ConfigError(f"{path}: invalid YAML: an escape names no character ({exc})") from None
    builder = _Builder(path)
    try:
        data = None if node is None else builder.build(node, ())
    except RecursionError:
        raise ConfigError(f"{path}: nested too deeply") from None
    finally:
        builder.loader.dispose()
    return Located(path, data, builder.lines)


def display_path(path: Path | str) -> str:
    """``path`` relative to the current directory when it is below it (clickable)."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return str(path)


def load(path: Path | str) -> Located:
    """Load a YAML file; errors name it relative to the current directory."""
    shown = display_path(path)
    try:
        text = read_bounded(path, shown).decode("utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{shown}: file not found") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{shown}: cannot read: {exc}") from None
    return parse(text, shown)
