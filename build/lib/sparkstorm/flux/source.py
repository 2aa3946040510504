"""Reading a Flux file, as Storm's ``FluxParser`` does it.

Property and environment substitution, YAML with line numbers, and ``includes``.

- ``${key}`` is replaced by the value of ``key`` in the ``--filter`` properties file, and
  ``${key[2]}`` by the third item of a list value (``["a", "b", "c"]``), before the YAML is
  parsed, line by line (so line numbers stay right).
- ``${ENV-NAME}`` is replaced by the environment variable ``NAME`` with ``--env-filter``.
- A ``${...}`` left unresolved is refused (``FLUX_UNRESOLVED_PROPERTY``), naming the line:
  Flux only warns and keeps the text, which then fails later and less clearly.
- ``includes`` (not recursive, as in Flux): each file's ``name``, ``config``, ``spouts`` and
  ``bolts`` are merged, replacing what the including file set only with ``override: true``;
  its ``streams`` are appended. A relative ``file`` is found next to the including file,
  else in the current directory. Classpath resources (``resource: true``) are refused.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import yaml

from sparkstorm.errors import TopologyError

_PLACEHOLDER = re.compile(r"\$\{([^}]+)\}")
_LIST_INDEX = re.compile(r"^(?P<list>.+)\[(?P<index>\d+)\]$")


class FluxError(TopologyError):
    """A Flux file sparkstorm cannot run, with the file and line in its message."""


@dataclass(frozen=True)
class Where:
    """A place in a Flux file, for messages: ``topology.yaml:12``."""

    file: Path
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


class LineDict(dict[str, Any]):
    """A YAML mapping that knows where it and each of its keys are."""

    where: Where
    key_where: dict[str, Where]


class LineList(list[Any]):
    """A YAML sequence that knows where it and each of its items are."""

    where: Where
    item_where: list[Where]


def fail(where: Any, problem: str, code: str) -> NoReturn:
    """Raise a :class:`FluxError` saying ``where`` (a :class:`Where`) ``problem`` is."""
    msg = f"{where}: {problem}"
    raise FluxError(msg, code=code)


def read_properties(path: str | Path) -> dict[str, str]:
    r"""A Java ``.properties`` file.

    ``key=value``, ``key: value`` or ``key value`` lines, ``#``/``!`` comments, ``\`` line
    continuations.

    Raises:
        FluxError: ``FLUX_FILTER_FILE_UNREADABLE``.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        msg = f"--filter {path}: cannot read the properties file ({exc})"
        raise FluxError(msg, code="FLUX_FILTER_FILE_UNREADABLE") from exc
    properties: dict[str, str] = {}
    logical = ""
    for raw in text.splitlines():
        line = logical + raw.lstrip() if logical else raw.strip()
        if line.endswith("\\") and not line.endswith("\\\\"):
            logical = line[:-1]
            continue
        logical = ""
        if not line or line[0] in "#!":
            continue
        match = re.match(r"((?:[^\\:=\s]|\\.)+)\s*[:=\s]\s*(.*)$", line)
        key, value = (match.group(1), match.group(2)) if match else (line, "")
        properties[key.replace("\\", "")] = value.strip()
    return properties


def substitute(text: str, file: Path, properties: dict[str, str], env_filter: bool) -> str:
    """``text`` with every ``${...}`` replaced (see the module docstring).

    Raises:
        FluxError: ``FLUX_UNRESOLVED_PROPERTY`` naming the line and the placeholder.
    """
    lines = text.split("\n")
    for number, line in enumerate(lines, start=1):
        if "${" in line and not line.lstrip().startswith("#"):
            where = Where(file, number)

            def replace(match: re.Match[str], where: Where = where) -> str:
                return _value(match.group(1), where, properties, env_filter)

            lines[number - 1] = _PLACEHOLDER.sub(replace, line)
    return "\n".join(lines)


def _value(var: str, where: Where, properties: dict[str, str], env_filter: bool) -> str:
    if var.startswith("ENV-"):
        value = os.environ.get(var[4:]) if env_filter else None
        if value is not None:
            return value
        how = (f"the environment variable {var[4:]} is not set" if env_filter else
               "environment substitution is off: pass --env-filter, as to Flux's -e")
        fail(where, f"cannot replace ${{{var}}}: {how}", "FLUX_UNRESOLVED_PROPERTY")
    indexed = _LIST_INDEX.match(var)
    if indexed and indexed.group("list") in properties:
        items = [item.strip().strip('"') for item in
                 properties[indexed.group("list")].strip().strip("[]").split(",")]
        index = int(indexed.group("index"))
        if index < len(items):
            return items[index]
    if var in properties:
        return properties[var]
    how = ("no --filter properties file was given" if not properties else
           f"the properties file has no key {var!r}")
    fail(where, f"cannot replace ${{{var}}}: {how}", "FLUX_UNRESOLVED_PROPERTY")


class _Loader(yaml.SafeLoader):
    file = Path("?")


def _construct_mapping(loader: _Loader, node: yaml.MappingNode) -> LineDict:
    loader.flatten_mapping(node)
    result = LineDict()
    result.where = Where(loader.file, node.start_mark.line + 1)
    result.key_where = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        result[key] = loader.construct_object(value_node, deep=True)
        result.key_where[key] = Where(loader.file, key_node.start_mark.line + 1)
    return result


def _construct_sequence(loader: _Loader, node: yaml.SequenceNode) -> LineList:
    result = LineList(loader.construct_object(child, deep=True) for child in node.value)
    result.where = Where(loader.file, node.start_mark.line + 1)
    result.item_where = [Where(loader.file, child.start_mark.line + 1) for child in node.value]
    return result


_Loader.add_constructor("tag:yaml.org,2002:map", _construct_mapping)
_Loader.add_constructor("tag:yaml.org,2002:seq", _construct_sequence)


def load_document(file: Path, properties: dict[str, str], env_filter: bool) -> LineDict:
    """Read, substitute and parse one Flux file into a :class:`LineDict`.

    Raises:
        FluxError: ``FLUX_FILE_UNREADABLE``, ``FLUX_YAML_INVALID`` (with the line) or
            ``FLUX_UNRESOLVED_PROPERTY``.
    """
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        msg = f"{file}: cannot read the Flux file ({exc})"
        raise FluxError(msg, code="FLUX_FILE_UNREADABLE") from exc
    text = substitute(text, file, properties, env_filter)
    loader_cls = type("_FileLoader", (_Loader,), {"file": file})
    try:
        document = yaml.load(text, Loader=loader_cls)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        fail(Where(file, line), f"not valid YAML ({exc}); fix the syntax",
                    "FLUX_YAML_INVALID")
    if not isinstance(document, LineDict):
        fail(Where(file, 1), "a Flux file is a YAML mapping with name, config, "
                    "spouts, bolts and streams", "FLUX_YAML_INVALID")
    return document


def load_with_includes(file: Path, properties: dict[str, str], env_filter: bool
                       ) -> LineDict:
    """The Flux file with its ``includes`` merged (see the module docstring).

    Raises:
        FluxError: as :func:`load_document`, and ``FLUX_INCLUDE_NOT_FOUND`` /
            ``FLUX_UNSUPPORTED`` for an include that is missing or a classpath resource.
    """
    document = load_document(file, properties, env_filter)
    includes = document.pop("includes", None)
    if not includes:
        return document
    if not isinstance(includes, LineList):
        fail(document.key_where["includes"], "includes must be a list of {file, override}",
             "FLUX_INVALID_VALUE")
    for include, where in zip(includes, includes.item_where, strict=True):
        if not isinstance(include, LineDict) or "file" not in include:
            fail(where, "an include is a mapping with 'file' (and 'override', 'resource')",
                 "FLUX_INVALID_VALUE")
        if include.get("resource"):
            fail(where, f"include {include['file']!r} is a classpath resource "
                 "(resource: true); there is no classpath here: give a file path",
                 "FLUX_UNSUPPORTED")
        path = _include_path(file, str(include["file"]), where)
        included = load_document(path, properties, env_filter)  # not recursive, as Flux
        _merge(document, included, bool(include.get("override", False)))
    return document


def _include_path(including: Path, name: str, where: Where) -> Path:
    candidates = [Path(name)] if Path(name).is_absolute() else [including.parent / name,
                                                               Path.cwd() / name]
    for path in candidates:
        if path.is_file():
            return path
    fail(where, f"included file {name!r} not found (looked at "
                f"{[str(p) for p in candidates]})", "FLUX_INCLUDE_NOT_FOUND")


def _merge(document: LineDict, included: LineDict, override: bool) -> None:
    if "name" in included and (override or "name" not in document):
        document["name"] = included["name"]
    config = document.setdefault("config", LineDict())
    for key, value in (included.get("config") or {}).items():
        if override or key not in config:
            config[key] = value
    for section in ("spouts", "bolts", "components"):
        items = list(included.get(section) or [])
        if not items:
            continue
        mine = document.get(section)
        if not isinstance(mine, LineList):
            mine = LineList()
            mine.where, mine.item_where = included.key_where[section], []
            document[section] = mine
        ids = {item.get("id"): index for index, item in enumerate(mine)
               if isinstance(item, dict)}
        for item, where in zip(items, included[section].item_where, strict=True):
            key = item.get("id") if isinstance(item, dict) else None
            if key in ids:
                if override:
                    mine[ids[key]], mine.item_where[ids[key]] = item, where
                continue
            mine.append(item)
            mine.item_where.append(where)
    streams = list(included.get("streams") or [])
    if streams:
        mine = document.get("streams")
        if not isinstance(mine, LineList):
            mine = LineList()
            mine.where, mine.item_where = included.key_where["streams"], []
            document["streams"] = mine
        mine.extend(streams)
        mine.item_where.extend(included["streams"].item_where)
