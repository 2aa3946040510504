"""The supervisor's logviewer: its host's worker and daemon logs, by byte range, search, download.

Storm runs a logviewer daemon on each supervisor host that serves that host's log files; the UI
links to it. Here each supervisor serves its own host's logs on ``logviewer.port`` (0: any
free port), bound to the host's address (``storm.local.hostname``, loopback with a local Spark
master) and published in its supervisor record, and Nimbus is the one door the UI knocks on:
it forwards log reads to the supervisor that holds the file
(:mod:`sparkstorm.cluster.nimbus.logviewer_proxy`). Why this and not the workers' umbilical,
which carries the live tails:

- a byte range, a search or a download answers at once, not at the worker's next heartbeat,
  and a whole file never has to fit in a heartbeat's body;
- the logs of a worker that is gone (its topology killed) are still on its host: the
  supervisor keeps them until the retention limits (:mod:`.log_retention`), and only the
  supervisor is still there to serve them; so is the supervisor's own log;
- every call needs the cluster token, as Nimbus's log calls do (logs hold what components
  print), and names a file only as ``worker id`` + ``file name`` (never a path), so nothing
  outside the worker folders and the daemon log folder is ever read.

Routes (all ``GET``, with ``Authorization: Bearer <cluster token>``):

- ``/api/v1/files?topology=ID``: the log files of the topology's workers on this host, live
  and kept (``workerId``, ``topologyId``, ``file``, ``size``, ``modifiedSecs``, ``live``),
  or with no topology, the daemon logs (``workerId`` "");
- ``/api/v1/log?worker=W&file=F&start=S&length=L``: a byte range (Storm's ``start`` and
  ``length``; no ``start``: the last page), with the file's ``size``; ``worker=`` empty for a
  daemon log;
- ``/api/v1/search?worker=W&file=F&search=X&startByteOffset=N&numMatches=M``: the matches of
  a plain substring in one file (Storm's ``/search``);
- ``/api/v1/deepSearch?topology=ID&search=X&numMatches=M``: the same in every file of the
  topology on this host (Storm's ``/deepSearch``);
- ``/api/v1/download?worker=W&file=F``: the whole file.
"""

from __future__ import annotations

import logging
import re
import socket
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import uvicorn
from fastapi import Depends, FastAPI, Query, Request
from fastapi.responses import FileResponse, JSONResponse

from sparkstorm.cluster.nimbus.errors import NimbusError
from sparkstorm.cluster.nimbus.token import check_authorization
from sparkstorm.cluster.supervisor.log_retention import ARTIFACTS, topology_of
from sparkstorm.cluster.worker.log_files import LOG_FILE, log_files, read_range
from sparkstorm.cluster.worker.log_files import search as search_log
from sparkstorm.config import conf_int, conf_optional_str
from sparkstorm.tls.contexts import http_scheme, uvicorn_ssl

logger = logging.getLogger(__name__)

SearchString = Annotated[str, Query(min_length=1, max_length=1000)]
StartOffset = Annotated[int, Query(alias="startByteOffset", ge=0)]
NumMatches = Annotated[int, Query(alias="numMatches", ge=1, le=1000)]
WORKER_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,200}$")


class LogFolders:
    """The log folders of one supervisor: live workers', kept ones' and the daemon logs'.

    Args:
        root: the supervisor's folder (``<storm.local.dir>/supervisor``).
        daemon_logs: the folder of the daemon logs (``<storm.local.dir>/logs``).
    """

    def __init__(self, root: Path, daemon_logs: Path) -> None:
        self.live = root / "workers"
        self.kept = root / ARTIFACTS
        self.daemon_logs = daemon_logs

    def workers(self, topology_id: str | None = None) -> list[tuple[str, str, Path, bool]]:
        """Worker folders: (worker id, topology id, folder, live), of one topology or all."""
        found = []
        for base, live in ((self.live, True), (self.kept, False)):
            try:
                folders = sorted(p for p in base.iterdir() if p.is_dir())
            except OSError:
                continue
            for folder in folders:
                topology = topology_of(folder)
                if topology and topology_id in (None, topology):
                    found.append((folder.name, topology, folder, live))
        return found

    def files(self, topology_id: str | None) -> list[dict[str, Any]]:
        """The log files of ``topology_id``'s workers here; with None, the daemon logs."""
        if topology_id is None:
            return [{"workerId": "", "topologyId": "", "live": True, **entry}
                    for entry in log_files(self.daemon_logs)
                    if entry["file"].startswith("supervisor.log")]
        return [{"workerId": worker, "topologyId": topology, "live": live, **entry}
                for worker, topology, folder, live in self.workers(topology_id)
                for entry in log_files(folder)]

    def path(self, worker_id: str, file: str) -> Path:
        """The file named; raises ``NOT_FOUND`` for anything else."""
        if not LOG_FILE.match(file) or (worker_id and not WORKER_ID.match(worker_id)):
            msg = (f"no log {file!r} of worker {worker_id!r}: name a log file (like "
                   "worker.log or executor-3.log) of a worker listed by /api/v1/files")
            raise NimbusError(msg, code="BAD_REQUEST")
        if not worker_id:
            candidates = [self.daemon_logs / file] if file.startswith("supervisor.log") else []
        else:
            candidates = [self.live / worker_id / file, self.kept / worker_id / file]
        for candidate in candidates:
            if candidate.is_file():
                return candidate
        msg = f"this supervisor has no log {file!r} of worker {worker_id or '(daemon)'!r}"
        raise NimbusError(msg, code="NOT_FOUND")


def create_app(folders: LogFolders, token: str) -> FastAPI:
    """The logviewer's routes over ``folders`` (see the module docstring)."""
    def require_token(request: Request) -> None:
        check_authorization(request.headers.get("authorization", ""), token)

    app = FastAPI(title="sparkstorm logviewer", version="1", docs_url=None, redoc_url=None,
                  openapi_url=None, dependencies=[Depends(require_token)])

    @app.exception_handler(NimbusError)
    async def refused(_: Request, exc: NimbusError) -> JSONResponse:
        return JSONResponse({"error": str(exc.args[0]) if exc.args else "", "code": exc.code},
                            status_code=exc.status)

    @app.get("/api/v1/files")
    def files(topology: str | None = None) -> dict[str, Any]:
        return {"files": folders.files(topology)}

    @app.get("/api/v1/log")
    def log(file: str, worker: str = "", start: int | None = None,
            length: int | None = None) -> dict[str, Any]:
        return {"workerId": worker, "file": file,
                **read_range(folders.path(worker, file), start, length)}

    @app.get("/api/v1/search")
    def search_file(file: str, search: SearchString, worker: str = "",
                    start_byte_offset: StartOffset = 0,
                    num_matches: NumMatches = 100) -> dict[str, Any]:
        found = search_log(folders.path(worker, file), search, start=start_byte_offset,
                           max_matches=num_matches)
        return {"workerId": worker, "file": file, **found}

    @app.get("/api/v1/deepSearch")
    def deep_search(topology: str, search: SearchString,
                    num_matches: NumMatches = 100) -> dict[str, Any]:
        results = []
        for entry in folders.files(topology):
            found = search_log(folders.path(entry["workerId"], entry["file"]), search,
                               max_matches=num_matches)
            if found["matches"]:
                results.append({**entry, **found})
        return {"topologyId": topology, "searchString": search, "files": results}

    @app.get("/api/v1/download")
    def download(file: str, worker: str = "") -> FileResponse:
        return FileResponse(folders.path(worker, file), media_type="text/plain",
                            filename=f"{worker}-{file}" if worker else file)

    return app


def bind_host(conf: Mapping[str, object]) -> str:
    """The address the logviewer binds to and publishes (see the module docstring)."""
    configured = conf_optional_str(conf, "storm.local.hostname")
    if configured:
        return configured
    if str(conf.get("spark.master") or "local").startswith("local"):
        return "127.0.0.1"
    return socket.gethostbyname(socket.gethostname())


class LogviewerServer:
    """The logviewer served by uvicorn on a thread of the supervisor."""

    def __init__(self, conf: Mapping[str, object], folders: LogFolders, token: str) -> None:
        host = bind_host(conf)
        self.socket = socket.create_server((host, conf_int(conf, "logviewer.port")),
                                           reuse_port=False)
        port = self.socket.getsockname()[1]
        scheme = http_scheme(conf)  # only Nimbus calls: a client certificate is required
        self.url = (f"{scheme}://{host}:{port}" if ":" not in host
                    else f"{scheme}://[{host}]:{port}")
        self.server = uvicorn.Server(uvicorn.Config(
            create_app(folders, token), log_level="warning", access_log=False,
            lifespan="off", **uvicorn_ssl(conf, require_client=True)))
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Serve on a daemon thread (uvicorn leaves signals alone off the main thread)."""
        self._thread = threading.Thread(target=self.server.run,
                                        kwargs={"sockets": [self.socket]},
                                        name="logviewer", daemon=True)
        self._thread.start()
        logger.info("logviewer listening on %s", self.url)

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self.server.should_exit = True
        if self._thread is not None:
            self._thread.join(10)
        self.socket.close()
