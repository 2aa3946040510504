"""Write docs/configuration.md, the configuration reference, from sparkstorm.config.keys.

Every key is declared once in ``src/sparkstorm/config/keys.py`` (type, default, doc); this
script renders them as one table per group of that file (its ``# --- group ---`` comments),
with the docs too long for a table cell listed under it. ``make docs`` runs it; a unit test
(``tests/unit/config/test_reference_doc.py``) fails when the checked-in file is stale.

Usage:
    python scripts/config_reference.py            # rewrite docs/configuration.md
    python scripts/config_reference.py --check    # exit 1 if it is not current
"""

from __future__ import annotations

import ast
import io
import re
import sys
import textwrap
import tokenize
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # generated_doc, run or loaded

from generated_doc import write_or_check

from sparkstorm.config import keys as keys_module
from sparkstorm.config.keys import ENV_PREFIX, KEYS, PASS_THROUGH_PREFIXES, ConfigKey

ROOT = Path(__file__).resolve().parents[1]
OUTPUT = ROOT / "docs" / "configuration.md"
CELL_MAX = 160
"""A doc longer than this is listed under its group's table, not put in a cell."""
THOUSANDS_FROM = 10_000
"""Integer defaults from this size on are also shown with thousands separators."""
WIDTH = 100
"""Lines of prose (the long docs' list) are wrapped at this width."""
GROUP = re.compile(r"#\s*---\s*(.+?)\s*-*\s*$")

INTRO = f"""\
# Configuration reference

<!-- Generated from src/sparkstorm/config/keys.py by scripts/config_reference.py: do not
edit by hand; run `make docs` (a unit test fails when this file is stale). -->

Every key sparkstorm reads is declared once in `src/sparkstorm/config/keys.py` with its
type, default and meaning; this page lists them all. Storm's keys keep Storm's names and
Storm 2.x defaults; keys of sparkstorm's own say "sparkstorm:" first.

Values are layered, lowest first: these defaults < `sparkstorm.yaml` (or the file
`SPARKSTORM_CONF_FILE` names) < the environment (`{ENV_PREFIX}` and the key in capitals with
`_` for `.`: `SPARKSTORM_TOPOLOGY_WORKERS=2`) < the command line (`-c key=value`) < the
topology's conf < a component's config. Keys starting with
{" or ".join(f"`{p}`" for p in PASS_THROUGH_PREFIXES)} are not declared: `spark.*` keys go to
Spark (`spark.master` defaults to `local[*]`), `pystorm.*` keys to pystorm components. A
value of the wrong type or out of range is refused with `CONFIG_WRONG_TYPE` or
`CONFIG_OUT_OF_RANGE` (see [errors.md](errors.md)). The keys that decide windows, latency and
throughput are explained in [tuning.md](tuning.md).
"""


def groups() -> list[tuple[str, list[ConfigKey]]]:
    """The keys in declaration order, under the group comment each follows."""
    source = Path(keys_module.__file__).read_text(encoding="utf-8")
    headings = sorted(
        (token.start[0], match.group(1))
        for token in tokenize.generate_tokens(io.StringIO(source).readline)
        if token.type == tokenize.COMMENT and (match := GROUP.match(token.string)))
    lines = {node.args[0].value: node.lineno for node in ast.walk(ast.parse(source))
             if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
             and node.args[0].value in KEYS}
    found: dict[str, list[ConfigKey]] = {}
    for name, key in KEYS.items():
        line = lines.get(name, 0)
        title = next((t for start, t in reversed(headings) if start < line), "other keys")
        found.setdefault(title, []).append(key)
    return list(found.items())


def _default(key: ConfigKey) -> str:
    value = key.default
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, str):
        return f'`"{value}"`' if value else '`""`'
    if isinstance(value, int) and value >= THOUSANDS_FROM:
        return f"`{value}` ({value:,})"
    return f"`{value!r}`".replace("'", '"')


def _type(key: ConfigKey) -> str:
    kind = key.type_name
    if key.minimum is not None:
        kind += f", at least {key.minimum:g}"
    if key.choices is not None:
        kind += ": " + ", ".join(f"`{c}`" for c in key.choices)
    if key.secret:
        kind += " (secret: masked in messages)"
    return kind


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _anchor(title: str) -> str:
    return re.sub(r"[^a-z0-9 -]", "", title.lower()).replace(" ", "-")


def render() -> str:
    """The whole of docs/configuration.md."""
    found = groups()
    out = [INTRO, "Groups:", "", *(f"- [{title}](#{_anchor(title)})" for title, _ in found), ""]
    for title, keys in found:
        out += [f"## {title}", "", "| key | type | default | meaning |",
                "| --- | --- | --- | --- |"]
        long = [key for key in keys if len(key.doc) > CELL_MAX]
        for key in keys:
            meaning = "see below the table" if key in long else _cell(key.doc)
            out.append(f"| `{key.name}` | {_cell(_type(key))} | {_cell(_default(key))} "
                       f"| {meaning} |")
        out.append("")
        if long:
            out += [textwrap.fill(f"- `{key.name}`: {key.doc}", WIDTH, subsequent_indent="  ",
                                  break_on_hyphens=False) for key in long]
            out.append("")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    """Write the page, or with ``--check`` say whether the file is current."""
    return write_or_check(__doc__.splitlines()[0], render, OUTPUT, ROOT,
                          f"{len(KEYS)} keys", argv)


if __name__ == "__main__":
    sys.exit(main())
