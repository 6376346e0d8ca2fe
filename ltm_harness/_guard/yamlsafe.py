"""YAML read safely: `yaml.SafeLoader`, plus a duplicate key in a mapping is an error (YAML says keys are unique;
PyYAML silently keeps the last), aliases are bounded, so an "alias bomb" (a billion laughs) is refused before
it expands, and an integer of more digits than Python reads is refused in words (PyYAML raises a bare ValueError)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import yaml
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode, Node, ScalarNode

from ltm_harness._errors import ConfigError
from ltm_harness._guard.files import read_text
from ltm_harness._guard.limits import MAX_JSON_DEPTH, MAX_YAML_ALIASES, MAX_YAML_NODES, clip

MAX_YAML_DEPTH = MAX_JSON_DEPTH


class YAMLProblem(yaml.YAMLError):
    """A YAML file that parses but is refused: a key given twice, or aliases that expand too far."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


class StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses duplicate keys and alias bombs."""

    def __init__(self, stream: Any) -> None:
        super().__init__(stream)
        self._aliases = 0

    def fetch_flow_collection_start(self, TokenClass: Any) -> None:  # noqa: N803 - PyYAML's name
        # PyYAML's scanner slows down quadratically with flow nesting ([[[[...): refuse it early
        if self.flow_level >= MAX_YAML_DEPTH:
            mark = self.get_mark()
            raise YAMLProblem(f"nested deeper than {MAX_YAML_DEPTH} levels", mark.line + 1)
        super().fetch_flow_collection_start(TokenClass)

    def compose_node(self, parent: Node | None, index: Any) -> Node:
        if self.check_event(yaml.AliasEvent):
            self._aliases += 1
            if self._aliases > MAX_YAML_ALIASES:
                mark = self.peek_event().start_mark
                raise YAMLProblem(f"more than {MAX_YAML_ALIASES} aliases (*name), refused as a possible alias bomb",
                                  mark.line + 1)
        return super().compose_node(parent, index)

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                hash(key)
            except TypeError:
                raise ConstructorError(None, None, "a mapping key must be a plain value", key_node.start_mark) from None
            if key in seen:
                raise YAMLProblem(f"key {clip(key)} is given twice (lines {seen[key]} and "
                                  f"{key_node.start_mark.line + 1}); remove one of them", key_node.start_mark.line + 1)
            seen[key] = key_node.start_mark.line + 1
        return super().construct_mapping(node, deep=deep)


def _construct_int(loader: StrictLoader, node: ScalarNode) -> Any:
    """An integer, or YAMLProblem for one of more digits than Python reads (`sys.get_int_max_str_digits`)."""
    try:
        return yaml.constructor.SafeConstructor.construct_yaml_int(loader, node)
    except ValueError:
        raise YAMLProblem(f"a number of {len(str(node.value)):,} digits, more than the {sys.get_int_max_str_digits():,} "
                          "this reader takes; write a smaller number", node.start_mark.line + 1) from None


StrictLoader.add_constructor("tag:yaml.org,2002:int", _construct_int)


def _count_nodes(node: Node) -> None:
    """Refuse a document whose tree, aliases expanded, has more than MAX_YAML_NODES nodes (counted without
    expanding: each node's size is computed once)."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[Node, bool]] = [(node, False)]
    while stack:
        current, done = stack.pop()
        key = id(current)
        if key in sizes:
            continue
        children: list[Node] = []
        if isinstance(current.value, list):
            for item in current.value:
                children.extend(item if isinstance(item, tuple) else (item,))
        if not done:
            if key in open_nodes:  # reached again below itself: an alias of an enclosing node
                raise YAMLProblem("a recursive alias (a node holding itself), refused", current.start_mark.line + 1)
            open_nodes.add(key)
            stack.append((current, True))
            stack.extend((c, False) for c in children if id(c) not in sizes)
            continue
        open_nodes.discard(key)
        total = 1 + sum(sizes.get(id(c), 1) for c in children)
        if total > MAX_YAML_NODES:
            raise YAMLProblem(f"the document expands to more than {MAX_YAML_NODES:,} values through its aliases, "
                              "refused as a possible alias bomb", current.start_mark.line + 1)
        sizes[key] = total


def load(text: str) -> Any:
    """The one YAML document in `text` (None if empty); a YAMLError (YAMLProblem for refused files) otherwise."""
    loader = StrictLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _count_nodes(node)
        return loader.construct_document(node)
    except RecursionError:
        raise YAMLProblem("nested too deeply to read", None) from None
    finally:
        loader.dispose()


def read_yaml_mapping(path: Path, what: str, expected: str) -> dict[str, Any]:
    """A YAML file holding a mapping (a config, a study file), or a ConfigError naming the file and the fix;
    `expected` says what the file should hold."""
    try:
        raw = load(read_text(path))
    except YAMLProblem as exc:
        at = f"line {exc.line}: " if exc.line else ""
        raise ConfigError(f"{path}: {at}{exc.message}" + ("" if "; " in exc.message else "; fix the file")) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise ConfigError(f"{path}: not valid YAML{at}; fix the syntax") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not a UTF-8 text file; give a YAML {what}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read ({exc.strerror or exc}); give a readable {what} file") from None
    if raw is None:
        raise ConfigError(f"{path}: the file is empty; give {expected}")
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: the {what} must be a mapping, not a {type(raw).__name__}; give {expected}")
    return raw
