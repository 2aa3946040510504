"""``sparkstorm submit --force``: replace a running topology of the same name.

As streamparse's ``sparse submit --force`` does: kill it, wait until Nimbus forgot it, submit.

Storm kills in two steps: the spouts are deactivated, and ``--wait`` seconds later (default:
the topology's ``topology.message.timeout.secs``) the workers are removed; the name is free
once the topology is gone from Nimbus's list.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from sparkstorm.cli.errors import CliError
from sparkstorm.cluster.nimbus.errors import NimbusError

if TYPE_CHECKING:
    from sparkstorm.cluster.nimbus.client import NimbusClient

GONE_GRACE_SECONDS = 60.0
"""Beyond the kill's wait, how long a replaced topology may take to leave Nimbus's list."""


def replace_running(client: NimbusClient, name: str, wait: int | None,
                    message_timeout: float, *, clock: Callable[[], float] = time.monotonic,
                    sleep: Callable[[float], None] = time.sleep) -> str | None:
    """Kill the live topology ``name``, if any, and wait until its name is free.

    Args:
        client: Nimbus.
        name: the topology's name.
        wait: seconds between deactivation and removal (None: ``message_timeout``).
        message_timeout: the topology's ``topology.message.timeout.secs``.
        clock: the monotonic clock the bound is measured on.
        sleep: how to wait between two looks at Nimbus's list.

    Returns:
        The id of the topology killed, or None when none of that name ran.

    Raises:
        CliError: ``SUBMIT_REPLACE_TIMEOUT`` when the old topology is still listed after the
            wait and :data:`GONE_GRACE_SECONDS`.
    """
    try:
        old = client.topology_id(name)
    except NimbusError as exc:
        if exc.code != "TOPOLOGY_NOT_FOUND":
            raise
        return None
    client.action(old, "kill" if wait is None else f"kill/{wait}")
    print(f"sparkstorm submit: killed {old} to replace it (--force); waiting until it is gone",
          file=sys.stderr)
    deadline = clock() + (message_timeout if wait is None else wait) + GONE_GRACE_SECONDS
    while not client.name_allowed(name)["allowed"]:
        if clock() > deadline:
            msg = (f"--force: topology {old} was killed but is still listed after "
                   f"{deadline:.0f} s; nothing was submitted. See 'sparkstorm list', then "
                   "submit again")
            raise CliError(msg, code="SUBMIT_REPLACE_TIMEOUT")
        sleep(0.5)
    return old


__all__ = ["GONE_GRACE_SECONDS", "replace_running"]
