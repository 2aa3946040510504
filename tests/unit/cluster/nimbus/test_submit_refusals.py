"""A refused submission changes nothing on disk.

Nimbus deletes the upload a refused submit names, and ``sparkstorm submit`` asks Nimbus whether the
name is allowed (Storm's StormSubmitter) and validates locally before it uploads anything.
"""

from __future__ import annotations

import hashlib
import io
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from sparkstorm.cli.main import main
from sparkstorm.cluster.nimbus.api import create_app
from sparkstorm.cluster.nimbus.client import NimbusClient
from sparkstorm.cluster.nimbus.errors import NimbusError
from sparkstorm.cluster.nimbus.service import Nimbus
from sparkstorm.errors import SparkstormError
from tests.unit.cluster.nimbus.helpers import BOLT, SPEC, submit
from tests.unit.cluster.nimbus.http_helpers import LOOPBACK

TOPOLOGY_FILE = '''
from sparkstorm import Spout, Topology


class Words(Spout):
    outputs = ["word"]


class T(Topology):
    config = {CONFIG}
    word = Words.spec(config={COMPONENT_CONFIG})
'''


def _inbox(nimbus: Nimbus) -> list[str]:
    return sorted(p.name for p in nimbus.inbox.folder.iterdir())


def _finished_upload(nimbus: Nimbus) -> str:
    """A finished upload in the inbox, as the client leaves it before submitting."""
    data = _zip()
    upload_id = nimbus.inbox.begin()
    nimbus.inbox.chunk(upload_id, data)
    nimbus.inbox.finish(upload_id, hashlib.sha256(data).hexdigest())
    assert _inbox(nimbus) == [f"{upload_id}.zip"]
    return upload_id


def _zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("t.py", "")
    return buffer.getvalue()


@pytest.mark.parametrize(("name", "spec", "conf", "code"), [
    ("a/b", SPEC, {}, "INVALID_TOPOLOGY_NAME"),
    ("t", {"components": []}, {}, "NO_SPOUT"),
    ("t", ["not a spec"], {}, "INVALID_TOPOLOGY_SPEC"),
    ("t", SPEC, {"topology.workers": "many"}, "CONFIG_WRONG_TYPE"),
    ("t", {"components": [{**SPEC["components"][0], "config": {  # type: ignore[dict-item]
        "topology.tick.tuple.freq.secs": "often"}}]}, {}, "CONFIG_WRONG_TYPE"),
    # a 25 s window sliding by 5 s fits the default 30 s timeout, not the submitted 20 s
    ("t", {"components": [SPEC["components"][0], {**BOLT, "config": {
        "topology.bolts.window.length.duration.ms": 25000,
        "topology.bolts.sliding.interval.duration.ms": 5000}}]},
     {"topology.message.timeout.secs": 20}, "WINDOW_EXCEEDS_MESSAGE_TIMEOUT"),
    # Spark tasks host executors only in an application deployed with spark-submit
    ("t", SPEC, {"topology.executor.hosting": "spark"}, "HOSTING_NEEDS_SPARK_SUBMIT"),
])
def test_a_refused_submit_removes_its_upload(nimbus: Nimbus, name: str, spec: Any,
                                             conf: dict[str, Any], code: str) -> None:
    upload_id = _finished_upload(nimbus)
    with pytest.raises(SparkstormError) as caught:
        nimbus.submit(name, upload_id, spec, conf)
    assert caught.value.code == code
    assert _inbox(nimbus) == []
    assert nimbus.storms() == {} and nimbus.stormdist.topology_ids() == []


def test_a_duplicate_name_or_unfinished_upload_is_refused_and_removed(nimbus: Nimbus) -> None:
    first = submit(nimbus)
    assert _inbox(nimbus) == [], "a submitted upload moves to stormdist"
    upload_id = _finished_upload(nimbus)
    with pytest.raises(NimbusError) as caught:
        nimbus.submit("t", upload_id, SPEC, {})
    assert caught.value.code == "TOPOLOGY_ALREADY_ALIVE" and _inbox(nimbus) == []
    partial = nimbus.inbox.begin()
    with pytest.raises(NimbusError) as caught:
        nimbus.submit("u", partial, SPEC, {})
    assert caught.value.code == "NO_SUCH_UPLOAD" and _inbox(nimbus) == []
    assert list(nimbus.storms()) == [first]
    for not_ours in ("../../etc/passwd", "stormjar-zz"):
        assert nimbus.inbox.discard(not_ours) == []


# --- the CLI ----------------------------------------------------------------------------------


@pytest.fixture
def cli_nimbus(nimbus: Nimbus, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """``sparkstorm submit`` talks to ``nimbus`` in-process; returns the upload ids begun."""
    begun: list[str] = []
    begin = nimbus.inbox.begin

    def counted_begin() -> str:
        begun.append(begin())
        return begun[-1]

    def client(_conf: object, **_kwargs: object) -> NimbusClient:
        answer = NimbusClient("http://testserver", "secret")
        answer.http = TestClient(create_app(nimbus, "secret"), base_url=LOOPBACK,
                                 headers={"Authorization": "Bearer secret"})
        return answer

    monkeypatch.setattr(nimbus.inbox, "begin", counted_begin)
    monkeypatch.setattr(NimbusClient, "from_conf", client)
    monkeypatch.setenv("SPARKSTORM_CONF_FILE", "")
    monkeypatch.setattr(sys, "path", list(sys.path))  # the CLI puts the file's folder first
    return begun


def _topology_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config: str = "{}",
                   component_config: str = "{}") -> str:
    folder = tmp_path / "topo"
    folder.mkdir()
    path = folder / "submit_refusal_topology.py"
    path.write_text(TOPOLOGY_FILE.replace("{CONFIG}", config)
                    .replace("{COMPONENT_CONFIG}", component_config))
    monkeypatch.delitem(sys.modules, path.stem, raising=False)
    return str(path)


def test_cli_refuses_a_live_name_before_uploading(
        nimbus: Nimbus, cli_nimbus: list[str], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    file = _topology_file(tmp_path, monkeypatch)
    assert main(["submit", file, "--name", "wc"]) == 0
    topology_id = capsys.readouterr().out.strip()
    assert topology_id.startswith("wc-1-") and len(cli_nimbus) == 1
    assert main(["submit", file, "--name", "wc"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("sparkstorm submit: error: [TOPOLOGY_ALREADY_ALIVE] ")
    assert topology_id in err and "nothing was uploaded" in err
    assert len(cli_nimbus) == 1, "no upload begun for the refused name"
    assert _inbox(nimbus) == [] and list(nimbus.storms()) == [topology_id]


@pytest.mark.parametrize(("args", "config", "component_config", "code"), [
    (["--name", "a.b"], "{}", "{}", "INVALID_TOPOLOGY_NAME"),
    ([], "{'topology.workers': 'many'}", "{}", "CONFIG_WRONG_TYPE"),
    ([], "{}", "{'topology.tick.tuple.freq.secs': 'often'}", "CONFIG_WRONG_TYPE"),
])
def test_cli_validates_locally_before_uploading(
        nimbus: Nimbus, cli_nimbus: list[str], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        args: list[str], config: str, component_config: str, code: str) -> None:
    file = _topology_file(tmp_path, monkeypatch, config, component_config)
    assert main(["submit", file, *args]) == 2
    assert f"[{code}]" in capsys.readouterr().err
    assert cli_nimbus == [] and _inbox(nimbus) == [] and nimbus.storms() == {}
