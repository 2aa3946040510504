"""``topology.multilang.log.handler``: the child's ``log`` messages go to the named handler.

The handler is set up with the child's PID; a handler that cannot be used is a clear start-up error.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from sparkstorm.multilang.errors import MultilangError
from tests.unit.multilang.harness import bolt, probe, tup

RECEIVED: list[tuple[str, Any, int, str]] = []


class RecordingLogHandler:
    """Keeps what it is given, in :data:`RECEIVED`."""

    def setup(self, component: str, pid: Any, conf: dict[str, Any],
              context: dict[str, Any]) -> None:
        self.component, self.pid = component, pid

    def log(self, level: int, text: str) -> None:
        RECEIVED.append((self.component, self.pid, level, text))


class NoLogMethod:
    def setup(self, *args: Any) -> None:
        pass


def test_log_messages_go_to_the_configured_handler(caplog: pytest.LogCaptureFixture) -> None:
    RECEIVED.clear()
    path = f"{__name__}:RecordingLogHandler"
    shell = bolt(probe("ok"), conf={"topology.multilang.log.handler": path})
    with caplog.at_level(1, logger="sparkstorm.multilang.shell.probe"):
        shell.process(tup("log", 0))
        shell.end_window()
    pid = shell.subprocess.reported_pid
    shell.close()
    levels = {text.rsplit(" ", 1)[-1]: level for _, _, level, text in RECEIVED
              if "level " in text}
    assert levels["3"] == logging.WARNING and levels["4"] == logging.ERROR
    assert {(component, p) for component, p, _, _ in RECEIVED} == {("probe", pid)}
    assert not [r for r in caplog.records if "ShellLog" in r.getMessage()], \
        "the default handler must not log as well"


@pytest.mark.parametrize("path", ["no.such.module:Handler", f"{__name__}:NoLogMethod"])
def test_an_unusable_handler_is_a_clear_start_up_error(path: str) -> None:
    shell = bolt(probe("ok"), conf={"topology.multilang.log.handler": path})
    with pytest.raises(MultilangError) as info:
        shell.process(tup("log", 0))
    assert info.value.code == "MULTILANG_LOG_HANDLER_INVALID"
    assert "topology.multilang.log.handler" in str(info.value) and path in str(info.value)
    shell.close()
