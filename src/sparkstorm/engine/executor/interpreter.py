"""The interpreter executor processes run under: ``topology.executor.python``.

Unset, executors run under the driver's (or worker's) own interpreter, ``sys.executable``,
with the driver's whole ``sys.path``. Set, they run under the named one (a path, or a name
looked up on the ``PATH``), which brings its own standard library and installed packages:
the driver then passes on only the folders of its ``sys.path`` that belong to no
installation (source folders, the topology's code), since its own standard library and
site-packages are for another Python and would shadow the executor's.

The pool checks the interpreter once per start, before any executor is spawned, so that a
wrong value is a clear error instead of executors restarting forever.
"""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
import sysconfig
from collections.abc import Mapping
from typing import Any

from sparkstorm.config import conf_optional_str
from sparkstorm.errors import EngineError

CONF_KEY = "topology.executor.python"
CHECK_TIMEOUT_SECS = 60.0
"""How long the import check may take (a cold PyPy on a loaded machine needs seconds)."""
EXECUTOR_MODULE = "sparkstorm.engine.executor.main"


def executor_python(conf: Mapping[str, Any]) -> str:
    """The interpreter executors run under, as an absolute path.

    Args:
        conf: the topology's conf.

    Raises:
        EngineError: ``EXECUTOR_PYTHON_NOT_FOUND`` when the configured interpreter is not an
            executable file nor a command on the ``PATH``.
    """
    configured = conf_optional_str(conf, CONF_KEY)
    if not configured:
        return sys.executable
    found = shutil.which(configured)
    if found is None:
        msg = (
            f"{CONF_KEY} is {configured!r}, which is not an executable file nor a command "
            f"on the PATH of this worker (host {os.uname().nodename!r}); install that "
            f"interpreter on every worker host, or unset {CONF_KEY} to run executors under "
            f"the driver's own Python ({sys.executable})"
        )
        raise EngineError(msg, code="EXECUTOR_PYTHON_NOT_FOUND")
    return os.path.abspath(found)


def is_own_python(python: str) -> bool:
    """Whether ``python`` is the interpreter this process runs under."""
    return os.path.abspath(python) == os.path.abspath(sys.executable)


def _installation_folders() -> list[str]:
    """This interpreter's standard library and site-packages folders."""
    paths = sysconfig.get_paths()
    folders = [paths[name] for name in ("stdlib", "platstdlib", "purelib", "platlib")]
    folders += site.getsitepackages()
    if site.ENABLE_USER_SITE:
        folders.append(site.getusersitepackages())
    return [os.path.abspath(f) for f in folders if f]


def executor_sys_path(python: str) -> list[str]:
    """The ``sys.path`` folders executors under ``python`` get from this process.

    All of ours for our own interpreter; for another one, those that belong to no
    installation of ours (a zip of our standard library, ``python311.zip``, counts as ours).
    """
    ours = [p for p in sys.path if p]
    if is_own_python(python):
        return ours
    installation = _installation_folders()
    prefixes = {os.path.abspath(p) for p in (sys.prefix, sys.base_prefix)}

    def belongs(path: str) -> bool:
        full = os.path.abspath(path)
        if any(full == f or full.startswith(f + os.sep) for f in installation):
            return True
        return full.endswith(".zip") and any(full.startswith(p + os.sep) for p in prefixes)
    return [p for p in ours if not belongs(p)]


def check_executor_python(python: str, env: Mapping[str, str]) -> None:
    """Make sure ``python`` can import the executor's entry point with ``env``.

    Called once by the pool before it starts executors under another interpreter; takes
    about a second (the executor's imports).

    Raises:
        EngineError: ``EXECUTOR_PYTHON_UNUSABLE`` when the import fails or hangs, with the
            interpreter's own error output.
    """
    command = [python, "-c", f"import {EXECUTOR_MODULE}"]
    try:
        done = subprocess.run(command, env=dict(env), stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=CHECK_TIMEOUT_SECS, check=False)
    except subprocess.TimeoutExpired:
        problem = f"did not finish importing {EXECUTOR_MODULE} in {CHECK_TIMEOUT_SECS:.0f} s"
    except OSError as exc:
        problem = f"could not be started ({exc})"
    else:
        if done.returncode == 0:
            return
        tail = "\n".join(done.stderr.decode("utf-8", "replace").splitlines()[-12:])
        problem = f"could not import {EXECUTOR_MODULE} (exit code {done.returncode}):\n{tail}"
    msg = (
        f"{CONF_KEY} is {python!r}, which {problem}\n"
        f"That interpreter needs sparkstorm's executor dependencies (msgpack, pyyaml) and "
        f"sparkstorm importable (on its PYTHONPATH: {env.get('PYTHONPATH', '')!r}) under "
        f"Python >= 3.11; install them in its environment, or unset {CONF_KEY} to use the "
        f"driver's Python"
    )
    raise EngineError(msg, code="EXECUTOR_PYTHON_UNUSABLE")
