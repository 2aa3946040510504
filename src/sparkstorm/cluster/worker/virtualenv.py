"""The topology's virtualenv on a worker's host: built once per requirements, then reused.

streamparse's ``sparse submit`` builds ``<virtualenv_root>/<name>`` on every worker host over
ssh from the project's ``virtualenvs/<name>.txt`` and runs the components with its python.
Here ``sparkstorm submit`` puts that file's text in the topology's conf
(``topology.virtualenv.requirements``, see :mod:`sparkstorm.project.virtualenvs`), and a
worker whose conf has it builds the virtualenv on its own host before Spark starts, then
runs itself again under the virtualenv's python (:func:`exec_worker`: the same pid, which
its supervisor watches); its executors inherit that interpreter. The worker heartbeats all
the while, so a long ``pip install`` is a starting worker to Nimbus, not a dead one.

Under ``topology.virtualenv.root`` (default: the supervisor's ``virtualenvs/`` folder)::

    <name>-<digest>/                         the virtualenv
    <name>-<digest>/.sparkstorm-installed    written last: the build is complete
    <name>-<digest>.log                      the last build's output (pip's)
    <name>-<digest>.lock                     held by the worker that builds it
    <name>-<digest>.failed                   the last failed build's error

The digest covers the requirements, ``topology.virtualenv.flags`` and this host's Python, so
a changed requirements file gets a new virtualenv and an unchanged one serves every later
start at once. The workers of one host that start together wait for the one that builds,
then reuse its virtualenv (or report its failure without building again).

The virtualenv is ``python -m venv --without-pip`` plus a ``.pth`` file that adds this host's
own site-packages after its own: sparkstorm, pyspark and pip come from the host's
installation (pip says "Requirement already satisfied" for what the host has), and what the
requirements install wins. Relative paths in the requirements are taken from the submitted
code's root (a streamparse project's root).

A failed build raises ``VIRTUALENV_INSTALL_FAILED`` with pip's last lines; the worker reports
it as its start failure (the topology's ``workerStatus`` is FAILING) and exits, and its
supervisor starts it again, and so tries the build again, only after its restart back-off
(:mod:`sparkstorm.cluster.supervisor.backoff`).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import re
import shlex
import shutil
import site
import socket
import subprocess
import sys
import sysconfig
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from sparkstorm.cluster.worker.errors import VirtualenvError
from sparkstorm.config import conf_bool, conf_float, conf_optional_str

logger = logging.getLogger(__name__)

REQUIREMENTS_KEY = "topology.virtualenv.requirements"
MARKER = ".sparkstorm-installed"
"""Written into the virtualenv once it is complete: its presence means "reuse it"."""
ACTIVE_ENV = "SPARKSTORM_VIRTUALENV"
"""The virtualenv's folder, in the environment of a worker that runs in it."""
BRIDGE = "_sparkstorm_host.pth"
TAIL_LINES = 15
LOCK_POLL_SECS = 0.5
TIMED_OUT = -9
"""The exit code :func:`run_logged` gives a command that ran out of time."""

Run = Callable[[list[str], Path | None, Path, float], int]
"""Runs a command in a folder (None: here), appending its output to a log file, within a
timeout in seconds; returns its exit code (:data:`TIMED_OUT` when it timed out)."""


@dataclass(frozen=True)
class VirtualenvSpec:
    """The virtualenv a topology's conf asks for.

    Attributes:
        name: its folder's name (``topology.virtualenv.name``, else the topology's name).
        requirements: pip requirements, a requirements file's text.
        root: the folder of the virtualenvs on this host.
        flags: extra arguments of ``python -m venv``.
        install: build it (False: run in ``<root>/<name>`` as it is).
        timeout_secs: how long a build may take.
    """

    name: str
    requirements: str
    root: Path
    flags: tuple[str, ...] = ()
    install: bool = True
    timeout_secs: float = 900.0

    @classmethod
    def from_conf(cls, conf: Mapping[str, object], topology_name: str,
                  default_root: Path) -> VirtualenvSpec | None:
        """The virtualenv of a topology's conf, or None when it runs in the host's Python.

        Args:
            conf: the topology's conf.
            topology_name: names the virtualenv unless ``topology.virtualenv.name`` does.
            default_root: where virtualenvs go unless ``topology.virtualenv.root`` says.

        Raises:
            ConfigError: a ``topology.virtualenv.*`` key of the wrong type.
            VirtualenvError: ``VIRTUALENV_INSTALL_FAILED`` for flags shlex cannot split.
        """
        requirements = conf_optional_str(conf, REQUIREMENTS_KEY)
        install = conf_bool(conf, "topology.virtualenv.install")
        if requirements is None and install:
            return None
        name = conf_optional_str(conf, "topology.virtualenv.name") or topology_name
        root = conf_optional_str(conf, "topology.virtualenv.root")
        flags = conf_optional_str(conf, "topology.virtualenv.flags") or ""
        try:
            split = tuple(shlex.split(flags))
        except ValueError as exc:
            msg = (f"topology.virtualenv.flags is {flags!r}, which cannot be split into "
                   f"arguments ({exc}); quote it as a shell would")
            raise VirtualenvError(msg, code="VIRTUALENV_INSTALL_FAILED") from exc
        # a relative root is taken from the host's default one, not the worker's folder
        where = default_root / Path(root).expanduser() if root else default_root
        return cls(_folder_name(name), requirements or "", where, split, install,
                   conf_float(conf, "topology.virtualenv.install.timeout.secs"))

    def digest(self) -> str:
        """12 hex digits naming this build: requirements, flags and this host's Python."""
        identity = {"requirements": self.requirements, "flags": list(self.flags),
                    "python": os.path.realpath(sys.executable), "version": sys.version,
                    "host_site": host_site_dirs()}
        text = json.dumps(identity, sort_keys=True)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]

    @property
    def folder(self) -> Path:
        """The virtualenv's folder: ``<root>/<name>-<digest>`` (``<root>/<name>`` unbuilt)."""
        return self.root / (f"{self.name}-{self.digest()}" if self.install else self.name)


def _folder_name(name: str) -> str:
    """``name`` made a safe folder name (no separators, no leading dots)."""
    return re.sub(r"[^\w.-]", "_", name).lstrip(".") or "topology"


def host_site_dirs() -> list[str]:
    """This Python's site-packages folders (a virtualenv's own ones when it runs in one)."""
    found = list(site.getsitepackages())
    if site.ENABLE_USER_SITE:
        found.append(site.getusersitepackages())
    return [d for d in dict.fromkeys(found) if os.path.isdir(d)]


def running_in_virtualenv() -> bool:
    """Whether this process is a worker that :func:`exec_worker` started in its virtualenv."""
    named = os.environ.get(ACTIVE_ENV)
    return bool(named) and os.path.realpath(sys.prefix) == os.path.realpath(str(named))


def worker_virtualenv(context: Mapping[str, object], default_root: Path,
                      code_dir: Path) -> Path | None:
    """The python a starting worker must run under, its virtualenv built first if need be.

    None when the topology's conf names no virtualenv, or when this process already runs
    in it (:func:`exec_worker` started it there).

    Args:
        context: the worker's init context from Nimbus (``conf``, ``topology_name``).
        default_root: this host's folder of virtualenvs (the supervisor's).
        code_dir: the submitted code.

    Raises:
        VirtualenvError: see :func:`ensure_virtualenv`.
    """
    conf = context.get("conf")
    spec = VirtualenvSpec.from_conf(conf if isinstance(conf, Mapping) else {},
                                    str(context.get("topology_name")), default_root)
    if spec is None or running_in_virtualenv():
        return None
    return ensure_virtualenv(spec, code_dir)


def ensure_virtualenv(spec: VirtualenvSpec, code_dir: Path | None = None,
                      run: Run | None = None) -> Path:
    """The python of the topology's virtualenv on this host, built first if need be.

    Called once by each starting worker whose conf names requirements; returns at once
    when the virtualenv is complete, waits while another worker of this host builds it.

    Args:
        spec: the virtualenv.
        code_dir: the submitted code; pip runs there (relative requirement paths).
        run: runs the build's commands (tests pass a fake); :func:`run_logged` by default.

    Raises:
        VirtualenvError: ``VIRTUALENV_INSTALL_FAILED`` when the build fails (or failed in
            the worker this one waited for); ``VIRTUALENV_NOT_FOUND`` or
            ``VIRTUALENV_UNUSABLE`` for a virtualenv not to be built that is missing or
            cannot run sparkstorm.
    """
    run = run or run_logged
    folder = spec.folder
    python = folder / "bin" / "python"
    if not spec.install:
        _check_given(spec, python, run)
        return python
    if (folder / MARKER).is_file():
        return python
    spec.root.mkdir(parents=True, exist_ok=True)
    asked = time.time()
    with _locked(folder.with_name(folder.name + ".lock"), spec.timeout_secs + 60):
        if (folder / MARKER).is_file():
            logger.info("virtualenv %s was built by another worker: reusing it", folder)
            return python
        failed = folder.with_name(folder.name + ".failed")
        if failed.is_file() and failed.stat().st_mtime >= asked:  # the build we waited for
            raise VirtualenvError(failed.read_text(encoding="utf-8"),
                                  code="VIRTUALENV_INSTALL_FAILED")
        try:
            _build(spec, folder, code_dir, run)
        except VirtualenvError as exc:
            failed.write_text(str(exc.args[0]), encoding="utf-8")
            raise
        failed.unlink(missing_ok=True)
    return python


def _build(spec: VirtualenvSpec, folder: Path, code_dir: Path | None, run: Run) -> None:
    """Make the virtualenv anew in ``folder``; write :data:`MARKER` last."""
    logger.info("building virtualenv %s", folder)
    shutil.rmtree(folder, ignore_errors=True)  # what an interrupted build left
    log = folder.with_name(folder.name + ".log")
    log.write_text(f"building {folder}\n", encoding="utf-8")
    deadline = time.monotonic() + spec.timeout_secs
    python = str(folder / "bin" / "python")
    _step(spec, run, [sys.executable, "-m", "venv", "--without-pip", *spec.flags,
                      str(folder)], None, log, deadline, "python -m venv")
    _write_bridge(folder)
    if run([python, "-c", "import pip"], None, log, _left(deadline)) != 0:
        _step(spec, run, [python, "-m", "ensurepip", "--default-pip"], None, log, deadline,
              "python -m ensurepip")  # this host's Python has no pip of its own
    requirements = folder / "requirements.txt"
    requirements.write_text(spec.requirements, encoding="utf-8")
    _step(spec, run, [python, "-m", "pip", "install", "--disable-pip-version-check",
                      "--no-input", "-r", str(requirements)], code_dir, log, deadline,
          "pip install")
    _step(spec, run, [python, "-c", "import sparkstorm.cluster.worker"], None, log,
          deadline, "importing sparkstorm in it")
    (folder / MARKER).write_text(json.dumps({"digest": spec.digest(), "time": time.time()}),
                                 encoding="utf-8")
    logger.info("virtualenv %s is ready", folder)


def _write_bridge(folder: Path) -> None:
    """Add this host's site-packages after the virtualenv's own (a ``.pth`` file).

    ``site.addsitedir`` rather than bare paths: the host's own ``.pth`` files (an editable
    sparkstorm) are read too.
    """
    base = {"base": str(folder), "platbase": str(folder)}
    purelib = Path(sysconfig.get_path("purelib", "venv", vars=base))
    purelib.mkdir(parents=True, exist_ok=True)
    lines = ["# sparkstorm: this host's own packages, after the virtualenv's"]
    lines += [f"import site; site.addsitedir({folder_!r})" for folder_ in host_site_dirs()]
    (purelib / BRIDGE).write_text("\n".join(lines) + "\n", encoding="utf-8")


def _left(deadline: float) -> float:
    return max(deadline - time.monotonic(), 1.0)


def _step(spec: VirtualenvSpec, run: Run, command: list[str], cwd: Path | None, log: Path,
          deadline: float, what: str) -> None:
    """Run one step of the build.

    Raises:
        VirtualenvError: ``VIRTUALENV_INSTALL_FAILED`` when it fails or times out, with its
            last lines.
    """
    code = run(command, cwd, log, _left(deadline))
    if code == 0:
        return
    problem = (f"timed out after {spec.timeout_secs:g} s "
               "(topology.virtualenv.install.timeout.secs)" if code == TIMED_OUT
               else f"failed (exit code {code})")
    raise VirtualenvError(_failure_message(spec, what, problem, log),
                          code="VIRTUALENV_INSTALL_FAILED")


def _failure_message(spec: VirtualenvSpec, what: str, problem: str, log: Path) -> str:
    """What failed and where with its key line first, how to fix it, then the log's tail.

    The key line is the build's last ``ERROR`` line (pip's): the topology summary's
    ``workerStatusDetail`` shows the first line of one of our errors.
    """
    try:
        lines = [line for line in log.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        lines = []
    errors = [line for line in lines if line.lstrip().startswith("ERROR")]
    key = (errors or lines or ["(no output)"])[-1].strip()
    tail = "\n".join(f"    {line}" for line in lines[-TAIL_LINES:])
    return (f"the virtualenv {spec.name!r} could not be built on host "
            f"{socket.gethostname()!r}: {what} {problem}: {key}\n"
            "Fix the requirements (topology.virtualenv.requirements: a streamparse project's "
            "virtualenvs/<topology name>.txt) and submit again; this worker's supervisor "
            f"tries again after its restart back-off. The virtualenv is {spec.folder}; the "
            f"build's output is in {log}, whose last lines are:\n{tail}")


def _check_given(spec: VirtualenvSpec, python: Path, run: Run) -> None:
    """Check the virtualenv not to be built (``topology.virtualenv.install`` false).

    Raises:
        VirtualenvError: ``VIRTUALENV_NOT_FOUND`` when it is missing;
            ``VIRTUALENV_UNUSABLE`` when its python cannot import sparkstorm's worker.
    """
    host = socket.gethostname()
    if not python.exists():
        msg = (f"topology.virtualenv.install is false (streamparse's install_virtualenv), so "
               f"the worker runs in the existing virtualenv {spec.folder}, but {python} does "
               f"not exist on host {host!r}; make that virtualenv on every worker host, or "
               "set topology.virtualenv.install true to have it built from the requirements")
        raise VirtualenvError(msg, code="VIRTUALENV_NOT_FOUND")
    log = spec.root / f".{spec.name}.check.log"
    log.write_text("", encoding="utf-8")
    if run([str(python), "-c", "import sparkstorm.cluster.worker"], None, log, 120) != 0:
        tail = "\n".join(log.read_text(errors="replace").strip().splitlines()[-3:])
        msg = (f"the virtualenv {spec.folder} on host {host!r} cannot import sparkstorm's "
               "worker; install sparkstorm (and what the topology imports) in it, or set "
               f"topology.virtualenv.install true to have it built:\n{tail}")
        raise VirtualenvError(msg, code="VIRTUALENV_UNUSABLE")


@contextlib.contextmanager
def _locked(path: Path, wait_secs: float) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (released when the holder dies, too).

    Raises:
        VirtualenvError: ``VIRTUALENV_INSTALL_FAILED`` when another holder keeps it longer
            than ``wait_secs``.
    """
    with path.open("a") as handle:
        deadline = time.monotonic() + wait_secs
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    msg = (f"another worker has been building the virtualenv of {path.stem} "
                           f"for over {wait_secs:g} s (it holds {path}); see {path.stem}.log "
                           "next to it")
                    raise VirtualenvError(msg, code="VIRTUALENV_INSTALL_FAILED") from None
                time.sleep(LOCK_POLL_SECS)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def run_logged(command: list[str], cwd: Path | None, log: Path, timeout: float) -> int:
    """Run ``command`` with its output appended to ``log``; its exit code.

    :data:`TIMED_OUT` when it ran longer than ``timeout`` seconds (it is killed), 127 when
    it cannot be started.
    """
    with log.open("ab") as out:
        out.write(f"$ {shlex.join(command)}\n".encode())
        out.flush()
        try:
            return subprocess.run(command, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out,
                                  stderr=subprocess.STDOUT, timeout=timeout,
                                  check=False).returncode
        except subprocess.TimeoutExpired:
            out.write(f"timed out after {timeout:.0f} s\n".encode())
            return TIMED_OUT
        except OSError as exc:
            out.write(f"cannot run it: {exc}\n".encode())
            return 127


def exec_worker(python: Path, argv: list[str]) -> NoReturn:
    """Run this worker again under the virtualenv's ``python`` (same pid, same arguments).

    Called once the worker has closed its Nimbus client; the virtualenv's ``bin`` goes first
    on the ``PATH``, as an activated virtualenv's, for the commands of shell components.
    """
    folder = python.parent.parent
    env = {k: v for k, v in os.environ.items() if k != "PYTHONHOME"}
    env.update({ACTIVE_ENV: str(folder), "VIRTUAL_ENV": str(folder),
                "PATH": os.pathsep.join([str(folder / "bin"), env.get("PATH", os.defpath)])})
    logger.info("running the worker again in virtualenv %s", folder)
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    os.execve(python, [str(python), "-m", "sparkstorm.cluster.worker", *argv], env)
