"""A copy of ``src/`` rewritten so that Python 3.9 (Debian 12's PyPy) can run the executor.

A measurement aid for ``benchmarks/executor_interpreters.py`` and ``wordcount.py
--executor-python``, not a supported way to run sparkstorm: the project needs Python 3.11,
and these rewrites cover only what the word count's executors import. They keep the
code's meaning under 3.11 too, so a driver can run from the same copy:

- ``isinstance(x, A | B)`` -> ``isinstance(x, (A, B))`` (``type | type`` is 3.10);
- module-level ``X | None`` aliases and ``TypeAlias`` (3.10) -> strings and ``Any``;
- ``@dataclass(..., slots=True)`` (3.10) -> without slots;
- ``zip(..., strict=True)`` (3.10) -> plain ``zip``;
- ``gc.freeze()`` (absent from PyPy) -> skipped when missing.

Run: ``.venv/bin/python benchmarks/_py39_tree.py /tmp/src39`` writes the copy there.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[1] / "src"
_ISINSTANCE_UNION = re.compile(
    r"isinstance\(([^,()]+(?:\[[^\]]*\])?), ((?:[\w.]+ *\| *)+[\w.]+)\)")
_REWRITES: list[tuple[str, str]] = [
    ("from typing import TypeAlias", "from typing import Any as TypeAlias"),
    ("TypeSpec: TypeAlias = type | Types", 'TypeSpec: TypeAlias = "type | Types"'),
    ("HostFactory = Callable[[RestorePoint | None], ExecutorHost]",
     'HostFactory = Callable[["RestorePoint | None"], ExecutorHost]'),
    (", slots=True)", ")"),
    ("(slots=True)", ""),
    (", strict=True)", ")"),
    ("    gc.freeze()", "    getattr(gc, 'freeze', lambda: None)()"),
]


def _tuple_of_types(match: re.Match[str]) -> str:
    types = ", ".join(t.strip() for t in match.group(2).split("|"))
    return f"isinstance({match.group(1)}, ({types}))"


def make_py39_tree(target: Path) -> Path:
    """Write the rewritten copy of ``src/`` to ``target`` (replaced); return ``target``."""
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(SOURCE, target, ignore=shutil.ignore_patterns("__pycache__"))
    for path in target.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        new = _ISINSTANCE_UNION.sub(_tuple_of_types, text)
        for old, replacement in _REWRITES:
            new = new.replace(old, replacement)
        if new != text:
            path.write_text(new, encoding="utf-8")
    return target


if __name__ == "__main__":
    import sys

    print(make_py39_tree(Path(sys.argv[1])))
