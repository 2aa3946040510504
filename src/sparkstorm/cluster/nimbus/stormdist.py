"""A submitted topology's files under ``<storm.local.dir>/nimbus/stormdist/<topology id>/``.

Storm keeps ``stormjar.jar``, ``stormcode.ser`` and ``stormconf.ser``; we keep the code zip,
the topology spec and the effective conf, as JSON so that a person can read them.
"""

from __future__ import annotations

import fcntl
import json
import os
import secrets
import shutil
from pathlib import Path
from typing import Any

CODE = "stormjar.zip"
SPEC = "stormcode.json"
CONF = "stormconf.json"
TOKEN = "executor.token"
PARTS = {"code": CODE, "spec": SPEC, "conf": CONF}
"""Download names (``GET /api/v1/topology/{id}/code?part=...``) and their files."""


class StormDist:
    """The ``stormdist`` folder of one Nimbus."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)

    def folder(self, topology_id: str) -> Path:
        """The topology's folder (it may not exist)."""
        return self.root / topology_id

    def write(self, topology_id: str, code: Path | None, spec: dict[str, Any],
              conf: dict[str, Any]) -> None:
        """Move the finished upload in and write spec and conf, all or nothing.

        ``code`` is None for a registered application: it carries its own code.

        Written to a temporary folder renamed at the end, so a crash never leaves a half
        topology folder that a restarted Nimbus would serve.
        """
        staging = self.root / f".{topology_id}.tmp"
        staging.mkdir()
        try:
            (staging / SPEC).write_text(json.dumps(spec, indent=1, sort_keys=True))
            (staging / CONF).write_text(json.dumps(conf, indent=1, sort_keys=True,
                                                   default=str))
            if code is not None:
                shutil.copyfile(code, staging / CODE)
            staging.rename(self.folder(topology_id))
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        if code is not None:
            code.unlink(missing_ok=True)

    def read_json(self, topology_id: str, name: str) -> dict[str, Any]:
        """Read the spec or conf of a topology."""
        data: dict[str, Any] = json.loads((self.folder(topology_id) / name).read_text())
        return data

    def spec(self, topology_id: str) -> dict[str, Any]:
        """The submitted spec (JSON form, executor counts as last rebalanced)."""
        return self.read_json(topology_id, SPEC)

    def conf(self, topology_id: str) -> dict[str, Any]:
        """The effective conf the topology runs with."""
        return self.read_json(topology_id, CONF)

    def executor_token(self, topology_id: str) -> str:
        """The secret a topology's executors ask of TCP callers (made at first use).

        Workers get it in their init context; it never leaves Nimbus otherwise (the
        ``code`` download serves the code, spec and conf only).
        """
        path = self.folder(topology_id) / TOKEN
        try:
            return path.read_text().strip()
        except FileNotFoundError:
            token = secrets.token_hex(16)
            staging = path.with_name(f".{TOKEN}.tmp")
            staging.write_text(token)
            staging.chmod(0o600)
            os.replace(staging, path)
            return token

    def write_json(self, topology_id: str, name: str, data: dict[str, Any]) -> None:
        """Replace the spec or conf of a topology atomically (a rebalance's new counts)."""
        path = self.folder(topology_id) / name
        staging = path.with_name(f".{name}.tmp")
        staging.write_text(json.dumps(data, indent=1, sort_keys=True, default=str))
        os.replace(staging, path)

    def topology_ids(self) -> list[str]:
        """The topologies that have a folder here (staging folders left out)."""
        return sorted(p.name for p in self.root.iterdir()
                      if p.is_dir() and not p.name.startswith("."))

    def remove_staging(self) -> list[str]:
        """Delete staging folders a crashed submit left behind; return their names."""
        found = [p for p in self.root.glob(".*.tmp") if p.is_dir()]
        for path in found:
            shutil.rmtree(path, ignore_errors=True)
        return [p.name for p in found]

    def remove(self, topology_id: str) -> None:
        """Delete the topology's folder (idempotent)."""
        shutil.rmtree(self.folder(topology_id), ignore_errors=True)

    def next_counter(self) -> int:
        """Storm's submission counter, kept on disk so a restarted Nimbus goes on counting."""
        path = self.root.parent / "submit-counter"
        with open(path, "a+") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            handle.seek(0)
            text = handle.read().strip()
            counter = int(text) + 1 if text.isdigit() else 1
            handle.seek(0)
            handle.truncate()
            handle.write(str(counter))
            handle.flush()
            os.fsync(handle.fileno())
        return counter
