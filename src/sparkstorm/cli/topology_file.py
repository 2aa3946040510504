"""A Python topology file, imported: its Topology class, or an error that says what is wrong.

Example:
    >>> describe_unsupported(Path("topology.jar"))  # doctest: +ELLIPSIS
    "topology.jar is not a topology file sparkstorm can run: give a Python file ..."
"""

from __future__ import annotations

import importlib.util
import sys
import traceback
from pathlib import Path
from types import ModuleType

from sparkstorm.errors import SparkstormError, TopologyError
from sparkstorm.topology.topology import Topology


def describe_unsupported(path: Path) -> str:
    """Why ``path`` cannot be run, and what can."""
    return (f"{path} is not a topology file sparkstorm can run: give a Python file (.py) "
            "defining a Topology subclass, a Storm Flux file (.yaml or .yml), or run from a "
            "streamparse project's root (config.json); Java jars cannot run here")


def load_topology_file(path: str, class_name: str | None) -> type[Topology]:
    """Import ``path`` as a module named after the file and return its Topology class.

    The file's folder goes first on ``sys.path`` so that executor processes, which get our
    ``sys.path``, import its components by the same module name.

    Raises:
        TopologyError: ``TOPOLOGY_FILE_NOT_FOUND``, ``NO_TOPOLOGY_IN_FILE`` or
            ``AMBIGUOUS_TOPOLOGY``.
    """
    file = Path(path).resolve()
    if not file.is_file():
        msg = f"topology file {path!r} does not exist; give the path of a .py file"
        raise TopologyError(msg, code="TOPOLOGY_FILE_NOT_FOUND")
    module = _import_file(file)
    found = {n: c for n, c in vars(module).items()
             if isinstance(c, type) and issubclass(c, Topology) and c is not Topology
             and c.__module__ == module.__name__}
    if class_name is not None:
        if class_name not in found:
            msg = (f"{path}: no Topology subclass named {class_name!r}; "
                   f"found {sorted(found) or 'none'}")
            raise TopologyError(msg, code="NO_TOPOLOGY_IN_FILE")
        return found[class_name]
    if not found:
        msg = f"{path}: defines no Topology subclass; declare one (class T(Topology): ...)"
        raise TopologyError(msg, code="NO_TOPOLOGY_IN_FILE")
    if len(found) > 1:
        msg = f"{path} defines several topologies {sorted(found)}; pick one with --topology"
        raise TopologyError(msg, code="AMBIGUOUS_TOPOLOGY")
    return next(iter(found.values()))


def _import_file(file: Path) -> ModuleType:
    """Import ``file``; a broken file is a ``TopologyError`` naming where, not a traceback.

    Raises:
        TopologyError: ``TOPOLOGY_FILE_SYNTAX_ERROR`` or ``TOPOLOGY_FILE_IMPORT_FAILED``.
    """
    sys.path.insert(0, str(file.parent))
    spec = importlib.util.spec_from_file_location(file.stem, file)
    if spec is None or spec.loader is None:  # not a Python source file
        raise TopologyError(describe_unsupported(file), code="UNSUPPORTED_TOPOLOGY_FILE")
    module = importlib.util.module_from_spec(spec)
    sys.modules[file.stem] = module
    try:
        spec.loader.exec_module(module)
    except SparkstormError:
        raise  # already says what and where (e.g. a BasicBolt that turns acking off)
    except SyntaxError as exc:
        msg = (f"{exc.filename or file}:{exc.lineno}: {exc.msg}; "
               "fix the syntax error and run again")
        raise TopologyError(msg, code="TOPOLOGY_FILE_SYNTAX_ERROR") from exc
    except Exception as exc:  # any error while importing the user's file
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        msg = (f"{file}: importing it raised {type(exc).__name__}: {exc} "
               f"(at {frame.filename}:{frame.lineno}); fix the file or install what it "
               "imports in this Python environment")
        raise TopologyError(msg, code="TOPOLOGY_FILE_IMPORT_FAILED") from exc
    return module


__all__ = ["describe_unsupported", "load_topology_file"]
