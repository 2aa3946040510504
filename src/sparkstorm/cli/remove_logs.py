"""``sparkstorm remove_logs``: streamparse's ``sparse remove_logs``, for the logs a topology keeps.

``remove_logs [-n NAME] [-e ENV] [--pattern REGEX] [-u USER]`` removes the executor logs of
a live topology that outlive its workers: the ``executor-<n>.log`` files in its
``topology.executor.log.dir`` (a streamparse project's ``log.path``). Nimbus's REST API
tells where (``/api/v1/topology/{id}/conf``) and on which hosts (its workers, from
``/api/v1/topology/{id}``). ``--pattern`` picks other file names in that folder (a regex
searched in each name; default :data:`DEFAULT_PATTERN`).

Limits, as the daemons are today: supervisors delete files on no request, and sparkstorm
does not ssh (streamparse does), so only the hosts that are this machine are cleaned. For
any other host it exits with ``REMOVE_LOGS_REMOTE_HOSTS`` and the command to run there
(with ``sudo -u USER`` for ``--user``). A topology without ``topology.executor.log.dir``
keeps no logs: each worker's logs are in its folder, which its supervisor removes when the
worker stops. The executors of a running topology keep writing to the files they opened,
so what they write until they restart is lost, as with streamparse's ``rm``. Executors of
topologies sharing that folder write the same ``executor-<n>.log`` names: their logs go too.
"""

from __future__ import annotations

import argparse
import re
import shlex
import socket
import sys
from pathlib import Path
from typing import Any
from urllib.parse import quote

from sparkstorm.cli.cluster_args import (
    add_cluster_arguments,
    nimbus_client,
    nimbus_target,
    topology_name,
)
from sparkstorm.cli.errors import CliError

LOG_DIR_KEY = "topology.executor.log.dir"
DEFAULT_PATTERN = r"^executor-\d+\.log$"


def register(commands: Any) -> None:
    """Add the ``remove_logs`` subcommand (``remove-logs`` too)."""
    parser = commands.add_parser("remove_logs", aliases=["remove-logs"],
                                 help="remove the executor logs a topology keeps in "
                                      "topology.executor.log.dir (streamparse's)")
    parser.add_argument("-n", "--name", help="topology name (default: the streamparse "
                                             "project's only topology)")
    parser.add_argument("--pattern", default=DEFAULT_PATTERN,
                        help=f"regex of the file names to remove (default {DEFAULT_PATTERN})")
    parser.add_argument("-u", "--user", help="the user to remove them as on other hosts "
                                             "(sudo -u USER in the command printed)")
    add_cluster_arguments(parser)
    parser.set_defaults(handler=remove_logs_command)


def is_this_machine(host: str) -> bool:
    """Whether ``host`` names this machine (its name, a loopback or one of its addresses)."""
    names = {socket.gethostname(), socket.getfqdn(), "localhost"}
    if host in names:
        return True
    try:
        addresses = {str(info[4][0]) for info in socket.getaddrinfo(host, None)}
        mine = {str(info[4][0]) for info in socket.getaddrinfo(socket.gethostname(), None)}
    except OSError:
        return False
    return any(a.startswith("127.") or a == "::1" or a in mine for a in addresses)


def matching_files(folder: Path, pattern: re.Pattern[str]) -> list[Path]:
    """The files of ``folder`` (not below) whose name ``pattern`` matches."""
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.is_file() and pattern.search(p.name))


def remote_command(folder: str, pattern: str, user: str | None) -> str:
    """The shell command that removes the same files on another host."""
    sudo = f"sudo -u {shlex.quote(user)} " if user else ""
    return (f"cd {shlex.quote(folder)} && ls | grep -E {shlex.quote(pattern)} | "
            f"{sudo}xargs -r rm -f")


def _remove(files: list[Path]) -> None:
    for path in files:
        try:
            path.unlink()
        except FileNotFoundError:
            continue
        except OSError as exc:
            msg = (f"cannot remove {path}: {exc}; run remove_logs as the user the workers "
                   "run as, or remove the file by hand")
            raise CliError(msg, code="REMOVE_LOGS_FAILED") from exc
        print(f"removed {path}")


def remove_logs_command(args: argparse.Namespace) -> int:
    """Remove the kept logs on this machine; say what to run on the other hosts."""
    try:
        pattern = re.compile(args.pattern)
    except re.error as exc:
        msg = f"--pattern {args.pattern!r} is not a regular expression: {exc}"
        raise CliError(msg, code="LOG_PATTERN_INVALID") from exc
    target = nimbus_target(args)
    name = topology_name(args, target.project, "remove_logs")
    with nimbus_client(args, target) as client:
        topology_id = client.topology_id(name)
        conf = client.call("GET", f"/api/v1/topology/{quote(topology_id)}/conf")
        page = client.call("GET", f"/api/v1/topology/{quote(topology_id)}")
    folder = conf.get(LOG_DIR_KEY)
    if not folder:
        print(f"topology {name} keeps no logs to remove: {LOG_DIR_KEY} is unset, so its "
              "workers' logs are in their folders, which their supervisors remove when the "
              "workers stop")
        return 0
    if not Path(str(folder)).is_absolute():
        msg = (f"topology {name}'s {LOG_DIR_KEY} {folder!r} is relative to each worker's "
               "folder, which only its supervisor knows; remove the files there, or give "
               f"{LOG_DIR_KEY} an absolute path")
        raise CliError(msg, code="REMOVE_LOGS_RELATIVE_DIR")
    hosts = sorted({str(w["host"]) for w in page.get("workers", [])})
    remote = [h for h in hosts if not is_this_machine(h)]
    if not hosts:
        print(f"topology {name} has no workers now: nothing removed; try again when it "
              "runs (sparkstorm worker_uptime)")
    if len(remote) < len(hosts):
        files = matching_files(Path(str(folder)), pattern)
        _remove(files)
        print(f"removed {len(files)} file(s) matching {args.pattern!r} in {folder} on this "
              "machine", file=sys.stderr)
    if remote:
        command = remote_command(str(folder), args.pattern, args.user)
        msg = (f"topology {name}'s logs on {remote} were not removed: supervisors delete no "
               "files on request and sparkstorm does not ssh; on each of those hosts run: "
               f"{command}")
        raise CliError(msg, code="REMOVE_LOGS_REMOTE_HOSTS")
    return 0
