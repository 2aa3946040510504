"""Nimbus's door to the supervisors' logviewers: byte ranges, search and downloads of logs.

Each supervisor serves its host's logs (:mod:`sparkstorm.cluster.supervisor.logviewer`, whose
docstring says why the supervisor and not the worker's umbilical) and publishes where in
its record (``logviewer_url``). Nimbus asks every live supervisor for the files of a
topology (live workers' and those kept after a kill, which is why a killed topology's logs
stay readable), forwards a read, a search or a download to the one that has the file, and
merges a search across all of them (Storm's ``deepSearch``). Nimbus's own log
(``<storm.local.dir>/logs/nimbus.log``) it serves itself. Every call carries the cluster
token, to the supervisors as from the UI.
"""

from __future__ import annotations

import logging
import ssl
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from http import HTTPStatus
from pathlib import Path
from typing import Annotated, Any

import httpx
from fastapi import FastAPI, Query
from fastapi.responses import StreamingResponse

from sparkstorm.cluster.daemon_log import daemon_log_path
from sparkstorm.cluster.nimbus.errors import CODES, NimbusError
from sparkstorm.cluster.store.cluster_state import ClusterState
from sparkstorm.cluster.worker.log_files import LOG_FILE, log_files, read_range, search
from sparkstorm.tls.contexts import http_verify

logger = logging.getLogger(__name__)

TIMEOUT_SECS = 10.0
"""How long Nimbus waits for a supervisor's logviewer."""


class LogviewerProxy:
    """Reads logs through the supervisors' logviewers (see the module docstring)."""

    def __init__(self, state: ClusterState, conf: Mapping[str, object], token: str) -> None:
        self.state = state
        self.nimbus_log = daemon_log_path(conf, "nimbus")
        self.headers = {"Authorization": f"Bearer {token}"}
        self.conf = conf
        self._verify: ssl.SSLContext | bool | None = None

    def verify(self, url: str) -> ssl.SSLContext | bool:
        """What httpx verifies at ``url``: an https logviewer wants Nimbus's client certificate.

        The scheme is the one the supervisor published; the material is read on first use.
        """
        if not url.startswith("https:"):
            return True
        if self._verify is None:
            self._verify = http_verify(self.conf)
        return self._verify

    # --- supervisors ---------------------------------------------------------------------------

    def _logviewers(self) -> dict[str, tuple[str, str]]:
        """Each live supervisor with a logviewer: id -> (host name, logviewer URL)."""
        return {sid: (info.hostname, info.logviewer_url)
                for sid, info in sorted(self.state.all_supervisor_info().items())
                if info.logviewer_url}

    def _get(self, url: str, path: str, params: Mapping[str, Any]) -> Any:
        """A logviewer's JSON answer; its refusals come back as the same NimbusError."""
        try:
            with httpx.Client(base_url=url, headers=self.headers, timeout=TIMEOUT_SECS,
                              verify=self.verify(url)) as client:
                response = client.get(path, params={k: v for k, v in params.items()
                                                    if v is not None})
        except httpx.HTTPError as exc:
            msg = f"the logviewer at {url} did not answer: {exc}"
            raise NimbusError(msg, code="NIMBUS_UNAVAILABLE") from exc
        if not response.is_success:
            raise _refusal(url, response)
        return response.json()

    def _each(self, path: str, params: Mapping[str, Any]
              ) -> tuple[list[tuple[str, str, Any]], list[str]]:
        """Ask every logviewer at once: ([(supervisor id, host, answer)], [unreachable ids])."""
        viewers = self._logviewers()
        if not viewers:
            return [], []

        def ask(sid: str) -> tuple[str, Any]:
            try:
                return sid, self._get(viewers[sid][1], path, params)
            except NimbusError as exc:
                logger.warning("logviewer of supervisor %s: %s", sid, exc)
                return sid, None

        with ThreadPoolExecutor(min(8, len(viewers))) as pool:
            answers = list(pool.map(ask, viewers))
        return ([(sid, viewers[sid][0], body) for sid, body in answers if body is not None],
                [sid for sid, body in answers if body is None])

    # --- a topology's logs ---------------------------------------------------------------------

    def files(self, topology_id: str) -> dict[str, Any]:
        """Every log file of the topology's workers, live or kept, on every supervisor."""
        answers, unreachable = self._each("/api/v1/files", {"topology": topology_id})
        files = [{**entry, "supervisorId": sid, "host": host}
                 for sid, host, body in answers for entry in body["files"]]
        return {"topologyId": topology_id, "files": files, "unreachable": unreachable}

    def _holder(self, topology_id: str, worker: str, file: str) -> tuple[str, dict[str, Any]]:
        """The logviewer URL that has ``file`` of ``worker`` (of this topology) and its entry."""
        viewers = self._logviewers()
        for entry in self.files(topology_id)["files"]:
            if entry["workerId"] == worker and entry["file"] == file:
                return viewers[entry["supervisorId"]][1], entry
        msg = (f"topology {topology_id} has no log {file!r} of worker {worker!r} on any live "
               "supervisor; GET /api/v1/topology/{id}/logfiles lists them")
        raise NimbusError(msg, code="NOT_FOUND")

    def read(self, topology_id: str, worker: str, file: str, start: int | None,
             length: int | None) -> dict[str, Any]:
        """A byte range of one log (Storm's ``start`` and ``length``)."""
        url, entry = self._holder(topology_id, worker, file)
        body = self._get(url, "/api/v1/log", {"worker": worker, "file": file, "start": start,
                                              "length": length})
        return {**body, "topologyId": topology_id, "supervisorId": entry["supervisorId"],
                "host": entry["host"], "live": entry["live"]}

    def search(self, topology_id: str, needle: str, worker: str | None, file: str | None,
               start: int, num_matches: int) -> dict[str, Any]:
        """Matches in one file (with ``worker`` and ``file``) or in all the topology's."""
        if worker and file:
            url, entry = self._holder(topology_id, worker, file)
            body = self._get(url, "/api/v1/search", {
                "worker": worker, "file": file, "search": needle, "startByteOffset": start,
                "numMatches": num_matches})
            return {"topologyId": topology_id, "searchString": needle, "unreachable": [],
                    "files": [{**entry, **body}]}
        answers, unreachable = self._each("/api/v1/deepSearch", {
            "topology": topology_id, "search": needle, "numMatches": num_matches})
        found = [{**entry, "supervisorId": sid, "host": host}
                 for sid, host, body in answers for entry in body["files"]]
        return {"topologyId": topology_id, "searchString": needle, "files": found,
                "unreachable": unreachable}

    def download(self, topology_id: str, worker: str, file: str) -> Iterator[bytes]:
        """The whole file, in chunks, from the supervisor that has it."""
        url, _ = self._holder(topology_id, worker, file)
        return self._stream(url, {"worker": worker, "file": file})

    def _stream(self, url: str, params: Mapping[str, str]) -> Iterator[bytes]:
        client = httpx.Client(base_url=url, headers=self.headers, timeout=TIMEOUT_SECS,
                              verify=self.verify(url))
        response = client.send(client.build_request("GET", "/api/v1/download", params=params),
                               stream=True)
        if not response.is_success:
            response.read()
            client.close()
            raise _refusal(url, response)

        def chunks() -> Iterator[bytes]:
            try:
                yield from response.iter_bytes()
            finally:
                response.close()
                client.close()

        return chunks()

    # --- daemons' logs -------------------------------------------------------------------------

    def daemon_files(self) -> dict[str, Any]:
        """Nimbus's log files and each supervisor's."""
        own = [{"daemon": "nimbus", "supervisorId": "", "host": "nimbus", **entry}
               for entry in log_files(self.nimbus_log.parent)
               if entry["file"].startswith("nimbus.log")]
        answers, unreachable = self._each("/api/v1/files", {})
        theirs = [{"daemon": "supervisor", "supervisorId": sid, "host": host,
                   "file": entry["file"], "size": entry["size"],
                   "modifiedSecs": entry["modifiedSecs"]}
                  for sid, host, body in answers for entry in body["files"]]
        return {"files": own + theirs, "unreachable": unreachable}

    def _own(self, file: str) -> Path:
        path = self.nimbus_log.parent / file
        if not (LOG_FILE.match(file) and file.startswith("nimbus.log") and path.is_file()):
            msg = f"Nimbus has no log {file!r}; GET /api/v1/daemonlogs lists them"
            raise NimbusError(msg, code="NOT_FOUND")
        return path

    def _supervisor_url(self, supervisor: str) -> str:
        viewers = self._logviewers()
        if supervisor not in viewers:
            msg = (f"no live supervisor {supervisor!r} with a logviewer; live ones: "
                   f"{sorted(viewers)}")
            raise NimbusError(msg, code="SUPERVISOR_NOT_FOUND")
        return viewers[supervisor][1]

    def daemon_read(self, daemon: str, supervisor: str, file: str, start: int | None,
                    length: int | None) -> dict[str, Any]:
        """A byte range of Nimbus's or a supervisor's log."""
        if daemon == "nimbus":
            return {"daemon": daemon, "file": file, **read_range(self._own(file), start, length)}
        body = self._get(self._supervisor_url(supervisor), "/api/v1/log",
                         {"file": file, "start": start, "length": length})
        return {**body, "daemon": daemon, "supervisorId": supervisor}

    def daemon_search(self, daemon: str, supervisor: str, file: str, needle: str, start: int,
                      num_matches: int) -> dict[str, Any]:
        """Matches of a substring in Nimbus's or a supervisor's log."""
        if daemon == "nimbus":
            return {"daemon": daemon, "file": file, **search(
                self._own(file), needle, start=start, max_matches=num_matches)}
        body = self._get(self._supervisor_url(supervisor), "/api/v1/search", {
            "file": file, "search": needle, "startByteOffset": start,
            "numMatches": num_matches})
        return {**body, "daemon": daemon, "supervisorId": supervisor}

    def daemon_download(self, daemon: str, supervisor: str, file: str) -> Iterator[bytes]:
        """The whole of Nimbus's or a supervisor's log."""
        if daemon == "nimbus":
            path = self._own(file)

            def chunks() -> Iterator[bytes]:
                with path.open("rb") as handle:
                    while piece := handle.read(1 << 16):
                        yield piece

            return chunks()
        return self._stream(self._supervisor_url(supervisor), {"file": file})


def _refusal(url: str, response: httpx.Response) -> NimbusError:
    """A logviewer's refusal as Nimbus's error (same code; FastAPI's own 422 as BAD_REQUEST)."""
    try:
        body = response.json()
    except ValueError:
        body = {}
    body = body if isinstance(body, dict) else {}
    code = body.get("code") if body.get("code") in CODES else (
        "BAD_REQUEST" if response.status_code == HTTPStatus.UNPROCESSABLE_ENTITY else "NOT_FOUND")
    detail = body.get("error") or body.get("detail") or response.text[:500]
    return NimbusError(f"the logviewer at {url} refused: {detail}", code=str(code))


Start = Annotated[int | None, Query(ge=0)]
Length = Annotated[int | None, Query(ge=1)]
SearchString = Annotated[str, Query(min_length=1, max_length=1000)]
StartOffset = Annotated[int, Query(alias="startByteOffset", ge=0)]
NumMatches = Annotated[int, Query(alias="numMatches", ge=1, le=1000)]
Daemon = Annotated[str, Query(pattern="^(nimbus|supervisor)$")]


def _download(chunks: Iterator[bytes], name: str) -> StreamingResponse:
    return StreamingResponse(chunks, media_type="text/plain; charset=utf-8", headers={
        "Content-Disposition": f'attachment; filename="{name}"'})


def add_routes(app: FastAPI, proxy: LogviewerProxy, auth: Any) -> None:
    """Nimbus's logviewer routes; all of them need the cluster token.

    ``/api/v1/topology/{id}/logfiles``, ``.../logfile?worker&file&start&length``,
    ``.../logsearch?search[&worker&file][&startByteOffset&numMatches]`` (one file, or all
    of the topology's), ``.../logdownload?worker&file``; ``/api/v1/daemonlogs``,
    ``/api/v1/daemonlog?daemon=nimbus|supervisor[&supervisor=ID]&file[&start&length]``,
    ``/api/v1/daemonlog/search`` and ``/api/v1/daemonlog/download`` likewise.
    """
    @app.get("/api/v1/topology/{topology_id}/logfiles", dependencies=[auth])
    def logfiles(topology_id: str) -> dict[str, Any]:
        return proxy.files(topology_id)

    @app.get("/api/v1/topology/{topology_id}/logfile", dependencies=[auth])
    def logfile(topology_id: str, worker: str, file: str, start: Start = None,
                length: Length = None) -> dict[str, Any]:
        return proxy.read(topology_id, worker, file, start, length)

    @app.get("/api/v1/topology/{topology_id}/logsearch", dependencies=[auth])
    def logsearch(topology_id: str, search: SearchString, worker: str | None = None,
                  file: str | None = None, start_byte_offset: StartOffset = 0,
                  num_matches: NumMatches = 100) -> dict[str, Any]:
        return proxy.search(topology_id, search, worker, file, start_byte_offset, num_matches)

    @app.get("/api/v1/topology/{topology_id}/logdownload", dependencies=[auth])
    def logdownload(topology_id: str, worker: str, file: str) -> StreamingResponse:
        return _download(proxy.download(topology_id, worker, file), f"{worker}-{file}")

    @app.get("/api/v1/daemonlogs", dependencies=[auth])
    def daemonlogs() -> dict[str, Any]:
        return proxy.daemon_files()

    @app.get("/api/v1/daemonlog", dependencies=[auth])
    def daemonlog(daemon: Daemon, file: str, supervisor: str = "", start: Start = None,
                  length: Length = None) -> dict[str, Any]:
        return proxy.daemon_read(daemon, supervisor, file, start, length)

    @app.get("/api/v1/daemonlog/search", dependencies=[auth])
    def daemonlog_search(daemon: Daemon, file: str, search: SearchString,
                         supervisor: str = "", start_byte_offset: StartOffset = 0,
                         num_matches: NumMatches = 100) -> dict[str, Any]:
        return proxy.daemon_search(daemon, supervisor, file, search, start_byte_offset,
                                   num_matches)

    @app.get("/api/v1/daemonlog/download", dependencies=[auth])
    def daemonlog_download(daemon: Daemon, file: str,
                           supervisor: str = "") -> StreamingResponse:
        name = f"{supervisor}-{file}" if supervisor else file
        return _download(proxy.daemon_download(daemon, supervisor, file), name)
