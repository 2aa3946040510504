"""Write docs/errors.md, the list of error codes, from sparkstorm.error_codes.

``make docs`` runs it; ``tests/unit/test_error_codes.py`` fails when the checked-in file is
stale, when a code raised under ``src/sparkstorm`` is not registered, or when a registered
code is raised nowhere.

Usage:
    python scripts/error_reference.py            # rewrite docs/errors.md
    python scripts/error_reference.py --check    # exit 1 if it is not current
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from sparkstorm.error_codes import ERROR_CODES

ROOT = Path(__file__).resolve().parents[1]
OUTPUT = ROOT / "docs" / "errors.md"

INTRO = """\
# Error codes

<!-- Generated from src/sparkstorm/error_codes.py by scripts/error_reference.py: do not
edit by hand; run `make docs` (a unit test fails when this file is stale). -->

Every error sparkstorm raises carries a stable code, shown first in its message
(`[NO_SPOUT] topology 'word-count' has no spout; ...`), kept in the exception's `code`
attribute and in the `code` field of a REST error (`{"error": ..., "code": ...}`). Match on
the code, never on the text: the text names the component, key or value involved and says
how to fix it, and improves from release to release. `sparkstorm.errors.SparkstormError` is
the root class; `TopologyError` (and Flux's `FluxError`) and `ConfigError` are also
`ValueError`s, most others `RuntimeError`s, and the state store's by what went wrong
(`LookupError` for a missing node, `ConnectionError` for an unreachable store, ...).
"""


def render() -> str:
    """The whole of docs/errors.md."""
    rows = [f"| `{code}` | {text.replace('|', chr(92) + '|')} |"
            for code, text in ERROR_CODES.items()]
    return "\n".join([INTRO, f"{len(ERROR_CODES)} codes, in alphabetical order.", "",
                      "| code | meaning |", "| --- | --- |", *rows, ""])


def main(argv: list[str] | None = None) -> int:
    """Write the list, or with ``--check`` say whether the file is current."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is stale")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        current = OUTPUT.exists() and OUTPUT.read_text(encoding="utf-8") == text
        if not current:
            print(f"{OUTPUT.relative_to(ROOT)} is stale: run make docs", file=sys.stderr)
        return 0 if current else 1
    OUTPUT.parent.mkdir(exist_ok=True)
    OUTPUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUTPUT.relative_to(ROOT)} ({len(ERROR_CODES)} codes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
