"""``sparkstorm monitor``'s logic without processes.

Component choice against a real Nimbus (FastAPI's test client), the line arithmetic and the option
checks.
"""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from sparkstorm.cli.main import main
from sparkstorm.cli.monitor import Monitor, Sample
from sparkstorm.cluster.nimbus.api import create_app
from sparkstorm.cluster.nimbus.client import NimbusClient
from sparkstorm.cluster.nimbus.service import Nimbus
from sparkstorm.cluster.store.cluster_state import ClusterState
from sparkstorm.errors import ConfigError
from tests.unit.cluster.nimbus.helpers import SPEC, register, submit
from tests.unit.cluster.nimbus.http_helpers import LOOPBACK


def _client(nimbus: Nimbus) -> NimbusClient:
    client = NimbusClient("http://testserver", "secret")
    client.http = TestClient(create_app(nimbus, "secret"), base_url=LOOPBACK,
                             headers={"Authorization": "Bearer secret"})
    return client


def test_without_m_the_only_spout_is_watched_and_several_must_be_chosen(
        nimbus: Nimbus, state: ClusterState, monkeypatch: pytest.MonkeyPatch) -> None:
    register(state, "s1", 6700, 6701)
    submit(nimbus, "one")
    single = Monitor(_client(nimbus), "one", None, "default", "emitted")
    single.resolve()
    assert single.component == "word" and single.sample().count == 0
    other = {**SPEC["components"][0], "name": "lines"}
    monkeypatch.setitem(SPEC, "components", [*SPEC["components"], other])
    submit(nimbus, "two")
    with pytest.raises(ConfigError) as caught:
        Monitor(_client(nimbus), "two", None, "default", "emitted").resolve()
    assert caught.value.code == "MONITOR_COMPONENT_REQUIRED"
    assert "['lines', 'word']" in str(caught.value) and "-m COMPONENT" in str(caught.value)
    chosen = Monitor(_client(nimbus), "two", "lines", "default", "transferred")
    chosen.resolve()
    assert chosen.topology_id.startswith("two-")


def test_lines_show_the_difference_and_a_restarted_worker_s_own_count() -> None:
    monitor = Monitor(None, "t", "word", "default", "emitted")
    monitor.component = "word"
    assert monitor.line(Sample(10.0, 100, 2), Sample(12.0, 500, 2)).split("\t") == [
        "t", "word", "2", "default", "2000", "400", "200.0"]
    assert monitor.line(Sample(0.0, 900, 1), Sample(0.5, 30, 1)).split("\t")[4:] == [
        "500", "30", "60.0"], "counters restarted from zero"


@pytest.mark.parametrize("args", [["-i", "0"], ["-i", "-2"], ["--count", "0"]])
def test_bad_options_exit_2_with_a_code(args: list[str],
                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["monitor", "t", *args]) == 2
    assert "[MONITOR_BAD_OPTION]" in capsys.readouterr().err
