"""Topology actions through the UI server, and the stack traces the workers sent.

The actions (activate, deactivate, rebalance, kill and the stack trace request) are checked (CSRF,
actions enabled, token kept in the session) and forwarded to Nimbus with the token; the stack traces
the workers sent are read with the session's token.

Rebalance bodies are Storm UI's ``{"rebalanceOptions": {"executors": {...}, "numWorkers": n}}``;
they are checked here so that a malformed one is refused with a message, not forwarded.

A stack trace request's answer is Nimbus's
``{"topologyOperation": "stacktrace", "topologyId", "status", "workers": n}`` plus
``"previousTimeSecs": {"<worker id>": secs}``, the time of each worker's answer to an earlier
request, read just before this one: an answer newer than that is the answer to this request.

Example:
    >>> rebalance_body({"rebalanceOptions": {"executors": {"count": "3"}, "numWorkers": 1}})
    {'rebalanceOptions': {'executors': {'count': 3}, 'numWorkers': 1}}
    >>> rebalance_body(None)
    {'rebalanceOptions': {}}
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from http import HTTPStatus
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import httpx
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException

if TYPE_CHECKING:
    from sparkstorm.web.sessions import Session

logger = logging.getLogger(__name__)

ACTIONS = ("activate", "deactivate", "kill", "rebalance", "stacktrace")
WAIT_ACTIONS = ("kill", "rebalance")
MAX_WAIT_SECS = 24 * 3600


def _count(value: object, what: str) -> int:
    """A positive count given as a number or a numeric string (as Storm UI accepts).

    Raises:
        HTTPException: 422 when ``value`` is not a positive integer.
    """
    text = str(value).strip() if isinstance(value, int | str) and \
        not isinstance(value, bool) else ""
    if not text.isdigit() or int(text) < 1:
        msg = f"{what} must be a positive integer, got {value!r}"
        raise HTTPException(422, msg)
    return int(text)


def rebalance_body(body: object) -> dict[str, Any]:
    """The rebalance body to forward, with counts as integers.

    Raises:
        HTTPException: 422 when the body is not Storm UI's rebalance shape.
    """
    if body is None or body == {}:
        return {"rebalanceOptions": {}}
    options = body.get("rebalanceOptions") if isinstance(body, dict) else None
    if not isinstance(options, dict):
        msg = ('send {"rebalanceOptions": {"executors": {"<component>": <count>}, '
               '"numWorkers": <count>}} or no body')
        raise HTTPException(422, msg)
    checked: dict[str, Any] = {}
    executors = options.get("executors") or {}
    if not isinstance(executors, dict):
        msg = f"rebalanceOptions.executors must map component ids to counts, got {executors!r}"
        raise HTTPException(422, msg)
    if executors:
        checked["executors"] = {str(name): _count(value, f"executors of {name!r}")
                                for name, value in executors.items()}
    if options.get("numWorkers") not in (None, ""):
        checked["numWorkers"] = _count(options["numWorkers"], "numWorkers")
    return {"rebalanceOptions": checked}


def _json_body(raw: bytes) -> object:
    if not raw.strip():
        return None
    try:
        return json.loads(raw)
    except ValueError as exc:
        msg = f"the request body is not JSON: {exc}"
        raise HTTPException(422, msg) from exc


async def forward_action(client: httpx.AsyncClient, session: Session, topology_id: str,
                         action: str, wait: int | None, raw_body: bytes) -> Response:
    """Check a topology action and forward it to Nimbus with the session's token.

    The caller checked the session, CSRF and that actions are enabled.

    Raises:
        HTTPException: 404 (unknown action), 422 (bad rebalance body or wait time).
    """
    if action not in ACTIONS or (wait is not None and action not in WAIT_ACTIONS):
        raise HTTPException(404, f"unknown action {action!r}; use one of {list(ACTIONS)}")
    if wait is not None and not 0 <= wait <= MAX_WAIT_SECS:
        raise HTTPException(422, f"wait time must be 0 to {MAX_WAIT_SECS} s, got {wait}")
    body = rebalance_body(_json_body(raw_body)) if action == "rebalance" else None
    if session.token is None:
        return _token_missing()
    if action == "stacktrace":
        return await _request_stack_traces(client, session, topology_id)
    path = f"/api/v1/topology/{quote(topology_id, safe='')}/{action}"
    if wait is not None:
        path += f"/{wait}"
    logger.info("forwarding %s of %s to Nimbus", action, topology_id)
    return _answer(session, await client.post(path, json=body, headers=_bearer(session)))


def _token_missing() -> JSONResponse:
    return JSONResponse({"error": "this action needs the cluster token; enter it once "
                                  "per session", "code": "AUTH_TOKEN_MISSING"},
                        status_code=401)


def _bearer(session: Session) -> dict[str, str]:
    return {"Authorization": f"Bearer {session.token}"}


def _answer(session: Session, response: httpx.Response) -> Response:
    """Nimbus's answer as is; a token Nimbus refused is forgotten, so the UI asks again."""
    if response.status_code == HTTPStatus.UNAUTHORIZED:
        session.token = None
    return Response(response.content, status_code=response.status_code,
                    media_type=response.headers.get("content-type", "application/json"))


def _stacktrace_path(topology_id: str) -> str:
    return f"/api/v1/topology/{quote(topology_id, safe='')}/stacktrace"


async def _request_stack_traces(client: httpx.AsyncClient, session: Session,
                                topology_id: str) -> Response:
    """Read the answers so far, then ask Nimbus for new ones (see the module docstring)."""
    path = _stacktrace_path(topology_id)
    before = await client.get(path, headers=_bearer(session))
    if not before.is_success:
        return _answer(session, before)
    previous = {str(w.get("workerId")): w.get("timeSecs")
                for w in before.json().get("workers", []) if isinstance(w, dict)}
    logger.info("forwarding stacktrace of %s to Nimbus", topology_id)
    response = await client.post(path, headers=_bearer(session))
    if not response.is_success:
        return _answer(session, response)
    return JSONResponse({**response.json(), "previousTimeSecs": previous})


async def forward_stack_traces(client: httpx.AsyncClient, session: Session,
                               topology_id: str) -> Response:
    """The stack traces the workers of a topology sent, read from Nimbus.

    Read with the session's token (which never leaves this server).
    """
    return await forward_token_get(client, session, _stacktrace_path(topology_id))


async def forward_token_get(client: httpx.AsyncClient, session: Session, path: str,
                            params: Mapping[str, str] | None = None) -> Response:
    """A read Nimbus serves only with the cluster token, with the session's token.

    401 (``AUTH_TOKEN_MISSING``) when the session has none yet.
    """
    if session.token is None:
        return _token_missing()
    return _answer(session, await client.get(path, params=params, headers=_bearer(session)))


async def forward_post(client: httpx.AsyncClient, session: Session, path: str,
                       raw_body: bytes) -> Response:
    """A state-changing call (log levels, debug sampling) forwarded to Nimbus.

    Forwarded with the session's token; a body must be a JSON object.

    Raises:
        HTTPException: 422 when the body is not a JSON object.
    """
    body = _json_body(raw_body)
    if body is not None and not isinstance(body, dict):
        raise HTTPException(422, "send a JSON object")
    if session.token is None:
        return _token_missing()
    logger.info("forwarding %s to Nimbus", path)
    return _answer(session, await client.post(path, json=body, headers=_bearer(session)))
