"""Helpers of the in-process Nimbus API tests.

A code archive, an upload through the API, and the whole store as a dict (for "nothing changed"
checks).
"""

from __future__ import annotations

import hashlib
import io
import zipfile

from fastapi.testclient import TestClient

from sparkstorm.cluster.store.base import StateStore

AUTH = {"Authorization": "Bearer secret"}
LOOPBACK = "http://127.0.0.1"
"""The test clients' base URL: Nimbus answers under known names only (``host_check``)."""


def code_zip() -> bytes:
    """A one-file code archive, as ``sparkstorm submit`` would upload."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("topo.py", "# components\n")
    return buffer.getvalue()


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def upload_code(http: TestClient) -> str:
    """Begin, send and finish an upload of :func:`code_zip`; return its id."""
    data = code_zip()
    upload_id = str(http.post("/api/v1/uploads", headers=AUTH).json()["upload_id"])
    assert http.put(f"/api/v1/uploads/{upload_id}", headers=AUTH,
                    content=data).status_code == 200
    finished = http.post(f"/api/v1/uploads/{upload_id}/finish", headers=AUTH,
                         json={"sha256": sha256(data)})
    assert finished.status_code == 200, finished.text
    return upload_id


def dump_store(store: StateStore, path: str = "/") -> dict[str, bytes]:
    """Every node below ``path`` with its data."""
    nodes = {}
    for name in store.children(path):
        child = f"{path.rstrip('/')}/{name}"
        nodes[child] = store.get(child)[0]
        nodes |= dump_store(store, child)
    return nodes
