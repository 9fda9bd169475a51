"""Reads a YAML document safely into plain values, remembering the line of every key.

Only PyYAML's safe constructors are used, so no tag can build a Python object. Duplicate keys,
which PyYAML silently lets the last one win, are an error here.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

from ..errors import SpecError

Path = tuple  # a key path: ("features", "photo", "shape")


@dataclass
class Document:
    """A loaded YAML document: its plain value and where each key path sits in the file."""

    value: Any
    file: str
    lines: dict[Path, int] = field(default_factory=dict)
    num_nodes: int = 0
    open_nodes: set[int] = field(default_factory=set)  # the mappings and lists being converted

    def line(self, path: Path) -> int | None:
        """The line of `path`, or of its nearest parent that has one."""
        while path:
            if path in self.lines:
                return self.lines[path]
            path = path[:-1]
        return self.lines.get(())


def format_path(path: Path) -> str:
    """`("features", "photo", "shape")` as `features.photo.shape`; list indices as `[0]`."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(top level)"


def load_yaml(text: str, file: str) -> Document:
    """Parses `text` (the content of `file`) into a Document; raises SpecError naming the line."""
    try:
        loader = yaml.SafeLoader(text)
    except yaml.reader.ReaderError as error:  # e.g. a NUL or another control character
        line = text[: error.position].count("\n") + 1
        raise SpecError(f"{file}, line {line}: malformed YAML: character {_character(error)} is not allowed") from None
    try:
        node = loader.get_single_node()
        document = Document(value=None, file=file)
        if node is not None:
            if _expanded_size(node, {}, set()) > MAX_NODES:
                raise SpecError(_too_large(file))
            document.value = _convert(node, (), loader, document)
        return document
    except yaml.MarkedYAMLError as error:
        raise SpecError(f"{file}, line {_error_line(error, text)}: malformed YAML: "
                        f"{error.problem or error.context or 'unreadable'}") from None
    except yaml.reader.ReaderError as error:
        line = text[: error.position].count("\n") + 1
        raise SpecError(f"{file}, line {line}: malformed YAML: character {_character(error)} is not allowed") from None
    except yaml.YAMLError as error:
        raise SpecError(f"{file}: malformed YAML: {' '.join(str(error).split())}") from None
    except RecursionError:  # e.g. a merge key (`<<: *a`) inside the mapping it names
        raise SpecError(f"{file}: malformed YAML: nested too deeply (a YAML alias that contains itself?); "
                        "expected plain YAML values") from None
    finally:
        loader.dispose()


def _character(error: yaml.reader.ReaderError) -> str:
    character = error.character
    return f"U+{character:04X}" if isinstance(character, int) else repr(character)


def _error_line(error: yaml.MarkedYAMLError, text: str) -> int:
    """The line to blame: where parsing failed, or, when it ran off the end of the file (an
    unclosed bracket or quote), where the unfinished construct began."""
    mark = error.problem_mark or error.context_mark
    at_end = mark is not None and mark.index >= len(text.rstrip())
    if error.context_mark is not None and (mark is None or at_end):
        mark = error.context_mark
    return mark.line + 1 if mark else 1


_PLAIN_TAGS = {"tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"}
MAX_NODES = 200_000  # aliases can expand a small file into a huge document ("billion laughs")


def _too_large(file: str) -> str:
    return f"{file}: the spec expands to over {MAX_NODES} values (aliases?); expected a small spec"


def _expanded_size(node: yaml.Node, sizes: dict[int, int], open_nodes: set[int]) -> int:
    """How many values `node` expands to, its aliases followed, each distinct node sized once
    (`sizes`, by id): a document of a few aliases that would expand to millions of values is
    known from its few nodes, before any is converted (converting the first MAX_NODES of them in a
    process holding much else took 30 s of the cycle collector's time). A node within itself (a
    cycle, which the conversion names) counts once."""
    known = sizes.get(id(node))
    if known is not None:
        return known
    if id(node) in open_nodes:
        return 1
    size = 1
    if isinstance(node, (yaml.MappingNode, yaml.SequenceNode)):
        open_nodes.add(id(node))
        # a mapping's values, as the conversion counts them (its keys are plain, or refused there)
        children = [value for _, value in node.value] if isinstance(node, yaml.MappingNode) else node.value
        for child in children:
            size += _expanded_size(child, sizes, open_nodes)
            if size > MAX_NODES:
                break  # (enough to refuse it: not the rest of a bomb)
        open_nodes.discard(id(node))
    sizes[id(node)] = size
    return size


_TEXT_KEYS = {("version",)}  # values that are text even when they look like numbers


def _convert(node: yaml.Node, path: Path, loader: yaml.SafeLoader, document: Document) -> Any:
    document.lines.setdefault(path, node.start_mark.line + 1)
    document.num_nodes += 1
    if document.num_nodes > MAX_NODES:
        raise SpecError(_too_large(document.file))
    if not isinstance(node, yaml.ScalarNode) and node.tag not in _PLAIN_TAGS:
        raise SpecError(
            f"{document.file}, line {node.start_mark.line + 1}: {format_path(path)}: "
            f"unsupported YAML tag {node.tag!r}; expected plain YAML values"
        )
    if isinstance(node, (yaml.MappingNode, yaml.SequenceNode)):
        if id(node) in document.open_nodes:
            raise SpecError(f"{document.file}, line {node.start_mark.line + 1}: {format_path(path)}: a YAML alias "
                            "refers to a value that contains it (a cycle); expected plain YAML values")
        document.open_nodes.add(id(node))
        try:
            return _convert_collection(node, path, loader, document)
        finally:
            document.open_nodes.discard(id(node))
    value = loader.construct_object(node, deep=True)
    if path in _TEXT_KEYS and isinstance(value, (int, float)) and not isinstance(value, bool):
        return node.value  # as written: YAML reads `version: 1.10` as the number 1.1
    return value


def _convert_collection(node: yaml.Node, path: Path, loader: yaml.SafeLoader, document: Document) -> Any:
    if isinstance(node, yaml.MappingNode):
        loader.flatten_mapping(node)  # resolves `<<: *anchor` merge keys
        result: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                raise SpecError(
                    f"{document.file}, line {key_node.start_mark.line + 1}: {format_path(path)}: "
                    "expected a plain key, received a list or mapping"
                )
            key = loader.construct_object(key_node)
            key = key if isinstance(key, str) else str(key)
            if key in result:
                raise SpecError(
                    f"{document.file}, line {key_node.start_mark.line + 1}: "
                    f"{format_path(path + (key,))}: duplicate key (first given on line "
                    f"{document.lines[path + (key,)]})"
                )
            document.lines[path + (key,)] = key_node.start_mark.line + 1
            result[key] = _convert(value_node, path + (key,), loader, document)
        return result
    return [_convert(item, path + (index,), loader, document) for index, item in enumerate(node.value)]
