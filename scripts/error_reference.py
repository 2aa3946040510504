"""Write docs/errors.md, the list of error codes, from sparkstorm.error_codes.

``make docs`` runs it; ``tests/unit/test_error_codes.py`` fails when the checked-in file is
stale, when a code raised under ``src/sparkstorm`` is not registered, or when a registered
code is raised nowhere.

Usage:
    python scripts/error_reference.py            # rewrite docs/errors.md
    python scripts/error_reference.py --check    # exit 1 if it is not current
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # generated_doc, run or loaded

from generated_doc import write_or_check

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
    """Write the page, or with ``--check`` say whether the file is current."""
    return write_or_check(__doc__.splitlines()[0], render, OUTPUT, ROOT,
                          f"{len(ERROR_CODES)} codes", argv)


if __name__ == "__main__":
    sys.exit(main())
