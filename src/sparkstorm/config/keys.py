"""Every configuration key sparkstorm knows, declared once with type, default and doc.

Storm's keys keep Storm's names and the defaults of Storm 2.x ``conf/defaults.yaml``, except
where sparkstorm binds loopback by default (``nimbus.host``, ``ui.host``). Keys specific to
sparkstorm are marked in their doc. Keys starting with ``spark.`` (passed to Spark) and
``pystorm.`` (read by pystorm components) are always allowed and are not declared here.

Example:
    >>> KEYS["topology.workers"].default
    1
    >>> KEYS["topology.workers"].env_var
    'SPARKSTORM_TOPOLOGY_WORKERS'
    >>> KEYS["topology.message.timeout.secs"].accepts(True)
    False
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

Types: TypeAlias = tuple[type, ...]
TypeSpec: TypeAlias = type | Types
"""A Python type, or a tuple of types any of which is accepted."""

ENV_PREFIX = "SPARKSTORM_"
"""Prefix of the environment variable that sets a declared key."""

PASS_THROUGH_PREFIXES = ("spark.", "pystorm.")
"""Undeclared keys with these prefixes are allowed and never warned about."""


@dataclass(frozen=True)
class ConfigKey:
    """One configuration key.

    Type rules: an ``int`` key rejects ``bool``; a ``float`` key also accepts ``int``; a
    ``bool`` key accepts only ``bool``; a key whose default is ``None`` (unset) accepts ``None``.

    Attributes:
        name: the dotted Storm-style key, e.g. ``"topology.workers"``.
        type: accepted Python type, or a tuple of accepted types.
        default: value when nothing sets the key; ``None`` means unset.
        doc: one-line meaning, shown in error messages.
        minimum: smallest allowed value of a numeric key, if bounded below.
        choices: the allowed values, if the key is an enumeration.
        secret: mask the value in messages (tokens, passwords).
    """

    name: str
    type: TypeSpec
    default: object
    doc: str
    minimum: float | None = None
    choices: tuple[object, ...] | None = None
    secret: bool = False

    @property
    def env_var(self) -> str:
        """Name of the environment variable that sets this key (``SPARKSTORM_A_B_C``)."""
        return ENV_PREFIX + self.name.upper().replace(".", "_")

    @property
    def types(self) -> Types:
        """The accepted types, with ``int`` added wherever ``float`` is accepted."""
        declared = self.type if isinstance(self.type, tuple) else (self.type,)
        return declared + (int,) if float in declared and int not in declared else declared

    @property
    def type_name(self) -> str:
        """Human-readable expected type, e.g. ``"int or null (unset)"``."""
        declared = self.type if isinstance(self.type, tuple) else (self.type,)
        names = [
            t.__name__ + (" (int accepted)" if t is float and int not in declared else "")
            for t in declared
        ]
        if self.default is None:
            names.append("null (unset)")
        return " or ".join(names)

    def accepts(self, value: object) -> bool:
        """Tell whether ``value`` has an acceptable type for this key (ranges not checked)."""
        if value is None:
            return self.default is None
        if isinstance(value, bool):
            return bool in self.types
        return isinstance(value, self.types)

    def show(self, value: object) -> str:
        """Render ``value`` for a message, masked when the key is secret."""
        return "'***'" if self.secret and value is not None else repr(value)


_NUM = (int, float)


MASK_PATTERNS = ("token", "passw", "secret", "credential", "private", r"api[._-]?key",
                 r"access[._-]?key", r"\bkey$", r"sasl\.jaas")
"""``ui.conf.mask.patterns``' default: tokens, passwords (``passwd`` too), secrets,
credentials, private and access keys, a key named ``key``, JAAS settings."""


def _declare(*keys: ConfigKey) -> dict[str, ConfigKey]:
    table: dict[str, ConfigKey] = {}
    for key in keys:
        if key.name in table:
            msg = f"config key {key.name!r} is declared twice in sparkstorm.config.keys"
            raise ValueError(msg)
        table[key.name] = key
    return table


_K = ConfigKey

KEYS: dict[str, ConfigKey] = _declare(
    # --- topology: identity and layout -------------------------------------------------------
    _K("topology.name", str, None, "topology name, set by the submitter"),
    _K("storm.id", str, None, "topology id '<name>-<n>-<epoch>', set by nimbus"),
    _K("topology.workers", int, 1, "number of worker processes", minimum=1),
    _K(
        "topology.tasks",
        int,
        None,
        "tasks per component that does not set its own (unset: its parallelism hint)",
        minimum=0,
    ),
    _K(
        "topology.max.task.parallelism",
        int,
        None,
        "cap on any component's parallelism (unset: no cap)",
        minimum=1,
    ),
    _K("topology.priority", int, 29, "scheduling priority; lower is more important"),
    # --- topology: reliability -----------------------------------------------------------------
    _K(
        "topology.acker.executors",
        int,
        None,
        "acker executors; unset: one per worker; 0 disables reliability (acked at emit)",
        minimum=0,
    ),
    _K(
        "topology.reliability",
        str,
        None,
        "sparkstorm: acking (tuple trees followed by ackers, Storm's way), checkpoint (no "
        "per-tuple acking: window-aligned checkpoints, a spout hears ack when the checkpoint "
        "covering its tuple commits and fail only for tuples a rollback discarded; "
        "checkpoints every topology.checkpoint.windows, 1 when that is 0) or none (acked at "
        "emit); unset: none when topology.acker.executors is 0, else acking",
        choices=("acking", "checkpoint", "none"),
    ),
    _K(
        "topology.message.timeout.secs",
        int,
        30,
        "a spout tuple tree not completed in this many seconds is failed back to the spout "
        "(sparkstorm: counted from the window that took the tuple, not from its emit)",
        minimum=1,
    ),
    _K(
        "topology.enable.message.timeouts",
        bool,
        True,
        "fail timed-out tuple trees; turn off only in tests",
    ),
    _K(
        "topology.max.spout.pending",
        int,
        None,
        "max un-acked reliable tuples per spout task (unset: unbounded); under "
        "topology.reliability checkpoint, tuples whose window has not ended",
        minimum=1,
    ),
    _K(
        "topology.tick.tuple.freq.secs",
        int,
        None,
        "send a tick tuple to a component every N seconds (unset: off)",
        minimum=1,
    ),
    _K(
        "topology.ras.acker.executors.per.worker",
        int,
        1,
        "acker executors per estimated worker under the resource-aware scheduler",
    ),
    # --- topology: multilang -------------------------------------------------------------------
    _K(
        "topology.subprocess.timeout.secs",
        int,
        None,
        "seconds a shell subprocess may stay silent before it is declared dead "
        "(unset: supervisor.worker.timeout.secs)",
        minimum=1,
    ),
    _K(
        "topology.multilang.serializer",
        str,
        "org.apache.storm.multilang.JsonSerializer",
        "wire serializer of shell components (msgpack: "
        "com.yelp.pyleus.serializer.MessagePackSerializer)",
    ),
    _K(
        "topology.multilang.log.handler",
        str,
        None,
        "class turning multilang log messages into log lines (unset: the default handler)",
    ),
    _K(
        "topology.multilang.resources.dir",
        str,
        None,
        "directory shell components' commands run in (unset: on a cluster the uploaded "
        "code's resources/ folder if any, else the current directory)",
    ),
    _K(
        "topology.code.python.paths",
        list,
        None,
        "sparkstorm: folders of the submitted code, relative to it, put on the worker's "
        "sys.path (sparkstorm submit sets src and topologies for a streamparse project)",
    ),
    _K(
        "topology.executor.python",
        str,
        None,
        "sparkstorm: interpreter of the executor processes, a path or a command on the PATH "
        "(unset: the driver's own); its environment must hold the executors' dependencies "
        "(msgpack, pyyaml, the components' own); the driver's source folders are passed on",
    ),
    _K(
        "topology.virtualenv.requirements",
        str,
        None,
        "sparkstorm: pip requirements (a requirements file's text) of the virtualenv the "
        "topology's workers and executors run in, built on each worker host before the "
        "worker starts and reused while unchanged; sparkstorm submit sets it from a "
        "streamparse project's virtualenvs/NAME.txt (unset: the host's own Python)",
    ),
    _K(
        "topology.virtualenv.name",
        str,
        None,
        "sparkstorm: folder name of the topology's virtualenv (streamparse's "
        "virtualenv_name; unset: the topology's name)",
    ),
    _K(
        "topology.virtualenv.root",
        str,
        None,
        "sparkstorm: folder of the virtualenvs on every worker host (streamparse's "
        "virtualenv_root; unset: <storm.local.dir>/supervisor/virtualenvs of the supervisor, "
        "which a relative path is taken from)",
    ),
    _K(
        "topology.virtualenv.flags",
        str,
        None,
        "sparkstorm: extra arguments of 'python -m venv' when the virtualenv is built "
        "(streamparse's virtualenv_flags, e.g. --system-site-packages)",
    ),
    _K(
        "topology.virtualenv.install",
        bool,
        True,
        "sparkstorm: build the virtualenv from topology.virtualenv.requirements "
        "(streamparse's install_virtualenv); false: run in the existing virtualenv "
        "<topology.virtualenv.root>/<name>, installed by hand",
    ),
    _K(
        "topology.virtualenv.install.timeout.secs",
        _NUM,
        900,
        "sparkstorm: longest a virtualenv's build (pip install) may take on a worker host "
        "before it counts as failed",
        minimum=1,
    ),
    _K(
        "topology.executor.log.dir",
        str,
        None,
        "sparkstorm: folder of the executors' logs executor-<n>.log (unset: the worker's "
        "temporary folder, removed at shutdown; sparkstorm run and cluster workers set it)",
    ),
    _K(
        "topology.multilang.transcript.dir",
        str,
        None,
        "if set, every byte exchanged with shell subprocesses is saved here (wire debugging)",
    ),
    _K(
        "topology.shellbolt.max.pending",
        int,
        100,
        "input tuples queued for one shell bolt before the executor blocks",
        minimum=1,
    ),
    # --- topology: debugging, stats, errors ----------------------------------------------------
    _K("topology.debug", bool, False, "log every emitted tuple"),
    _K("topology.stats.sample.rate", float, 0.05, "fraction of tuples sampled for statistics"),
    _K("topology.builtin.metrics.bucket.size.secs", int, 60, "metrics bucket length in seconds"),
    _K(
        "topology.error.throttle.interval.secs",
        int,
        10,
        "interval of the reported-error throttle, in seconds",
    ),
    _K(
        "topology.max.error.report.per.interval",
        int,
        5,
        "errors reported per component per throttle interval",
    ),
    _K("topology.eventlogger.executors", int, 0, "event loggers for UI debug sampling"),
    # --- topology: queues, batching, wait strategies -------------------------------------------
    _K(
        "topology.spout.wait.strategy",
        str,
        "org.apache.storm.policy.WaitStrategyProgressive",
        "what a spout executor does when nextTuple emitted nothing",
    ),
    _K(
        "topology.spout.wait.progressive.level1.count",
        int,
        0,
        "progressive spout wait: iterations of level 1",
    ),
    _K(
        "topology.spout.wait.progressive.level2.count",
        int,
        0,
        "progressive spout wait: iterations of level 2",
    ),
    _K(
        "topology.spout.wait.progressive.level3.sleep.millis",
        int,
        1,
        "progressive spout wait: sleep of level 3, in ms",
    ),
    _K(
        "topology.sleep.spout.wait.strategy.time.ms",
        int,
        1,
        "Storm 1.x sleep spout wait strategy: sleep in ms",
    ),
    _K(
        "topology.backpressure.enable",
        bool,
        None,
        "Storm 1.x backpressure switch; backpressure is always on in sparkstorm",
    ),
    _K(
        "topology.backpressure.wait.strategy",
        str,
        "org.apache.storm.policy.WaitStrategyProgressive",
        "what a producer does while its consumer is backpressured",
    ),
    _K("topology.backpressure.check.millis", int, 50, "backpressure re-check period in ms"),
    _K("topology.executor.receive.buffer.size", int, 32768, "per-executor input queue length"),
    _K("topology.producer.batch.size", int, 1, "outgoing tuples batched before a flush"),
    _K("topology.batch.flush.interval.millis", int, 1, "flush period of outgoing batches in ms"),
    _K("topology.transfer.buffer.size", int, 1000, "worker transfer queue length"),
    # --- topology: worker process, serialization, state ----------------------------------------
    _K(
        "topology.worker.childopts",
        (str, list),
        None,
        "extra JVM options for this topology's workers",
    ),
    _K("topology.environment", dict, None, "extra environment variables for workers"),
    _K("topology.fall.back.on.java.serialization", bool, False, "Kryo fallback to Java"),
    _K(
        "topology.skip.missing.kryo.registrations", bool, False, "ignore missing Kryo registrations"
    ),
    _K(
        "topology.state.checkpoint.interval.ms",
        int,
        1000,
        "checkpoint interval of stateful bolts in ms",
    ),
    # --- topology: windowed bolts (Storm's BaseWindowedBolt; set by WindowedBolt.spec) --------
    _K(
        "topology.bolts.window.length.count",
        int,
        None,
        "a windowed bolt's window length in tuples (unset: not count-based)",
        minimum=1,
    ),
    _K(
        "topology.bolts.window.length.duration.ms",
        int,
        None,
        "a windowed bolt's window length in ms (unset: not duration-based)",
        minimum=1,
    ),
    _K(
        "topology.bolts.sliding.interval.count",
        int,
        None,
        "a windowed bolt's sliding interval in tuples (unset: not count-based)",
        minimum=1,
    ),
    _K(
        "topology.bolts.sliding.interval.duration.ms",
        int,
        None,
        "a windowed bolt's sliding interval in ms (unset: not duration-based)",
        minimum=1,
    ),
    _K(
        "topology.bolts.tuple.timestamp.field.name",
        str,
        None,
        "input field holding a tuple's event time in ms (unset: processing time)",
    ),
    _K(
        "topology.bolts.tuple.timestamp.max.lag.ms",
        int,
        0,
        "event time: how far behind the newest timestamp the watermark stays, in ms",
        minimum=0,
    ),
    _K(
        "topology.bolts.watermark.event.interval.ms",
        int,
        1000,
        "event time: how often a windowed bolt computes a new watermark, in ms",
        minimum=1,
    ),
    _K(
        "topology.bolts.late.tuple.stream",
        str,
        None,
        "stream a windowed bolt emits late tuples on (unset: they are logged and acked)",
    ),
    # --- topology: checkpoints and state ---------------------------------------------------------
    _K(
        "topology.checkpoint.windows",
        int,
        0,
        "sparkstorm: checkpoint every N streaming windows (0: off, at-least-once replay)",
        minimum=0,
    ),
    _K(
        "topology.checkpoint.dir",
        str,
        None,
        "sparkstorm: where checkpoints go, a path or fsspec/pyarrow URI "
        "(unset: <storm.local.dir>/checkpoints)",
    ),
    _K(
        "topology.checkpoint.id",
        str,
        None,
        "sparkstorm: the name a spark-submitted topology keeps its checkpoints under in "
        "topology.checkpoint.dir; set, they are kept, the drain commits a last one, and an "
        "application started again with the same id resumes from it (unset: a one-off "
        "run's, removed when it stops)",
    ),
    _K(
        "topology.checkpoint.keep",
        int,
        2,
        "sparkstorm: committed checkpoints kept; a rollback whose newest one is corrupt falls "
        "back to the one before",
        minimum=1,
    ),
    _K(
        "topology.checkpoint.start.empty",
        bool,
        False,
        "sparkstorm: when committed checkpoints exist but none is usable, start from empty "
        "state (deleting them) instead of stopping with CHECKPOINT_UNUSABLE",
    ),
    _K(
        "topology.checkpoint.retention.secs",
        int,
        86400,
        "sparkstorm: how long after a topology is killed Nimbus's cleaner keeps its checkpoint "
        "folder",
        minimum=0,
    ),
    _K(
        "topology.rollback.backoff.initial.secs",
        _NUM,
        1,
        "sparkstorm: the third rollback in a row (each within "
        "topology.rollback.backoff.reset.secs of the replay before: the failure keeps "
        "coming back) replays after this wait, doubled with each further one (0: replay at "
        "once); the first two replay at once",
        minimum=0,
    ),
    _K(
        "topology.rollback.backoff.max.secs",
        _NUM,
        60,
        "sparkstorm: the longest wait of topology.rollback.backoff.initial.secs's doubling",
        minimum=0,
    ),
    _K(
        "topology.rollback.backoff.reset.secs",
        _NUM,
        60,
        "sparkstorm: a replay that runs this long without a rollback ends the run of "
        "rollbacks in a row (the next one replays at once)",
        minimum=0,
    ),
    _K(
        "topology.state.provider",
        str,
        "memory",
        "where StatefulBolt state lives: 'memory' (in the checkpoint) or 'redis' "
        "(Storm's provider class names are accepted too)",
    ),
    _K(
        "topology.state.provider.config",
        (str, dict),
        None,
        "the state provider's settings, a dict or Storm's JSON string, e.g. "
        "{'jedisPoolConfig': {'host': '127.0.0.1', 'port': 6379}}",
    ),
    _K("topology.trident.batch.emit.interval.millis", int, 500, "Trident batch interval in ms"),
    # --- topology: connectors (set by the connector bolts' spec) --------------------------------
    _K(
        "topology.connector",
        dict,
        None,
        "sparkstorm: a connector component's settings (Redis, SQL, FileBolt, FileSpout; its "
        "spec(...) sets them in the component's config; in a Flux file, set them in the "
        "component's config)",
    ),
    # --- topology: resource-aware scheduler ----------------------------------------------------
    _K(
        "topology.component.resources.onheap.memory.mb",
        float,
        128.0,
        "on-heap memory per component instance in MB",
    ),
    _K(
        "topology.component.resources.offheap.memory.mb",
        float,
        0.0,
        "off-heap memory per component instance in MB",
    ),
    _K(
        "topology.component.cpu.pcore.percent",
        float,
        10.0,
        "CPU per component instance (100 = one core)",
    ),
    _K("topology.worker.max.heap.size.mb", float, 768.0, "max heap of one worker in MB"),
    # --- topology: sparkstorm-specific ---------------------------------------------------------
    _K(
        "topology.window.ms",
        int,
        500,
        "sparkstorm: minimum length of one streaming window in ms (one Spark job per window)",
        minimum=1,
    ),
    _K(
        "topology.window.target.latency.ms",
        int,
        1000,
        "sparkstorm: complete latency the window size aims for: a window starts at the earliest "
        "target/4 ms after the last (longer when the load needs longer windows to keep up with "
        "each job's fixed cost) and each spout hands over what load asks, growing to "
        "topology.spout.buffer.max.size when saturated (0: off, fixed windows of "
        "topology.window.ms and topology.spout.buffer.size)",
        minimum=0,
    ),
    _K(
        "topology.window.overlap",
        bool,
        True,
        "sparkstorm: start window w+1's Spark job once window w's spout stage is done (with "
        "bolts chained to the spouts: once the spout executors served w, while those bolts "
        "still run), so two windows run at once (off with checkpoints under per-tuple "
        "acking, whose message timeouts a stalled window would start for the next one's "
        "tuples; on under topology.reliability checkpoint; off when Spark has fewer task "
        "slots than the widest stage plus one)",
    ),
    _K(
        "topology.window.verdicts.push",
        bool,
        True,
        "sparkstorm: send each spout executor the acker's acks and fails as soon as the "
        "driver has absorbed a window, instead of with the next window's spout stage (off "
        "while checkpoints are on: a checkpoint keeps the verdicts its spouts have not heard)",
    ),
    _K(
        "topology.batch.arrow.wire",
        bool,
        True,
        "sparkstorm: a BatchBolt sends the rows it emits to BatchBolt consumers as Arrow IPC "
        "columns with anchors per run of rows (needs pyarrow wherever those executors run); "
        "false: msgpack rows with an edge per row, as to per-tuple consumers",
    ),
    _K(
        "topology.window.chain",
        bool,
        True,
        "sparkstorm: run a bolt in its upstream's Spark task when its only inputs are that "
        "component's streams with local_or_shuffle, shuffle or none grouping and both have the "
        "same number of executors: executor i feeds the bolt's executor i without a Spark "
        "shuffle, so a window has fewer stages (false: one stage per DAG level)",
    ),
    _K(
        "topology.window.fuse",
        bool,
        True,
        "sparkstorm: on a local Spark master, run each window as one Spark task that calls "
        "every level's executors in turn (a level's executors at once) instead of one Spark "
        "stage per DAG level: the same calls without a shuffle through the JVM, whose "
        "stages and tasks cost more CPU per window than one host gains from them (false: "
        "one stage per level, as on a cluster)",
    ),
    _K(
        "topology.spout.buffer.size",
        int,
        20000,
        "sparkstorm: bound on tuples a spout executor buffers between windows (backpressure); "
        "with topology.window.target.latency.ms set, the window sizer's limit before it has "
        "learnt the load and the least it lets a saturated spout grow to",
        minimum=1,
    ),
    _K(
        "topology.spout.buffer.max.size",
        int,
        100000,
        "sparkstorm: with topology.window.target.latency.ms set, the most tuples a saturated "
        "spout executor's buffer (its window) grows to, so that each window's fixed Spark job "
        "cost is amortised: the sizer grows it until that cost is about 10 % of the job, up "
        "to this memory cap (a window's tuples are held by the spout, the executors and Spark "
        "at once; below topology.spout.buffer.size: that size)",
        minimum=1,
    ),
    _K(
        "topology.spout.buffer.max.bytes",
        int,
        6 * 1024 * 1024,
        "sparkstorm: with topology.window.target.latency.ms set, the most bytes of encoded "
        "tuples a saturated spout executor's window grows to (measured per window: its "
        "tuples' bytes on the wire over their count), whichever of this and "
        "topology.spout.buffer.max.size binds first; each window's bytes are held several "
        "times at once (the spout's reply and the one kept for retries, Spark's Python "
        "workers, the JVM's shuffle, the next executors), so large tuples must not grow "
        "windows to gigabytes; the default holds the word count benchmark's windows at "
        "~75,000 sentences of ~85 bytes, where the batch API peaked at 1.9 GiB of RSS (0: no "
        "byte cap; never below topology.spout.buffer.size)",
        minimum=0,
    ),
    _K(
        "topology.spout.pending.auto",
        bool,
        True,
        "sparkstorm: when topology.max.spout.pending is unset and "
        "topology.window.target.latency.ms is set, bound each spout executor's un-acked tuples "
        "by Little's law at its measured throughput x 0.9 x the target, so that a saturated "
        "spout keeps its complete latency near the target at the throughput windows of that "
        "size give (false: a saturated topology grows its windows for throughput and its "
        "latency grows with them, as Storm's with no max.spout.pending: several seconds)",
    ),
    _K(
        "topology.executor.start.timeout.secs",
        _NUM,
        60,
        "sparkstorm: seconds the worker waits for an executor process to start",
        minimum=0,
    ),
    _K(
        "topology.executor.answer.timeout.secs",
        _NUM,
        30,
        "sparkstorm: an executor that answers neither its window nor a liveness check for "
        "this many seconds (stopped, hung) is killed and restarted; its window's trees fail "
        "and replay while the other executors go on; also how long a window's task waits to "
        "learn the new address of an executor another worker moved or restarted",
        minimum=0.1,
    ),
    _K(
        "topology.executor.hosting",
        str,
        None,
        "sparkstorm: what hosts the executor processes: driver (the driver's own process), "
        "spark (long-running tasks of the topology's Spark application, one per share of "
        "topology.workers) or supervisor (workers in supervisor slots); unset: spark in an "
        "application started with spark-submit, supervisor for sparkstorm submit, driver "
        "for sparkstorm run",
        choices=("driver", "spark", "supervisor"),
    ),
    _K(
        "topology.executor.hosting.cpus",
        int,
        0,
        "sparkstorm: Spark task CPUs each hosting task holds for its executor processes so "
        "that Spark does not over-schedule the host (0: one per executor process of its "
        "share, at most spark.executor.cores less one window slot)",
        minimum=0,
    ),
    _K(
        "topology.executor.hosting.wait.secs",
        _NUM,
        30,
        "sparkstorm: how long the driver waits for topology.workers hosts with a live Spark "
        "executor before it places the hosting tasks on the hosts it has",
        minimum=0,
    ),
    _K(
        "topology.executor.hosting.heartbeat.secs",
        _NUM,
        1,
        "sparkstorm: seconds between two heartbeats of a hosting task and the driver's "
        "answers on their connection",
        minimum=0.05,
    ),
    _K(
        "topology.executor.hosting.timeout.secs",
        _NUM,
        30,
        "sparkstorm: a hosting task that hears nothing from its driver for this many "
        "seconds stops its executor processes; the driver gives up a share it has not "
        "heard from for this plus two heartbeats and starts it again elsewhere",
        minimum=0.1,
    ),
    _K(
        "topology.watchdog.stall.secs",
        _NUM,
        60,
        "sparkstorm: a driver that completes no window for this many seconds is stalled: its "
        "watchdog cancels the window jobs, then starts a new Spark application (a master "
        "that lost it) and rolls back, then stops the driver so its worker restarts, one "
        "remedy per such interval (at least topology.executor.answer.timeout.secs + 5); "
        "0: no watchdog",
        minimum=0,
    ),
    _K(
        "topology.tcp.handshake.timeout.secs",
        _NUM,
        5,
        "sparkstorm: a TCP connection to an executor, the hosting link or the endpoint "
        "lookup that has not sent the topology's token within this many seconds is closed, "
        "so idle callers hold no thread or slot before authentication",
        minimum=0.1,
    ),
    _K(
        "topology.tcp.max.connections",
        int,
        256,
        "sparkstorm: TCP connections an executor process, the hosting link or the endpoint "
        "lookup holds at once (authenticating and served); more are closed on accept and "
        "logged (rate-limited)",
        minimum=1,
    ),
    _K(
        "topology.tcp.tls",
        str,
        "auto",
        "sparkstorm: mutual TLS (the cluster's storm.tls.* material) on executor TCP and the "
        "driver's endpoint lookup; auto: on in the workers of a cluster with "
        "storm.tls.enabled, off in local mode and spark-submit",
        choices=("auto", "on", "off"),
    ),
    _K(
        "topology.max.components",
        int,
        256,
        "sparkstorm: most spouts and bolts a topology may declare, checked at submit (each "
        "runs at least one executor process, tens of MB each); Nimbus checks against its own "
        "value, not the submitter's",
        minimum=1,
    ),
    _K(
        "topology.max.executors",
        int,
        512,
        "sparkstorm: most executors (one process each) a topology may run in all, checked at "
        "submit; Nimbus checks against its own value, not the submitter's",
        minimum=1,
    ),
    _K(
        "topology.app.host",
        str,
        "",
        "sparkstorm: address a spark-submitted topology's driver serves its REST API and UI "
        "on ('': spark.driver.host, else this host's address; 127.0.0.1 on a local master)",
    ),
    _K(
        "topology.app.rest.port",
        int,
        0,
        "sparkstorm: port of the REST API a spark-submitted topology's driver serves (0: a "
        "free port, shown at start and in the Spark UI's environment)",
        minimum=0,
    ),
    _K(
        "topology.app.ui.port",
        int,
        0,
        "sparkstorm: port of the web UI a spark-submitted topology's driver serves (0: a "
        "free port, shown at start and in the Spark UI's environment; -1: no UI)",
        minimum=-1,
    ),
    _K(
        "topology.shutdown.timeout.secs",
        _NUM,
        10,
        "sparkstorm: bound in seconds on waiting for in-flight trees at clean shutdown",
        minimum=0,
    ),
    _K(
        "topology.stats.window.count",
        int,
        120,
        "sparkstorm: how many per-window statistics records are kept",
        minimum=1,
    ),
    _K(
        "topology.spark.conf",
        dict,
        {},
        "sparkstorm: Spark settings for the topology ({'spark.x': value})",
    ),
    # --- nimbus ----------------------------------------------------------------------------------
    _K("nimbus.host", str, "127.0.0.1", "host nimbus binds to and clients connect to"),
    _K("nimbus.port", int, 6627, "port of the nimbus API"),
    _K("nimbus.seeds", list, ["localhost"], "nimbus hosts (HA list)"),
    _K("nimbus.thrift.port", int, 6627, "Storm's Thrift API port"),
    _K(
        "nimbus.task.timeout.secs",
        int,
        30,
        "a task/worker silent this many seconds is considered dead and reassigned",
    ),
    _K("nimbus.task.launch.secs", int, 120, "nimbus.task.timeout.secs right after launch"),
    _K(
        "nimbus.supervisor.timeout.secs",
        int,
        60,
        "a supervisor silent this many seconds gets no new work",
    ),
    _K("nimbus.monitor.freq.secs", int, 10, "how often nimbus checks heartbeats and reassigns"),
    _K(
        "nimbus.inbox.jar.expiration.secs",
        int,
        3600,
        "seconds an uploaded topology package stays in the inbox before cleanup may delete it",
    ),
    _K(
        "nimbus.upload.max.bytes",
        int,
        268435456,
        "sparkstorm: largest topology code upload nimbus accepts, in bytes",
        minimum=1,
    ),
    _K(
        "nimbus.upload.max.unpacked.bytes",
        int,
        1073741824,
        "sparkstorm: largest total size a topology code upload may unpack to, in bytes "
        "(checked at upload finish and again by supervisors before unpacking)",
        minimum=1,
    ),
    _K(
        "nimbus.upload.max.files",
        int,
        20000,
        "sparkstorm: most files a topology code upload may hold (checked with the unpacked size)",
        minimum=1,
    ),
    _K(
        "nimbus.request.max.bytes",
        int,
        4194304,
        "sparkstorm: largest JSON request body nimbus reads, in bytes (uploads have "
        "nimbus.upload.max.bytes); checked against Content-Length before reading and while "
        "reading a body sent without one",
        minimum=1,
    ),
    _K("nimbus.cleanup.inbox.freq.secs", int, 600, "how often inbox cleanup runs, in seconds"),
    _K("nimbus.code.sync.freq.secs", int, 120, "HA code sync period between nimbuses"),
    _K("nimbus.file.copy.expiration.secs", int, 600, "upload/download session expiry"),
    _K("nimbus.reassign", bool, True, "reassign dead tasks (Storm 0.9; always on later)"),
    _K("nimbus.childopts", str, "-Xmx1024m", "JVM options of nimbus"),
    _K("scheduler.display.resource", bool, False, "UI shows resource columns"),
    # --- supervisor ------------------------------------------------------------------------------
    _K(
        "supervisor.slots.ports",
        list,
        [6700, 6701, 6702, 6703],
        "one worker per port; the number of ports is the number of slots",
    ),
    _K(
        "supervisor.max.executors",
        int,
        256,
        "sparkstorm: most executor processes one worker of a topology may bring to a "
        "supervisor; Nimbus refuses at submit a topology whose executors divided by "
        "topology.workers exceed it (its own value, not the submitter's)",
        minimum=1,
    ),
    _K(
        "supervisor.worker.timeout.secs",
        int,
        30,
        "a worker silent this many seconds is restarted; default multilang subprocess timeout",
    ),
    _K(
        "supervisor.worker.start.timeout.secs",
        int,
        120,
        "supervisor.worker.timeout.secs during worker start-up",
    ),
    _K(
        "supervisor.worker.shutdown.sleep.secs",
        int,
        3,
        "grace period in seconds before force-killing a worker; sparkstorm waits at least "
        "the worker's own shutdown bound (topology.shutdown.timeout.secs + "
        "worker.shutdown.close.secs) plus this",
    ),
    _K(
        "worker.shutdown.close.secs",
        _NUM,
        15,
        "sparkstorm: after draining in-flight trees, how long a stopping worker gives its "
        "executors and Spark to stop (its supervisor waits that long before SIGKILL)",
        minimum=0,
    ),
    _K(
        "supervisor.worker.restart.backoff.secs",
        float,
        5.0,
        "sparkstorm: wait before restarting a worker that died before running a window; "
        "doubles with each such failure in a row (see supervisor.worker.restart.backoff.max.secs)",
        minimum=0,
    ),
    _K(
        "supervisor.worker.restart.backoff.max.secs",
        float,
        300.0,
        "sparkstorm: longest wait before restarting a worker that keeps failing to start",
        minimum=0,
    ),
    _K(
        "supervisor.monitor.frequency.secs",
        int,
        3,
        "how often the supervisor checks its workers, in seconds",
    ),
    _K(
        "supervisor.heartbeat.frequency.secs",
        int,
        5,
        "supervisor heartbeat period to the cluster state, in seconds",
    ),
    _K("supervisor.enable", bool, True, "whether the supervisor launches workers"),
    _K("supervisor.memory.capacity.mb", float, 4096.0, "memory capacity in MB"),
    _K("supervisor.cpu.capacity", float, 400.0, "CPU capacity (100 = one core)"),
    _K("supervisor.childopts", str, "-Xmx256m", "JVM options of the supervisor"),
    # --- worker and task -------------------------------------------------------------------------
    _K("worker.heartbeat.frequency.secs", int, 1, "worker to supervisor heartbeat period"),
    _K(
        "worker.heartbeat.max.bytes",
        int,
        262144,
        "sparkstorm: largest worker heartbeat statistics stored, in bytes of JSON (ZooKeeper "
        "refuses nodes over about 1 MB); above it the optional parts are trimmed and logged",
        minimum=16384,
    ),
    _K(
        "worker.childopts",
        str,
        "-Xmx%HEAP-MEM%m -XX:+PrintGCDetails -Xloggc:artifacts/gc.log -XX:+PrintGCDateStamps "
        "-XX:+PrintGCTimeStamps -XX:+UseGCLogFileRotation -XX:NumberOfGCLogFiles=10 "
        "-XX:GCLogFileSize=1M -XX:+HeapDumpOnOutOfMemoryError -XX:HeapDumpPath=artifacts/heapdump",
        "JVM options of workers",
    ),
    _K("worker.heap.memory.mb", int, 768, "worker heap in MB (fills %HEAP-MEM%)"),
    _K("worker.profiler.enabled", bool, False, "enables the UI profiling actions"),
    _K("worker.max.timeout.secs", int, 600, "upper bound for per-topology worker timeouts"),
    _K("task.heartbeat.frequency.secs", int, 3, "how often a task heartbeats its status"),
    _K(
        "task.refresh.poll.secs",
        int,
        10,
        "how often a worker refreshes connections to other workers",
    ),
    _K("executor.metrics.frequency.secs", int, 60, "executor metrics/heartbeat period (RPC mode)"),
    _K("num.stat.buckets", int, 20, "statistics buckets"),
    # --- cluster-wide / storage ------------------------------------------------------------------
    _K(
        "storm.state.store",
        str,
        "embedded",
        "sparkstorm: cluster state backend",
        choices=("embedded", "zookeeper"),
    ),
    _K(
        "storm.state.embedded.poll.ms",
        int,
        100,
        "sparkstorm: how often the embedded state store polls for changes to fire watches, in ms",
        minimum=1,
    ),
    _K(
        "storm.state.embedded.busy.timeout.ms",
        int,
        10000,
        "sparkstorm: how long an embedded state store write waits for another process's lock, "
        "in ms",
        minimum=0,
    ),
    _K(
        "storm.cluster.token",
        str,
        None,
        "sparkstorm: shared secret the cluster's daemons and clients present "
        "(unset: nimbus generates one into <storm.local.dir>/nimbus/token)",
        secret=True,
    ),
    _K(
        "storm.tls.enabled",
        bool,
        True,
        "sparkstorm: TLS with the cluster CA on every channel between a cluster's hosts "
        "(Nimbus's API, the UI, logviewers, executor TCP; daemons present client "
        "certificates); false only on a trusted network",
    ),
    _K(
        "storm.tls.dir",
        str,
        None,
        "sparkstorm: folder of the cluster's TLS material made by 'sparkstorm tls init' "
        "(ca.pem, node.pem, node-key.pem; unset: <storm.local.dir>/tls, made by Nimbus "
        "when missing)",
    ),
    _K("storm.tls.ca.file", str, None,
       "sparkstorm: the cluster CA certificate (PEM) every TLS peer must be signed by "
       "(unset: <storm.tls.dir>/ca.pem)"),
    _K("storm.tls.cert.file", str, None,
       "sparkstorm: this host's certificate (PEM), served and presented as client "
       "certificate (unset: <storm.tls.dir>/node.pem)"),
    _K("storm.tls.key.file", str, None,
       "sparkstorm: the private key of storm.tls.cert.file, mode 0600 "
       "(unset: <storm.tls.dir>/node-key.pem)"),
    _K("storm.spark.secret.file", str, None,
       "sparkstorm: file (mode 0600) of the secret a standalone Spark master and its "
       "workers share (spark.authenticate.secret); a cluster's workers authenticate and "
       "encrypt Spark's network with it (unset: <storm.tls.dir>/spark-secret)"),
    _K(
        "nimbus.tls.client.auth",
        str,
        "required",
        "sparkstorm: whether Nimbus's API asks every caller for a certificate signed by the "
        "cluster CA ('required') or lets callers with the token alone in ('optional')",
        choices=("required", "optional"),
    ),
    _K("storm.zookeeper.servers", list, ["localhost"], "ZooKeeper ensemble hosts"),
    _K("storm.zookeeper.port", int, 2181, "ZooKeeper port"),
    _K("storm.zookeeper.root", str, "/storm", "root znode for all Storm state"),
    _K("storm.zookeeper.session.timeout", int, 20000, "ZooKeeper session timeout in ms"),
    _K("storm.zookeeper.connection.timeout", int, 15000, "ZooKeeper connection timeout in ms"),
    _K("storm.zookeeper.retry.times", int, 5, "ZooKeeper operation retries"),
    _K("storm.zookeeper.retry.interval", int, 1000, "first ZooKeeper retry interval in ms"),
    _K(
        "storm.zookeeper.retry.intervalceiling.millis",
        int,
        30000,
        "longest ZooKeeper retry interval in ms",
    ),
    _K("storm.local.dir", str, "storm-local", "local state directory of every daemon"),
    _K(
        "storm.local.hostname",
        str,
        None,
        "the address this host's daemons report and executors listen on for TCP callers "
        "(unset: loopback with a local Spark master, else spark.driver.host or the host "
        "name's address)",
    ),
    _K(
        "storm.cluster.mode",
        str,
        "distributed",
        "'local' in local mode (tuple arity checks on)",
        choices=("distributed", "local"),
    ),
    _K(
        "storm.messaging.transport",
        str,
        "org.apache.storm.messaging.netty.Context",
        "inter-worker transport",
    ),
    _K("storm.log.dir", str, None, "log directory (unset: the installation's logs/)"),
    _K(
        "transactional.zookeeper.root",
        str,
        "/transactional",
        "root znode of legacy transactional topologies",
    ),
    _K(
        "dev.zookeeper.path",
        str,
        None,
        "data path of 'sparkstorm dev-zookeeper' (unset: <storm.local.dir>/dev-zookeeper; "
        "Storm's default is /tmp/dev-storm-zookeeper)",
    ),
    _K(
        "dev.zookeeper.bind.address",
        str,
        "127.0.0.1",
        "sparkstorm: the address 'sparkstorm dev-zookeeper' listens on (loopback by default; "
        "a test host's address lets the daemons of other hosts reach it)",
    ),
    # --- UI, logviewer, DRPC ---------------------------------------------------------------------
    _K("ui.host", str, "127.0.0.1", "host the UI binds to (loopback by default)"),
    _K("ui.port", int, 8080, "UI port"),
    _K(
        "ui.actions.enabled",
        bool,
        True,
        "enable activate/deactivate/rebalance/kill buttons and POST endpoints",
    ),
    _K(
        "ui.conf.mask.patterns",
        list,
        list(MASK_PATTERNS),
        "regular expressions (case-insensitive): a conf key in which one is found, at any "
        "depth of a nested value, is shown masked by the REST API and UI; a URL's password "
        "is masked in any value",
    ),
    _K(
        "ui.allowed.hosts",
        list,
        [],
        "host names the REST API and UI answer under besides IP addresses, localhost and "
        "this machine's names (the Host header is checked against them: DNS rebinding)",
    ),
    _K("ui.disable.spout.lag.monitoring", bool, True, "hide spout lag in the UI"),
    _K(
        "logviewer.port",
        int,
        0,
        "port of each supervisor's logviewer (0: any free port; Nimbus finds it in the "
        "supervisor's record and forwards the UI's log reads to it)",
        minimum=0,
    ),
    _K(
        "logviewer.cleanup.age.mins",
        _NUM,
        10080,
        "logs of a worker that is gone are removed this many minutes after their last write",
        minimum=0,
    ),
    _K(
        "logviewer.max.per.worker.logs.size.mb",
        _NUM,
        2048,
        "most MB of logs kept per gone worker; its oldest files are removed first",
        minimum=0,
    ),
    _K(
        "logviewer.max.sum.worker.logs.size.mb",
        _NUM,
        4096,
        "most MB of all workers' logs on a supervisor's host, live and gone; the oldest "
        "files of gone workers are removed first (a live worker's never)",
        minimum=0,
    ),
    _K(
        "logviewer.cleanup.interval.secs",
        _NUM,
        10800,
        "how often a supervisor applies the logviewer's retention limits, in seconds",
        minimum=1,
    ),
    _K("drpc.port", int, 3772, "DRPC port"),
    _K("drpc.invocations.port", int, 3773, "DRPC invocations port"),
    _K("drpc.http.port", int, 3774, "DRPC HTTP port"),
    _K("drpc.request.timeout.secs", int, 600, "DRPC request timeout in seconds"),
)
"""Every declared key by name."""


def is_pass_through(name: str) -> bool:
    """Tell whether an undeclared key is allowed as is (``spark.*`` or ``pystorm.*``).

    Args:
        name: a configuration key.

    Returns:
        True when the key starts with one of :data:`PASS_THROUGH_PREFIXES`.
    """
    return name.startswith(PASS_THROUGH_PREFIXES)
