"""The error-code registry (``sparkstorm.error_codes``) against the codes ``src/`` raises.

The sources are read with ``ast``, not imported. A code counts as raised where it is
written as a string at one of these:

- ``code="X"`` in any call, or ``code=`` an expression whose values are literals (``"A" if
  ... else "B"``, a local ``code = ...`` of literals, a ``{...}.get(...)`` of them, a
  module constant);
- the ``code`` argument, by position, of a helper that passes its own ``code`` parameter on
  (``fail(where, problem, "FLUX_UNKNOWN_KEY")``), and ``"code": X`` in a JSON error body;
- a class's ``default_code = "X"``;
- an f-string (``f"TOPOLOGY_BEING_{being}"``): the registered codes it can build.

A code passed along from elsewhere (``code=exc.code``, ``code=body["code"]``, a parameter)
is not a new one. ``CODES``/``ERROR_CODES`` tables of a subpackage (``cli/errors.py``,
``multilang/errors.py``, ...) must be registered too; a code registered but raised nowhere
(not even as a string that code returns, as ``executor_count_problem`` does) is dead.
"""

from __future__ import annotations

import ast
import importlib.util
import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import sparkstorm
from sparkstorm.error_codes import ERROR_CODES

SRC = Path(sparkstorm.__file__).parent
ROOT = SRC.parents[1]
REGISTRY = SRC / "error_codes.py"
CODE = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$|^[A-Z]+$")
TABLES = ("CODES", "ERROR_CODES")
Function = ast.FunctionDef | ast.AsyncFunctionDef
HelperKey = tuple[bool, str]
"""(called as a method?, name) of a helper that takes a ``code`` argument."""


@dataclass
class Scan:
    raised: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    """code -> the places (``path:line``) that raise it."""
    built: dict[str, str] = field(default_factory=dict)
    """regex of an f-string code -> its place."""
    forwarded: list[str] = field(default_factory=list)
    """places passing on a code made elsewhere (``exc.code``, a parameter)."""
    tabled: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    """code -> the ``CODES``/``ERROR_CODES`` tables that list it."""
    mentioned: set[str] = field(default_factory=set)
    """every other UPPER_SNAKE string in the sources (a code a function returns, say)."""
    helpers: dict[HelperKey, int] = field(default_factory=dict)
    """helper -> the position of its ``code`` argument (``self`` not counted)."""


def _sources() -> Iterator[tuple[str, ast.Module]]:
    for path in sorted(SRC.rglob("*.py")):
        if path != REGISTRY:
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
            for node in ast.walk(tree):
                for child in ast.iter_child_nodes(node):
                    child.parent = node  # type: ignore[attr-defined]
            yield path.relative_to(SRC.parents[1]).as_posix(), tree


def _helper_key(call: ast.Call) -> HelperKey | None:
    if isinstance(call.func, ast.Name):
        return False, call.func.id
    if isinstance(call.func, ast.Attribute):
        return True, call.func.attr
    return None


def _is_code_name(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and node.id == "code"


def _passes_code_on(func: Function, helpers: dict[HelperKey, int]) -> bool:
    for node in ast.walk(func):
        if isinstance(node, ast.Call):
            if any(k.arg == "code" and _is_code_name(k.value) for k in node.keywords):
                return True
            index = helpers.get(_helper_key(node))  # type: ignore[arg-type]
            if index is not None and len(node.args) > index and _is_code_name(node.args[index]):
                return True
        if isinstance(node, ast.Dict) and any(
                isinstance(k, ast.Constant) and k.value == "code" and _is_code_name(v)
                for k, v in zip(node.keys, node.values, strict=True)):
            return True
    return False


def _find_helpers(trees: list[ast.Module]) -> dict[HelperKey, int]:
    functions = [n for t in trees for n in ast.walk(t)
                 if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    helpers: dict[HelperKey, int] = {}
    changed = True
    while changed:  # a helper may pass its code to another helper
        changed = False
        for func in functions:
            names = [a.arg for a in func.args.posonlyargs + func.args.args]
            method = isinstance(func.parent, ast.ClassDef)  # type: ignore[attr-defined]
            if method and names and names[0] in ("self", "cls"):
                names = names[1:]
            key = (method, func.name)
            if "code" in names and key not in helpers and _passes_code_on(func, helpers):
                helpers[key] = names.index("code")
                changed = True
    return helpers


def _in_table(node: ast.AST) -> bool:
    while (node := getattr(node, "parent", None)) is not None:
        if _table_name(node) is not None:
            return True
    return False


def _table_name(node: ast.AST) -> str | None:
    targets = (node.targets if isinstance(node, ast.Assign)
               else [node.target] if isinstance(node, ast.AnnAssign) else [])
    names = [t.id for t in targets if isinstance(t, ast.Name) and t.id in TABLES]
    return names[0] if names else None


def _enclosing_function(node: ast.AST) -> Function | None:
    while (node := getattr(node, "parent", None)) is not None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            return node
    return None


class _Resolver:
    """The literal codes an expression at a code site can have, into a :class:`Scan`."""

    def __init__(self, scan: Scan, where: str, constants: dict[str, str]) -> None:
        self.scan, self.where, self.constants = scan, where, constants

    def resolve(self, expr: ast.expr) -> None:
        if isinstance(expr, ast.Constant):
            if isinstance(expr.value, str):
                self.scan.raised[expr.value].add(self.where)
        elif isinstance(expr, ast.IfExp):
            self.resolve(expr.body)
            self.resolve(expr.orelse)
        elif isinstance(expr, ast.BoolOp | ast.Dict):
            for value in expr.values:
                if value is not None:  # a dict's ** entry has no value
                    self.resolve(value)
        elif (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute)
              and expr.func.attr == "get" and isinstance(expr.func.value, ast.Dict)):
            self.resolve(expr.func.value)
            for default in expr.args[1:]:
                self.resolve(default)
        elif isinstance(expr, ast.JoinedStr):
            self.scan.built["".join(
                re.escape(part.value) if isinstance(part, ast.Constant) else "[A-Z0-9_]+"
                for part in expr.values)] = self.where
        elif isinstance(expr, ast.Name):
            self._resolve_name(expr)
        else:
            self.scan.forwarded.append(f"{self.where} ({ast.unparse(expr)})")

    def _resolve_name(self, name: ast.Name) -> None:
        func = _enclosing_function(name)
        if func is not None:
            assigned = [n.value for n in ast.walk(func) if isinstance(n, ast.Assign)
                        and any(isinstance(t, ast.Name) and t.id == name.id for t in n.targets)]
            for value in assigned:
                self.resolve(value)
            if assigned:
                return
        if name.id in self.constants:
            self.scan.raised[self.constants[name.id]].add(self.where)
        else:  # a parameter, a loop or unpacking target: the code is made elsewhere
            self.scan.forwarded.append(f"{self.where} ({name.id})")


def _code_expressions(node: ast.AST, helpers: dict[HelperKey, int]) -> list[ast.expr]:
    if isinstance(node, ast.Call):
        found = [k.value for k in node.keywords if k.arg == "code"]
        index = helpers.get(_helper_key(node))  # type: ignore[arg-type]
        if index is not None and len(node.args) > index:
            found.append(node.args[index])
        return found
    if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "default_code" for t in node.targets):
        return [node.value]
    return []


def scan_sources() -> Scan:
    """Every code the sources raise, list in a table, build, or pass on."""
    sources = list(_sources())
    scan = Scan(helpers=_find_helpers([tree for _, tree in sources]))
    for path, tree in sources:
        constants = {t.id: n.value.value for n in tree.body if isinstance(n, ast.Assign)
                     and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)
                     for t in n.targets if isinstance(t, ast.Name)}
        for node in ast.walk(tree):
            where = f"{path}:{getattr(node, 'lineno', '?')}"
            resolver = _Resolver(scan, where, constants)
            for expr in _code_expressions(node, scan.helpers):
                resolver.resolve(expr)
            if isinstance(node, ast.Dict):  # a JSON error body: {"error": ..., "code": ...}
                _json_codes(node, scan, where, constants)
            elif _table_name(node) is not None:
                value = node.value  # type: ignore[attr-defined]
                items = value.keys if isinstance(value, ast.Dict) else getattr(value, "elts", [])
                for item in items:
                    if isinstance(item, ast.Constant) and isinstance(item.value, str):
                        scan.tabled[item.value].add(where)
            elif (isinstance(node, ast.Constant) and isinstance(node.value, str)
                  and CODE.match(node.value) and not _in_table(node)):
                scan.mentioned.add(node.value)
    return scan


def _json_codes(node: ast.Dict, scan: Scan, where: str, constants: dict[str, str]) -> None:
    """``"code": X`` entries whose values look like codes (a ``{"code": CODE_FILE}`` is not)."""
    for key, value in zip(node.keys, node.values, strict=True):
        if isinstance(key, ast.Constant) and key.value == "code":
            loose = Scan()
            _Resolver(loose, where, constants).resolve(value)
            for code, places in loose.raised.items():
                if CODE.match(code):
                    scan.raised[code] |= places


SCAN = scan_sources()
ADD_HINT = ('add it to ERROR_CODES in src/sparkstorm/error_codes.py, in alphabetical order, as '
            '"CODE": "<what happened>; <how to fix it>", then run make docs')


def _listing(codes: dict[str, set[str]]) -> str:
    return "\n".join(f"  {code}  (at {', '.join(sorted(places)[:3])})"
                     for code, places in sorted(codes.items()))


def test_the_scan_finds_the_known_forms() -> None:
    assert {"NO_SPOUT", "FLUX_UNKNOWN_KEY", "STATE_NO_NODE", "PROJECT_TOPOLOGY_AMBIGUOUS",
            "FORBIDDEN", "MULTILANG_SYNC_TIMEOUT", "REQUEST_TOO_LARGE"} <= set(SCAN.raised)
    assert "TOPOLOGY_BEING_[A-Z0-9_]+" in SCAN.built
    assert {"MULTILANG_HANDSHAKE_FAILED", "UPLOAD_TOO_LARGE"} <= set(SCAN.tabled)


def test_every_raised_code_is_an_upper_snake_code() -> None:
    bad = {c: p for c, p in SCAN.raised.items() if not CODE.match(c)}
    assert not bad, f"error codes must be UPPER_SNAKE:\n{_listing(bad)}"


def test_every_raised_code_is_registered() -> None:
    missing = {c: p for c, p in SCAN.raised.items() if c not in ERROR_CODES}
    assert not missing, f"codes raised but not registered; {ADD_HINT}:\n{_listing(missing)}"


def test_every_code_of_a_subpackage_table_is_registered() -> None:
    missing = {c: p for c, p in SCAN.tabled.items() if c not in ERROR_CODES}
    assert not missing, (
        f"codes in a CODES/ERROR_CODES table but not registered; {ADD_HINT}:\n"
        f"{_listing(missing)}")


def test_every_built_code_can_be_a_registered_one() -> None:
    unmatched = {regex: where for regex, where in SCAN.built.items()
                 if not any(re.fullmatch(regex, code) for code in ERROR_CODES)}
    assert not unmatched, (
        f"codes built by f-strings match no registered code ({unmatched}); register what "
        f"they build, or better write each code whole (code='A' if ... else 'B')")


def test_every_registered_code_is_raised_somewhere() -> None:
    produced = set(SCAN.raised) | SCAN.mentioned
    dead = sorted(code for code in ERROR_CODES if code not in produced
                  and not any(re.fullmatch(regex, code) for regex in SCAN.built))
    assert not dead, (
        f"registered codes that nothing under src/sparkstorm raises: {dead}; remove them from "
        "ERROR_CODES in src/sparkstorm/error_codes.py (and run make docs), or raise them")


def test_the_registry_is_sorted_unique_and_documented() -> None:
    (table,) = [n.value for n in ast.parse(REGISTRY.read_text(encoding="utf-8")).body
                if isinstance(n, ast.AnnAssign) and _table_name(n) == "ERROR_CODES"]
    assert isinstance(table, ast.Dict)
    keys = [k.value for k in table.keys if isinstance(k, ast.Constant)]
    twice = sorted({k for k in keys if keys.count(k) > 1})
    assert not twice, f"registered more than once in src/sparkstorm/error_codes.py: {twice}"
    assert keys == sorted(keys), (
        "ERROR_CODES in src/sparkstorm/error_codes.py must stay in alphabetical order; "
        f"first out of place: {next(a for a, b in zip(keys, sorted(keys), strict=True) if a != b)}")
    empty = [code for code, text in ERROR_CODES.items() if not text.strip()]
    assert not empty, f"registered codes without a meaning: {empty}"


def _script(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_docs_errors_md_is_current() -> None:
    expected = _script("error_reference").render()
    path = ROOT / "docs" / "errors.md"
    assert path.read_text(encoding="utf-8") == expected, (
        "docs/errors.md is not what src/sparkstorm/error_codes.py generates; run make docs "
        "and commit docs/errors.md")
    for code in ERROR_CODES:
        assert f"`{code}`" in expected
