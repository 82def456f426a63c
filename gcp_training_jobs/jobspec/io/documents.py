"""Reading the YAML files users write: gcloud job configs (config.yaml) and Pulumi stack files.

YAML 1.1 reads `runtimeVersion: 1.10` as the float 1.1; the loader here keeps decimals as the text the
user wrote (numeric fields accept the text), so versions survive unquoted, as they do for gcloud users.

Any file is read in bounded time and memory, since a pull-request check runs on whatever was pushed:
regular files only, at most MAX_BYTES, nesting at most MAX_DEPTH deep, and at most MAX_NODES values once
aliases are expanded (a "billion laughs" file is refused before anything is built from it). libyaml's C
parser does the parsing where it is installed (PyYAML's pure-Python parser is the fallback).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from gcp_training_jobs.jobspec.core.errors import UnreadableError
from gcp_training_jobs.jobspec.io.slips import FLOW_TOKEN, plain_words

STACK_FILE = re.compile(r"Pulumi\.([A-Za-z0-9_.-]+)\.ya?ml")
PROJECT_FILE = re.compile(r"Pulumi\.ya?ml")
#: What a YAML file's name ends with (its suffix as pathlib has it: `.yaml` alone is a hidden file, no suffix).
YAML_SUFFIXES = (".yaml", ".yml")


#: Bounds on one input file (a gcloud config.yaml or a stack file is a few KB).
MAX_BYTES = 4 * 1024 * 1024
MAX_DEPTH = 64
MAX_NODES = 200_000

_BaseLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


_STR_TAG = "tag:yaml.org,2002:str"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_MAP_TAG = "tag:yaml.org,2002:map"
_INDENT = re.compile(r"^ +", re.M)

#: SafeLoader's implicit resolvers of a plain scalar, by its first character, without the float resolver.
_IMPLICIT: dict[str, tuple[tuple[str, re.Pattern[str]], ...]] = {
    first: tuple((tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:float")
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
assert None not in _IMPLICIT  # SafeLoader has no wildcard resolver: a scalar's first character decides


#: The longest plain scalar whose tag is remembered (_plain_tag): keys and short values, which recur from file to file.
_CACHED_SCALAR = 64


@lru_cache(maxsize=2048)
def _plain_tag(value: str) -> str:
    """The tag of a plain (unquoted) scalar by _IMPLICIT: a pure function of its text, so the keys and values that
    every job repeats (trainingInput, masterType, CUSTOM, ...) are matched against the resolvers' patterns once per
    process; bounded, and only for short scalars (_CACHED_SCALAR)."""
    for tag, pattern in _IMPLICIT.get(value[:1], ()):
        if pattern.match(value):
            return tag
    return _STR_TAG


class _Loader(_BaseLoader):  # type: ignore[valid-type,misc]
    """SafeLoader (C parser where available) without the float resolver: 1.10 stays "1.10". It has no path
    resolvers, so a node's tag is found in one step (libyaml calls `resolve` for every node it composes)."""

    yaml_implicit_resolvers = {first: list(resolvers) for first, resolvers in _IMPLICIT.items()}
    #: The resolvers `resolve` tries, by a plain scalar's first character.
    implicit: dict[str, tuple[tuple[str, re.Pattern[str]], ...]] = _IMPLICIT

    def resolve(self, kind: type[yaml.Node], value: str | None, implicit: tuple[bool, bool]) -> str:
        if kind is yaml.ScalarNode:
            if implicit[0] and value is not None:
                if self.implicit is _IMPLICIT:  # the one table _plain_tag remembers (a subclass may keep floats)
                    return _plain_tag(value) if len(value) <= _CACHED_SCALAR else _plain_tag.__wrapped__(value)
                for tag, pattern in self.implicit.get(value[:1], ()):
                    if pattern.match(value):
                        return tag
            return _STR_TAG
        return _SEQ_TAG if kind is yaml.SequenceNode else _MAP_TAG

    def descend_resolver(self, current_node: Any, current_index: Any) -> None:
        """Nothing to track: the path is only for path resolvers."""

    def ascend_resolver(self) -> None:
        """Nothing to track: the path is only for path resolvers."""


def _no_duplicate_keys(loader: _Loader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", key_node.start_mark
            )
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _no_duplicate_keys)


class _NumbersLoader(_Loader):
    """_Loader with YAML's own float resolver: an unquoted 1.10 is the number 1.1, as Pulumi's CLI reads it."""

    yaml_implicit_resolvers = {first: list(resolvers)
                               for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}
    implicit = {first: tuple(resolvers) for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}


def _scalar(loader: _Loader, node: yaml.ScalarNode) -> Any:
    """A scalar's value by its tag's constructor (int, bool, null, timestamp), as construct_object would give it."""
    construct = loader.yaml_constructors.get(node.tag)
    return construct(loader, node) if construct is not None else loader.construct_object(node, deep=True)


def _plain(loader: _Loader, node: yaml.Node) -> Any:
    """The value of a node tree without aliases, merge keys or explicit tags (what job configs and stack
    files are): the same result as the SafeLoader's constructors, built directly. Duplicate keys refused."""
    if isinstance(node, yaml.ScalarNode):
        return node.value if node.tag == _STR_TAG else _scalar(loader, node)
    if isinstance(node, yaml.SequenceNode):
        return [item.value if item.tag == _STR_TAG else _plain(loader, item) for item in node.value]
    mapping: dict[Any, Any] = {}
    for key_node, value_node in node.value:
        key = key_node.value if key_node.tag == _STR_TAG else _plain(loader, key_node)
        try:
            duplicate = key in mapping
        except TypeError:
            raise yaml.constructor.ConstructorError(None, None, "found unhashable key", key_node.start_mark) from None
        if duplicate:
            raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
        mapping[key] = value_node.value if value_node.tag == _STR_TAG else _plain(loader, value_node)
    return mapping


def _may_nest_deeper_than(text: str, limit: int) -> bool:
    """A cheap upper bound on nesting: flow brackets anywhere, plus block nesting, which needs deeper
    indentation (or compact `- - ` entries on one line) at every level."""
    flow = text.count("[") + text.count("{")
    if flow >= limit:
        return True
    indent = max(map(len, _INDENT.findall(text)), default=0)
    return flow + 2 * (indent + 1) + text.count("- ") + 2 > limit


def _too_deep(source: str, mark: Any) -> UnreadableError:
    where = f":{mark.line + 1}:{mark.column + 1}" if mark else ""
    return UnreadableError(f"{source}{where}: nested more than {MAX_DEPTH} levels deep; allowed: at most {MAX_DEPTH}")


def _flow_opener_past_bound(text: str) -> int | None:
    """Where the first flow collection nested deeper than MAX_DEPTH opens in `text`, if one does."""
    depth = 0
    for match in FLOW_TOKEN.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return match.start()
        elif token in "]}":
            depth = max(depth - 1, 0)
    return None


def _bounded(text: str, source: str) -> None:
    """Refuse nesting deeper than MAX_DEPTH before anything recursive sees the text (an iterative scan).

    A parser may refuse nesting of its own first (libyaml 0.2.6, bundled by PyYAML 6.0.4's wheels, does: its
    scanner looks up to 1,024 characters ahead, past our bound). Any error the scan meets is then held to the
    text it read: flow nesting past our bound there is refused in our words, whatever the parser said.
    """
    if not _may_nest_deeper_than(text, MAX_DEPTH):
        return
    depth = 0
    try:
        for event in yaml.parse(text, Loader=_Loader):
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_DEPTH:
                    raise _too_deep(source, event.start_mark)
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        read = text if mark is None else text[: mark.index + 1]
        opener = _flow_opener_past_bound(read)
        if opener is None:
            raise
        line = text.count("\n", 0, opener)
        raise _too_deep(source, yaml.Mark(source, opener, line, opener - (text.rfind("\n", 0, opener) + 1),
                                          None, 0)) from None


def _expanded_size(node: yaml.Node, source: str) -> int:
    """How many values the node becomes once aliases are expanded, counted without expanding them."""
    sizes: dict[int, int] = {}
    stack: list[tuple[yaml.Node, bool]] = [(node, False)]
    while stack:
        current, done = stack.pop()
        if id(current) in sizes:
            continue
        children: list[yaml.Node] = []
        if isinstance(current, yaml.MappingNode):
            children = [n for pair in current.value for n in pair]
        elif isinstance(current, yaml.SequenceNode):
            children = list(current.value)
        if done or not children:
            sizes[id(current)] = min(1 + sum(sizes.get(id(c), 1) for c in children), MAX_NODES + 1)
            continue
        stack.append((current, True))
        stack.extend((c, False) for c in children if id(c) not in sizes)
    total = sizes[id(node)]
    if total > MAX_NODES:
        raise UnreadableError(f"{source}: expands to more than {MAX_NODES:,} values (aliases); allowed: at "
                              f"most {MAX_NODES:,}")
    return total


def parse_yaml(text: str, source: str, *, numbers: bool = False) -> Any:
    """Parse YAML text; UnreadableError names the file, line and column on failure. `numbers`: with YAML's own
    number rules (an unquoted 1.10 the number 1.1, as Pulumi reads a stack file), else decimals kept as text."""
    try:
        _bounded(text, source)
        loader = (_NumbersLoader if numbers else _Loader)(text)
        try:
            node = loader.get_single_node()
            if node is None:
                return None
            if "*" in text:  # only aliases can make a document bigger than its text
                _expanded_size(node, source)
            elif not any(mark in text for mark in ("<<", "!")):  # no merge keys, no explicit tags
                return _plain(loader, node)
            return loader.construct_document(node)
        finally:
            loader.dispose()
    except RecursionError:
        raise UnreadableError(f"{source}: nested too deeply; allowed: at most {MAX_DEPTH} levels") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f":{mark.line + 1}:{mark.column + 1}" if mark else ""
        raise UnreadableError(f"{source}{where}: not valid YAML: {plain_words(error, text)}") from None


#: How a file is opened: read-only, never blocking (a FIFO is refused by its type, not waited on), not inherited.
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def read_text(path: Path) -> str:
    """A regular file's text, at most MAX_BYTES (UnreadableError otherwise, never a partial read). The file is
    opened, then its type and size are read from the open file (what is judged is what is read), then read by
    the size it has, plus a byte to see that it grew since (it is then read on, still bounded)."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise UnreadableError(f"{path}: not a regular file; allowed: a YAML file")
            if info.st_size > MAX_BYTES:
                raise UnreadableError(f"{path}: {info.st_size:,} bytes; allowed: at most {MAX_BYTES:,} bytes")
            chunks, size, want = [], 0, info.st_size + 1
            while size <= MAX_BYTES and (chunk := os.read(fd, min(want, MAX_BYTES + 1 - size))):
                chunks.append(chunk)
                size += len(chunk)
                want = 1 << 16
        finally:
            os.close(fd)
        if size > MAX_BYTES:
            raise UnreadableError(f"{path}: more than {MAX_BYTES:,} bytes; allowed: at most {MAX_BYTES:,}")
        return b"".join(chunks).decode("utf-8")
    except FileNotFoundError:
        raise UnreadableError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise UnreadableError(f"{path}: cannot be read: {error}") from None


def read_yaml(path: Path, *, numbers: bool = False) -> Any:
    return parse_yaml(read_text(path), str(path), numbers=numbers)


@dataclass(frozen=True)
class Document:
    """One input file and what kind it is: a job config or a stack file."""

    path: Path
    kind: str  # "job" | "stack"
    data: Any

    @property
    def stack_name(self) -> str | None:
        match = STACK_FILE.fullmatch(self.path.name)
        return match.group(1) if match else None


def classify(path: Path, data: Any) -> str:
    """A `Pulumi.NAME.yaml` or a mapping with a top-level `config:` is a stack file; else a job."""
    if STACK_FILE.fullmatch(path.name):
        return "stack"
    if isinstance(data, dict) and "config" in data and "trainingInput" not in data:
        return "stack"
    return "job"


def expand(paths: list[str]) -> Iterator[Path]:
    """Files named, and the YAML files inside folders named (sorted as paths; Pulumi.yaml itself skipped; a
    symlinked folder is not entered, a symlinked file is read)."""
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            yield from sorted(_yaml_files(path))
        else:
            yield path


def _yaml_files(folder: Path) -> Iterator[Path]:
    """The YAML files under a folder, found with os.scandir (a folder's entries carry their type: no stat each)."""
    pending = [str(folder)]
    while pending:
        try:
            entries = list(os.scandir(pending.pop()))
        except OSError:
            continue  # a folder that cannot be listed holds nothing to read
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                pending.append(entry.path)
            elif os.path.splitext(entry.name)[1] in YAML_SUFFIXES and not PROJECT_FILE.fullmatch(entry.name) \
                    and entry.is_file():
                yield Path(entry.path)


def load(path: Path) -> Document:
    """One input file, classified; an empty file (nothing but blanks and comments, or a bare `null`) is
    unreadable (exit 2): there is nothing in it to judge."""
    return load_text(path, read_text(path))


def load_text(path: Path, text: str) -> Document:
    """`load` of a file's text already read (read_text)."""
    data = parse_yaml(text, str(path))
    if data is None:
        raise UnreadableError(f"{path}: empty; allowed: a YAML mapping (a job config with trainingInput, or a "
                              "stack file)")
    return Document(path, classify(path, data), data)
