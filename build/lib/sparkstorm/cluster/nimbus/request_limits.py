"""The limits Nimbus keeps before it reads a request body (an ASGI middleware).

FastAPI reads a JSON body before it runs the route's dependencies, so the token check of a
route came after a 200 MB body was in memory. :class:`RequestLimits` wraps the whole app and,
for every request that may carry a body (any method but GET, HEAD and OPTIONS, all of them
token-guarded):

1. checks the token, then ``Content-Length`` against the cap, without reading the body;
2. reads a JSON body itself, counting, and refuses it as soon as it passes the cap (a body
   sent chunked, without ``Content-Length``), then hands the read body to the route.

Code upload chunks (``PUT /api/v1/uploads/{id}``) keep their streaming route: they get steps
1 and the upload cap (``nimbus.upload.max.bytes``) instead of the JSON cap
(``nimbus.request.max.bytes``). A refusal answers ``{"error", "code"}`` like every Nimbus
error and closes the connection, so the unread rest of the body is never taken in.
"""

from __future__ import annotations

import re

from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sparkstorm.cluster.nimbus.errors import NimbusError
from sparkstorm.cluster.nimbus.token import check_authorization

BODYLESS_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
"""Methods whose requests are not read for a body (no route of ours takes one)."""

UPLOAD_CHUNK = re.compile(r"^/api/v1/uploads/[^/]+/?$")
"""The streamed upload route (with method PUT)."""


class RequestLimits:
    """Token and size checks ahead of every body-carrying request.

    Args:
        app: the Nimbus FastAPI app.
        token: the cluster token.
        max_json_bytes: ``nimbus.request.max.bytes``.
        max_upload_bytes: ``nimbus.upload.max.bytes`` (one chunk can be no larger).
    """

    def __init__(self, app: ASGIApp, *, token: str, max_json_bytes: int,
                 max_upload_bytes: int) -> None:
        self.app = app
        self.token = token
        self.max_json_bytes = max_json_bytes
        self.max_upload_bytes = max_upload_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Check a request's token and size, then hand it (and its read body) to the app."""
        if scope["type"] != "http" or scope["method"] in BODYLESS_METHODS:
            await self.app(scope, receive, send)
            return
        streamed = scope["method"] == "PUT" and bool(UPLOAD_CHUNK.match(scope["path"]))
        try:
            headers = Headers(scope=scope)
            check_authorization(headers.get("authorization", ""), self.token)
            if streamed:
                _check_length(headers, self.max_upload_bytes, "UPLOAD_TOO_LARGE",
                              "nimbus.upload.max.bytes")
            else:
                _check_length(headers, self.max_json_bytes, "REQUEST_TOO_LARGE",
                              "nimbus.request.max.bytes")
                body = await _read_capped(receive, self.max_json_bytes)
        except NimbusError as exc:
            await _refuse(exc, scope, receive, send)
            return
        if streamed:
            await self.app(scope, receive, send)
        else:
            await self.app(scope, _replay(body, receive), send)


def _too_large(size: str, cap: int, code: str, key: str) -> NimbusError:
    msg = (f"request body of {size} is over Nimbus's limit of {cap} bytes; send less, or "
           f"raise {key} on Nimbus")
    return NimbusError(msg, code=code)


def _check_length(headers: Headers, cap: int, code: str, key: str) -> None:
    """Refuse a declared ``Content-Length`` over ``cap`` (or not a number) unread."""
    declared = headers.get("content-length")
    if declared is None:
        return
    if not declared.strip().isdigit():
        msg = f"Content-Length {declared!r} is not a number of bytes; send a valid header"
        raise NimbusError(msg, code="BAD_REQUEST")
    if int(declared) > cap:
        raise _too_large(f"{int(declared)} bytes (Content-Length)", cap, code, key)  # noqa: EM102


async def _read_capped(receive: Receive, cap: int) -> bytes:
    """The whole body, refused as soon as it grows past ``cap`` (a chunked body)."""
    parts: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        piece = message.get("body", b"")
        size += len(piece)
        if size > cap:
            raise _too_large(f"more than {cap} bytes (read so far)",  # noqa: EM102
                             cap, "REQUEST_TOO_LARGE", "nimbus.request.max.bytes")
        parts.append(piece)
        if not message.get("more_body", False):
            break
    return b"".join(parts)


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that hands the route the body read already, then waits as before."""
    pending = [body]

    async def replay() -> Message:
        if pending:
            return {"type": "http.request", "body": pending.pop(), "more_body": False}
        return await receive()

    return replay


async def _refuse(error: NimbusError, scope: Scope, receive: Receive, send: Send) -> None:
    # Connection: close, so the server does not go on taking in the unread rest of the body
    response = JSONResponse({"error": str(error.args[0]), "code": error.code},
                                 status_code=error.status, headers={"connection": "close"})
    await response(scope, receive, send)
