"""``ShellSpout`` and ``ShellBolt``: spouts and bolts written in any language.

The executor creates one instance per task; ``initialize`` starts the task's subprocess
and does the multilang handshake. Settings come from the component spec's ``extra``
(written by ``.spec()``), falling back to class attributes and the conf:

=================  ==================================================================
``command``        argv list, e.g. ``["node", "split.js"]`` (required)
``cwd``            working directory; relative to ``topology.multilang.resources.dir``
``env``            environment overrides (``PATH`` is appended to, others replace)
``serializer``     ``json`` or ``msgpack`` (default ``topology.multilang.serializer``)
``transcript``     path prefix for a byte-exact transcript of stdin/stdout
                   (default ``topology.multilang.transcript.dir``/<component>-<task>)
``metrics``        shell metrics ``{name: "count" | "assignable"}``
``activate``       send ``activate``/``deactivate`` to spouts (default true)
=================  ==================================================================

Conf keys: ``topology.multilang.resources.dir`` (where commands run; unset: the uploaded
code's ``resources/`` folder on a cluster when there is one, else the current directory),
``topology.subprocess.timeout.secs`` (else ``supervisor.worker.timeout.secs``, 30),
``topology.shellbolt.max.pending`` (100).

Any protocol fault kills the child, fails the bolt's in-flight inputs, and raises a
:class:`MultilangError`; the executor reports it as the component's last error and
restarts the task with a fresh subprocess.
A direct emit to a task that does not subscribe is not a fault: as in Storm, the tuple is
dropped (routed to no task, so a reliable spout tuple is acked back to the child).

Example:
    >>> from sparkstorm import Topology
    >>> class Words(Topology):
    ...     sentences = ShellSpout.spec(command=["node", "sentences.js"], outputs=["sentence"])
    ...     split = ShellBolt.spec(command=["python3", "split.py"], outputs=["word"],
    ...                            inputs=[sentences], par=2)
    >>> Words.split.extra["command"]
    ['python3', 'split.py']
"""

from __future__ import annotations

from sparkstorm.multilang.shell_base import (
    RESOURCES_DIR_KEY,
    TRANSCRIPT_DIR_KEY,
    ShellComponent,
    shell_extra,
    subprocess_timeout,
    with_code_resources,
)
from sparkstorm.multilang.shell_bolt import ShellBolt
from sparkstorm.multilang.shell_spout import ShellSpout

__all__ = ["RESOURCES_DIR_KEY", "TRANSCRIPT_DIR_KEY", "ShellBolt", "ShellComponent",
           "ShellSpout", "shell_extra", "subprocess_timeout", "with_code_resources"]
