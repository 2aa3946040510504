"""Storm's multi-language protocol: shell spouts and bolts (host) and the child runtime.

- :class:`ShellSpout`, :class:`ShellBolt`: components run as subprocesses (``shell.py``).
- ``python -m sparkstorm.multilang module:Class``: our Python components as subprocesses
  (``runtime.py``), so they run unchanged under Apache Storm too.
"""

from __future__ import annotations

import sys
from typing import Any

from sparkstorm.multilang.errors import MultilangError
from sparkstorm.multilang.shell import ShellBolt, ShellSpout
from sparkstorm.topology.spec import class_path


def python_command(component: type | str, *, serializer: str = "json",
                   python: str | None = None) -> list[str]:
    """The command that runs one of our Python components as a multilang subprocess.

    Example:
        >>> python_command("pkg.mod:Split", python="python3")
        ['python3', '-m', 'sparkstorm.multilang', 'pkg.mod:Split', '--serializer', 'json']
    """
    path: Any = component if isinstance(component, str) else class_path(component)
    return [python or sys.executable, "-m", "sparkstorm.multilang", path,
            "--serializer", serializer]


__all__ = ["MultilangError", "ShellBolt", "ShellSpout", "python_command"]
