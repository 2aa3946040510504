"""Reading the JSON-lines files that test components append to while a test polls them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def whole_records(path: Path) -> list[dict[str, Any]]:
    """The records of ``path`` whose line is complete.

    A writer in another process may be in the middle of its last line: one ``write`` of a
    line that crosses a page boundary becomes visible to a reader a page at a time.
    """
    return [json.loads(line) for line in path.read_text().split("\n")[:-1] if line.strip()]
