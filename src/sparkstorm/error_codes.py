"""Every error code sparkstorm raises, registered once, with what it means and the usual fix.

Every :class:`~sparkstorm.errors.SparkstormError` carries a stable UPPER_SNAKE ``code``;
tests and tools match on the code, never on the prose. :data:`ERROR_CODES` is the one list
of them: ``tests/unit/test_error_codes.py`` checks that every code raised under
``src/sparkstorm`` (a ``code=`` keyword, a subpackage's ``CODES`` table, a class's
``default_code``) is registered here exactly once, that every code registered here is
raised somewhere, and that ``docs/errors.md``, generated from this table by ``make docs``,
is current.

To add a code: raise it with its message (``raise TopologyError(msg, code="NEW_CODE")``),
add ``"NEW_CODE": "<what happened>; <how to fix it>",`` here in alphabetical order, then run
``make docs``.

Example:
    >>> ERROR_CODES["NO_SPOUT"]
    'a topology declares no spout; declare one with MySpout.spec()'
    >>> list(ERROR_CODES) == sorted(ERROR_CODES)
    True
"""

from __future__ import annotations

ERROR_CODES: dict[str, str] = {
    "AMBIGUOUS_TOPOLOGY": (
        "a topology file defines several Topology subclasses; pick one with --topology"),
    "APP_PORT_UNAVAILABLE": (
        "a spark-submitted topology's driver cannot listen on the address or port set for its "
        "REST API or UI; set topology.app.rest.port / topology.app.ui.port to a free port (0: "
        "any) or topology.app.host to an address of the driver's host"),
    "AUTH_TOKEN_INVALID": (
        "a call to Nimbus carried a cluster token that is not Nimbus's; send the token of "
        "storm.cluster.token or <storm.local.dir>/nimbus/token"),
    "AUTH_TOKEN_MISSING": (
        "a mutating call to Nimbus (or the UI) came without the cluster token; send "
        "'Authorization: Bearer <token>'"),
    "BAD_EXECUTOR_OPTION": (
        "rebalance -e was not COMPONENT=N with N a positive integer; e.g. -e split=4"),
    "BAD_REQUEST": (
        "a REST request's fields do not have the types of the call's schema; see GET /docs "
        "on Nimbus"),
    "BASIC_BOLT_AUTO_DISABLED": (
        "a BasicBolt subclass turns auto_ack, auto_fail or auto_anchor off; subclass Bolt to "
        "manage acking yourself"),
    "BATCH_BOLT_AUTO_DISABLED": (
        "a BatchBolt subclass turns auto_ack, auto_fail or auto_anchor off; a batch is always "
        "acked or failed whole: subclass Bolt to ack tuples yourself"),
    "BATCH_BOLT_PER_TUPLE_HOST": (
        "a per-tuple host (multilang child, ComponentHarness) was given a BatchBolt; run it on "
        "the engine (LocalCluster or a submitted topology)"),
    "BATCH_COLUMNS_MISMATCH": (
        "emit_batch's columns are not exactly the stream's declared fields; select or rename "
        "columns before emitting"),
    "BATCH_COLUMNS_TYPE": (
        "emit_batch got neither a pyarrow RecordBatch or Table nor a dict of field -> list"),
    "BATCH_COLUMN_LENGTHS": (
        "emit_batch's columns differ in length; give every field one value per tuple"),
    "BATCH_COLUMN_NOT_ARROW": (
        "a field's values have no single Arrow type on a stream with BatchBolt consumers; emit "
        "one type per field, or set batch_format = 'lists'"),
    "BATCH_DIRECT_STREAM": (
        "a batch was emitted on a direct stream; batches are routed by groupings, so emit per "
        "tuple with direct_task"),
    "BATCH_EMIT_OUTSIDE_BATCH": (
        "emit_batch was called outside process_batch; emit batches from process_batch (use "
        "emit in process_tick)"),
    "BATCH_FORMAT_INVALID": (
        "a BatchBolt's batch_format is not one of the known formats ('arrow', 'lists')"),
    "BATCH_PARENTS_MISMATCH": (
        "emit_batch's parents do not give one input row index per emitted row"),
    "BATCH_SPOUT_PER_TUPLE_HOST": (
        "a per-tuple host (multilang child, ComponentHarness) called a BatchSpout; run it on "
        "the engine"),
    "BATCH_SPOUT_SCHEMA_CHANGED": (
        "a BatchSpout's batch has Arrow types that differ from the stream's first batch and "
        "cannot be cast safely; emit one type per field"),
    "BOLT_WITHOUT_INPUTS": (
        "a bolt subscribes to no stream; pass inputs=[...] to its .spec()"),
    "CHECKPOINT_CORRUPT": (
        "a checkpoint part or task snapshot cannot be decoded; that checkpoint is not used"),
    "CHECKPOINT_PART_MISSING": (
        "a part of a committed checkpoint cannot be read from topology.checkpoint.dir; check "
        "that every worker host sees that folder"),
    "CHECKPOINT_UNPICKLABLE": (
        "a component's attribute cannot be pickled into a checkpoint; list it in the class's "
        "transient tuple and re-create it in initialize(), or define __getstate__"),
    "CHECKPOINT_UNUSABLE": (
        "committed checkpoints exist but none is usable (corrupt or missing parts, or state "
        "kept outside them that an older one cannot match), so the topology stops instead of "
        "starting from empty state; restore the folder the error names, or set "
        "topology.checkpoint.start.empty: true to start empty deliberately"),
    "CHECKPOINT_WRITE_FAILED": (
        "a checkpoint part cannot be written; check that topology.checkpoint.dir is writable "
        "and has room"),
    "CLUSTER_TOKEN_MISSING": (
        "a daemon needs the cluster token, but storm.cluster.token is unset and Nimbus's token "
        "file is absent; start Nimbus on the same storm.local.dir first, or set the key"),
    "COMPONENTS_ABOVE_LIMIT": (
        "a topology declares more components than topology.max.components allows (Nimbus: "
        "its own value); merge components, or raise the key"),
    "COMPONENT_CLASS_NOT_FOUND": (
        "a component's class cannot be imported from its 'module:Class' path; define "
        "components at module level in an importable module"),
    "COMPONENT_ID_WITH_SLASH": (
        "a component id contains '/' or '\\', which the REST API's and UI's component paths "
        "cannot carry; rename the component"),
    "COMPONENT_NOT_FOUND": (
        "no component of that name in the topology (monitor -m, the REST API, the UI)"),
    "CONFIG_BAD_FILE": (
        "a config file is not a YAML mapping of config keys"),
    "CONFIG_BAD_OVERRIDE": (
        "a -c/-o command-line override is not key=value"),
    "CONFIG_OUT_OF_RANGE": (
        "a config value is below the key's minimum or not one of its choices; see "
        "docs/configuration.md"),
    "CONFIG_WRONG_TYPE": (
        "a config value has the wrong type for its key; see docs/configuration.md"),
    "DEV_ZOOKEEPER_EXITED": (
        "sparkstorm dev-zookeeper's server exited or did not answer at start; is the port "
        "(storm.zookeeper.port) taken or dev.zookeeper.bind.address not this host's?"),
    "DEV_ZOOKEEPER_JAR_MISSING": (
        "sparkstorm dev-zookeeper found no ZooKeeper installation; apt-get install zookeeper "
        "(make services)"),
    "DEV_ZOOKEEPER_JAVA_MISSING": (
        "sparkstorm dev-zookeeper found no java; install a Java runtime"),
    "DIRECT_EMIT_ON_NON_DIRECT_STREAM": (
        "an emit named a direct_task on a stream not declared direct; declare "
        "Stream(..., direct=True)"),
    "DIRECT_EMIT_TO_NON_SUBSCRIBER": (
        "a direct emit named a task that does not subscribe to the stream with a direct "
        "grouping"),
    "DIRECT_GROUPING_ON_NON_DIRECT_STREAM": (
        "a bolt uses Grouping.DIRECT on a stream not declared direct; declare "
        "Stream(..., direct=True)"),
    "DUPLICATE_COMPONENT_ID": (
        "two components of a topology have the same id; rename one with name=..."),
    "DUPLICATE_FIELD_NAME": (
        "a stream declares the same field twice"),
    "DUPLICATE_STREAM_ID": (
        "a component declares the same output stream twice"),
    "ENVIRONMENT_NIMBUS_INVALID": (
        "a config.json environment's nimbus is not HOST or HOST:PORT"),
    "ENVIRONMENT_NIMBUS_UNSET": (
        "the config.json environment chosen with -e has no nimbus; set \"nimbus\": "
        "\"HOST:PORT\" there, or pass -c nimbus.host=... -c nimbus.port=..."),
    "ENVIRONMENT_WITHOUT_PROJECT": (
        "-e was given outside a streamparse project (no config.json); run from the project's "
        "root"),
    "ENV_ARCHIVE_NOT_FOUND": (
        "sparkstorm spark-submit --archive names no file; make one with sparkstorm pack-env "
        "(or venv-pack, conda-pack), or pass --pack-env"),
    "EXECUTORS_ABOVE_LIMIT": (
        "a topology's executors (the sum of its par) exceed topology.max.executors (Nimbus: "
        "its own value); lower par, or raise the key"),
    "EXECUTOR_PYTHON_NOT_FOUND": (
        "topology.executor.python names no interpreter on this host; install it on every "
        "worker host, or unset the key"),
    "EXECUTOR_PYTHON_UNUSABLE": (
        "topology.executor.python cannot import sparkstorm's executor (msgpack, pyyaml, "
        "sparkstorm, Python >= 3.11)"),
    "EXECUTOR_REQUEST_FAILED": (
        "an executor process answered a window's request with an error; see the executor's "
        "log"),
    "EXECUTOR_START_FAILED": (
        "executor processes did not start, or did not report where they answer, within "
        "topology.executor.start.timeout.secs; the error shows the executor's log"),
    "EXECUTOR_UNREACHABLE": (
        "an executor could not be reached and no new address came within "
        "topology.executor.answer.timeout.secs; its trees fail and replay"),
    "EXECUTOR_UNRESPONSIVE": (
        "an executor answered neither its window nor a ping within "
        "topology.executor.answer.timeout.secs (stopped or hung); it is killed and restarted"),
    "FILE_CONFIG_INVALID": (
        "a FileBolt or FileSpout setting is missing or wrong; see docs/connectors.md (Files) "
        "for the settings"),
    "FILE_READ_FAILED": (
        "a FileSpout could not read the file it had locked (it vanished or the filesystem "
        "failed); the file was skipped and its lock released, and the spout goes on with the "
        "next file; check the source folder and its filesystem"),
    "FILE_SOURCE_UNAVAILABLE": (
        "a FileSpout could not list its source folder or write a lock (the filesystem is "
        "down or unreachable, or the source folder is missing); it emits nothing and tries "
        "again at its next scan; check the folders and their filesystem"),
    "FILE_TUPLE_UNMAPPABLE": (
        "a FileBolt's tuple lacks a field its 'fields' setting names; the tuple was failed "
        "(dropped under checkpoint reliability); set fields to fields the stream declares"),
    "FILE_UNPARSABLE": (
        "a FileSpout's file has a line that cannot be parsed in the spout's format (not "
        "UTF-8, not a JSON object, a CSV row with another number of columns); the file was "
        "moved to the bad folder and the spout goes on with the next file; fix the file and "
        "put it back in the source folder"),
    "FILE_WRITE_FAILED": (
        "a FileBolt could not write, sync or close its file (the folder is gone, full or not "
        "writable); the tuples not yet synced were failed so that their spouts replay them, "
        "and the next tuple opens a new file; check the folder and its filesystem"),
    "FLUX_CLASS_NOT_LOADABLE": (
        "a Flux className is a Java class, a custom grouping or a Python path that cannot be "
        "imported"),
    "FLUX_FILE_UNREADABLE": (
        "the Flux file cannot be read"),
    "FLUX_FILTER_FILE_UNREADABLE": (
        "the --filter properties file cannot be read"),
    "FLUX_INCLUDE_NOT_FOUND": (
        "a Flux include names a file that does not exist"),
    "FLUX_INVALID_VALUE": (
        "a Flux key has a value of the wrong type or out of range"),
    "FLUX_UNKNOWN_COMPONENT": (
        "a Flux stream names a spout or bolt id the file does not declare"),
    "FLUX_UNKNOWN_KEY": (
        "a Flux mapping has a key Flux does not define"),
    "FLUX_UNRESOLVED_PROPERTY": (
        "a ${...} in a Flux file has no value in --filter or --env-filter (Flux only warns)"),
    "FLUX_UNSUPPORTED": (
        "a Flux feature sparkstorm does not run (components, topologySource, workerHooks, "
        "constructor arguments on a Python class, classpath includes)"),
    "FLUX_WRONG_KIND": (
        "a spout is listed under bolts, or a bolt under spouts"),
    "FLUX_YAML_INVALID": (
        "the Flux file is not valid YAML, or not a mapping"),
    "FORBIDDEN": (
        "the UI refused an action: no UI session, a wrong CSRF token or a foreign Origin; "
        "reload the page"),
    "GRAPHVIZ_FAILED": (
        "visualize: Graphviz's dot failed or did not finish; write -f dot and render it "
        "elsewhere"),
    "GRAPHVIZ_NOT_INSTALLED": (
        "visualize needs Graphviz's dot for that format; apt-get install graphviz, or use -f "
        "dot"),
    "HARNESS_WRONG_KIND": (
        "a SpoutHarness was given a bolt, or a BoltHarness a spout"),
    "HOSTING_JOB_ENDED": (
        "the Spark job that hosts a spark-submitted topology's executor processes ended "
        "(Spark gave up on a hosting task, or every share lost the driver); read the hosting "
        "tasks' errors in the Spark UI (job group sparkstorm-executor-hosting)"),
    "HOSTING_LINK_BAD_MESSAGE": (
        "a hosting task and its driver exchanged a frame that is none of the hosting link's "
        "messages; run the same sparkstorm version on the driver and in the shipped "
        "environment"),
    "HOSTING_NEEDS_SPARK_SUBMIT": (
        "a topology submitted to Nimbus sets topology.executor.hosting to 'spark', which only "
        "an application deployed with spark-submit has; deploy it with sparkstorm "
        "spark-submit, or leave the key unset"),
    "HOSTING_NEEDS_SUPERVISORS": (
        "topology.executor.hosting is supervisor in an application started with spark-submit, "
        "where no supervisor runs; use spark or driver, or deploy with sparkstorm submit"),
    "HOSTING_NO_SPARK_EXECUTORS": (
        "no Spark executor registered with a spark-submitted topology's application in time, "
        "so nothing can host its executor processes; give the cluster room for the "
        "application's executors, or raise topology.executor.hosting.wait.secs"),
    "HOSTING_NO_WINDOW_SLOTS": (
        "the application's Spark executors (or its local master) have no more cores than the "
        "hosting tasks and a window task need, so windows would get none; raise "
        "spark.executor.cores (local[N] with N above topology.workers)"),
    "HOST_NOT_ALLOWED": (
        "the REST API or UI was reached under a host name it does not know (the Host header: "
        "a DNS rebinding page looks like this); use an IP address, localhost or this "
        "machine's name, or add the name to ui.allowed.hosts"),
    "INTERNAL_ERROR": (
        "Nimbus failed on a request (a bug); its log has the traceback"),
    "INVALID_COMPONENT_CONFIG": (
        "a component's config is not a dict of config keys to values"),
    "INVALID_GROUPING": (
        "a grouping is not a Grouping, or its fields or type are invalid"),
    "INVALID_INPUT": (
        "a bolt's input is not a component spec, a stream reference or a component id"),
    "INVALID_TOPOLOGY_NAME": (
        "a topology name is not a non-empty printable string, short enough, without the "
        "characters Storm forbids; e.g. 'word-count'"),
    "INVALID_TOPOLOGY_SPEC": (
        "a submitted topology spec does not have the shape of TopologySpec.to_dict(); submit "
        "with sparkstorm submit"),
    "JAVA_COMPONENT_UNSUPPORTED": (
        "JavaBolt and JavaSpout cannot run; port the component to Python or run a program as "
        "a shell component"),
    "KAFKA_BROKER_ERROR": (
        "a KafkaSpout could not list partitions, read committed offsets or fetch, or a "
        "KafkaBolt's producer lost its brokers (down or unreachable); it goes on and "
        "retries; check bootstrap_servers and the brokers"),
    "KAFKA_COMMIT_FAILED": (
        "a KafkaSpout could not commit its offsets; they are committed at the next period; "
        "check the brokers and the group's rights"),
    "KAFKA_CONFIG_INVALID": (
        "a KafkaSpoutConfig, RecordTranslator or KafkaBolt.spec setting is missing or wrong; "
        "see docs/connectors.md for the settings"),
    "KAFKA_DELIVERY_FAILED": (
        "a KafkaBolt's record was not delivered (the producer gave up after its "
        "message.timeout.ms, or refused it); the tuple was failed so that its spout replays "
        "it; check the brokers and the producer properties"),
    "KAFKA_RECORD_UNTRANSLATABLE": (
        "a KafkaSpout record's key or value did not decode, or the translator's func raised; "
        "the record is skipped and counted as processed; fix the producer or the translator"),
    "KAFKA_TUPLE_UNMAPPABLE": (
        "a KafkaBolt's tuple lacks the key, message or topic field it reads (or has no "
        "topic and no default is set); the tuple was failed (dropped under checkpoint "
        "reliability); set key_field, message_field, topic_field or topic"),
    "LOGS_NOT_SENT": (
        "tail: no log came from the topology's workers in time; check that they run and what "
        "--pattern picks"),
    "LOG_PATTERN_INVALID": (
        "tail or remove_logs: --pattern is not a regular expression"),
    "MONITOR_BAD_OPTION": (
        "monitor: -i or --count is not a positive number"),
    "MONITOR_COMPONENT_REQUIRED": (
        "monitor: the topology has several spouts; choose the component with -m"),
    "MONITOR_UNKNOWN_STREAM": (
        "monitor: the component has no such output stream; pass one of its streams with -s"),
    "MULTILANG_HANDSHAKE_FAILED": (
        "a shell component did not answer the handshake with {\"pid\": N}; is it a multilang "
        "component?"),
    "MULTILANG_HANDSHAKE_TIMEOUT": (
        "a shell component did not answer the handshake within "
        "topology.subprocess.timeout.secs"),
    "MULTILANG_HEARTBEAT_TIMEOUT": (
        "a shell component neither read its input nor sent anything within "
        "topology.subprocess.timeout.secs (stuck)"),
    "MULTILANG_INVALID_CONFIG": (
        "a multilang setting (serializer, ...) has a value sparkstorm does not know"),
    "MULTILANG_LOG_HANDLER_INVALID": (
        "the multilang log handler class cannot be imported or built; name a 'module:Class' "
        "whose constructor takes no arguments"),
    "MULTILANG_MALFORMED_MESSAGE": (
        "a shell component wrote something that is not a protocol message to stdout (a print? "
        "log to stderr or through the protocol)"),
    "MULTILANG_NON_FINITE_NUMBER": (
        "a NaN or Infinity cannot be sent as JSON; emit None or a string, or use the msgpack "
        "serializer"),
    "MULTILANG_SPAWN_FAILED": (
        "a shell component's command cannot be started; check the command, PATH and "
        "topology.multilang.resources.dir"),
    "MULTILANG_SUBPROCESS_EXITED": (
        "a shell component's process exited; its stderr is in the error"),
    "MULTILANG_SYNC_TIMEOUT": (
        "a shell spout did not answer next, ack or fail with sync within "
        "topology.subprocess.timeout.secs"),
    "MULTILANG_UNDECLARED_STREAM": (
        "a shell component emitted on a stream its spec does not declare"),
    "MULTILANG_UNENCODABLE_VALUE": (
        "a value cannot be encoded by the multilang serializer (JSON: no bytes or sets; "
        "msgpack: integers below 2**64)"),
    "MULTILANG_UNEXPECTED_COMMAND": (
        "a shell component sent a command its kind may not send (a spout acking, ...)"),
    "MULTILANG_UNKNOWN_TUPLE_ID": (
        "a shell bolt acked or failed an id that is not one of its in-flight inputs; ack or "
        "fail each input exactly once"),
    "NIMBUS_UNAVAILABLE": (
        "Nimbus cannot be reached; is sparkstorm nimbus running, at nimbus.host:nimbus.port?"),
    "NIMBUS_UNREACHABLE": (
        "the UI server could not reach Nimbus for an API call"),
    "NON_DIRECT_EMIT_ON_DIRECT_STREAM": (
        "an emit on a direct stream named no direct_task; pass direct_task=<task id>"),
    "NON_DIRECT_GROUPING_ON_DIRECT_STREAM": (
        "a bolt subscribes to a direct stream with another grouping than Grouping.DIRECT"),
    "NOT_A_TOPOLOGY": (
        "what was given as a topology declares no components"),
    "NOT_FOUND": (
        "no such REST route or resource"),
    "NO_SPOUT": (
        "a topology declares no spout; declare one with MySpout.spec()"),
    "NO_SUCH_UPLOAD": (
        "no finished upload of that id in Nimbus's inbox; upload the code again (uploads "
        "expire)"),
    "NO_TOPOLOGY_GIVEN": (
        "sparkstorm run got no file and is not in a streamparse project's root"),
    "NO_TOPOLOGY_IN_FILE": (
        "the file defines no Topology subclass (of the name --topology gives)"),
    "PACK_ENV_FAILED": (
        "sparkstorm pack-env could not build the environment (venv, pip); fix what pip says: "
        "a requirement that does not exist, no network to the package index"),
    "PARALLELISM_ABOVE_TASKS": (
        "a component has more executors than tasks; lower par (or rebalance -e) or raise "
        "num_tasks"),
    "PARALLELISM_BELOW_ONE": (
        "a component's par is not an integer of at least 1"),
    "PAR_ENVIRONMENT_UNKNOWN": (
        "par is given per environment but has no entry for the one being run; add it, run "
        "with -e NAME, or set SPARKSTORM_ENVIRONMENT"),
    "PROJECT_CONFIG_INVALID": (
        "a streamparse project's config.json cannot be read as JSON of streamparse's layout"),
    "PROJECT_ENVIRONMENT_UNKNOWN": (
        "config.json has no such environment, or several and -e picked none"),
    "PROJECT_TOPOLOGY_AMBIGUOUS": (
        "the project's topologies/ holds several topologies; name one with -n NAME"),
    "PROJECT_TOPOLOGY_NOT_FOUND": (
        "the project has no topologies/NAME.py (or no topology at all)"),
    "QUICKSTART_FOLDER_EXISTS": (
        "sparkstorm quickstart NAME: the folder exists; pick a new name"),
    "READ_TUPLE_IN_PROCESS": (
        "an in-process bolt called read_tuple(); sparkstorm hands process() its tuples"),
    "REBALANCE_INVALID": (
        "a rebalance asks for a worker or executor count that is not a positive integer"),
    "REBALANCE_NOT_IN_PLACE": (
        "a topology on several workers got new executor counts without Nimbus's assignment; "
        "rebalance through Nimbus (sparkstorm rebalance NAME -e component=N)"),
    "REBALANCE_UNKNOWN_COMPONENT": (
        "rebalance -e names a component the topology does not have"),
    "REDIS_COMMAND_REJECTED": (
        "Redis refused a Redis bolt's command for one tuple (e.g. WRONGTYPE: the key holds "
        "another data type); the tuple went to the bolt's errors stream and was acked; check "
        "data_type and the keys"),
    "REDIS_CONFIG_INVALID": (
        "a RedisStoreBolt, RedisLookupBolt or RedisFilterBolt setting is missing or wrong; "
        "see docs/connectors.md for the settings"),
    "REDIS_TUPLE_UNMAPPABLE": (
        "a Redis bolt's tuple lacks the key or value field it reads, or holds a key or value "
        "Redis cannot store (None, a float key, a non-numeric score); the tuple went to the "
        "bolt's errors stream and was acked; fix the upstream bolt or the field settings"),
    "REDIS_UNAVAILABLE": (
        "a Redis bolt's pipeline for a window failed (Redis down, unreachable or too slow); "
        "the window's tuples were failed so that their spouts replay them, and the next "
        "window tries again; check the server at the bolt's url"),
    "RELIABLE_SPOUT_WITHOUT_ID": (
        "a ReliableSpout emitted without tup_id; it replays by id, so every emit needs one"),
    "REMOVE_LOGS_FAILED": (
        "remove_logs could not delete a log file; run it as the workers' user or remove the "
        "file by hand"),
    "REMOVE_LOGS_RELATIVE_DIR": (
        "remove_logs: the topology's topology.executor.log.dir is relative to each worker's "
        "folder; remove the files there or give the key an absolute path"),
    "REMOVE_LOGS_REMOTE_HOSTS": (
        "remove_logs: logs on other hosts were not removed (no ssh); run the printed command "
        "on each host"),
    "REQUEST_TOO_LARGE": (
        "a request body is over nimbus.request.max.bytes (or an upload chunk over "
        "nimbus.upload.max.bytes), or its Content-Length is not a number"),
    "RESERVED_COMPONENT_ID": (
        "a component id starts with '__', reserved for system components (__acker, __system)"),
    "SPARK_SECRET_MISSING": (
        "spark.authenticate is on for a standalone Spark master but the shared secret file "
        "is missing or empty; run sparkstorm tls init (or tls spark-secret), give the master "
        "the same secret, or set spark.authenticate: false"),
    "SPARK_SUBMIT_NOT_FOUND": (
        "sparkstorm spark-submit found no spark-submit; install Spark or PySpark, set "
        "SPARK_HOME, or pass --spark-submit PATH"),
    "SQL_CONFIG_INVALID": (
        "a SqlInsertBolt or SqlLookupBolt setting is missing or wrong; see "
        "docs/connectors.md for the settings"),
    "SQL_ROW_REJECTED": (
        "the database refused one tuple's row (a constraint, a value of the wrong type); "
        "the tuple went to the bolt's errors stream and was acked; fix the data or the table"),
    "SQL_STATEMENT_FAILED": (
        "a SQL bolt's statement failed for a reason other than one row's data (a missing "
        "table or column, no permission); the window's tuples were failed so that their "
        "spouts replay them; fix the table, the query or the rights"),
    "SQL_TUPLE_UNMAPPABLE": (
        "a SQL bolt's tuple lacks a field that a column or query parameter reads, or has a "
        "value the driver cannot bind (a dict or set; a list except on PostgreSQL); the "
        "tuple went to the bolt's errors stream and was acked; fix the upstream bolt or the "
        "columns / query"),
    "SQL_UNAVAILABLE": (
        "a SQL bolt could not reach its database for a window (down, unreachable, the "
        "connection dropped); the window's tuples were failed so that their spouts replay "
        "them, and the next window tries again; check the server at the bolt's url"),
    "STATE_BACKEND_UNAVAILABLE": (
        "a stateful bolt's Redis state failed; check that Redis runs where "
        "topology.state.provider.config points"),
    "STATE_BAD_PATH": (
        "a state-store path is not absolute, ends in '/' or has an empty, '.' or '..' part"),
    "STATE_BAD_VERSION": (
        "a conditional state-store write named a version the node no longer has (another "
        "writer won)"),
    "STATE_CORRUPT_NODE": (
        "a state-store node holds bytes the cluster state cannot decode; the node is left "
        "untouched"),
    "STATE_EPHEMERAL_PARENT": (
        "a state-store create under an ephemeral node (ephemeral nodes have no children)"),
    "STATE_ERROR": (
        "the state store (ZooKeeper) failed in a way no other STATE_ code names"),
    "STATE_NODE_EXISTS": (
        "a state-store create found a node at the path"),
    "STATE_NOT_EMPTY": (
        "a non-recursive state-store delete of a node with children"),
    "STATE_NOT_PREPARED": (
        "a stateful bolt's state was committed without being prepared (checkpoint protocol "
        "broken)"),
    "STATE_NO_NODE": (
        "a state-store node (or the parent of a new one) does not exist"),
    "STATE_PROVIDER_UNKNOWN": (
        "topology.state.provider names no known provider; use memory or redis"),
    "STATE_STORE_CLOSED": (
        "the embedded state store was used after it was closed"),
    "STATE_STORE_CORRUPT": (
        "the embedded state store's SQLite file is damaged or of a newer schema; run the newer "
        "sparkstorm or point storm.local.dir elsewhere"),
    "STATE_UNAVAILABLE": (
        "the state store cannot be reached (ZooKeeper down, SQLite file locked too long); "
        "re-read before retrying a write"),
    "SUBMIT_REPLACE_TIMEOUT": (
        "submit --force: the topology it killed was still listed after its wait; nothing "
        "was submitted (see sparkstorm list, then submit again)"),
    "SUPERVISOR_EXECUTORS_ABOVE_LIMIT": (
        "each worker of the topology would bring a supervisor more executors than Nimbus's "
        "supervisor.max.executors allows; raise topology.workers, lower par, or raise the key"),
    "SUPERVISOR_NOT_FOUND": (
        "no live supervisor of that id or host"),
    "TASKS_ABOVE_LIMIT": (
        "a component asks for more tasks than the per-component limit; lower num_tasks"),
    "TASKS_BELOW_ONE": (
        "a component's num_tasks is not an integer of at least 1"),
    "TLS_MATERIAL_EXISTS": (
        "sparkstorm tls init was given a folder that already holds TLS material; remove it or "
        "use what is there"),
    "TLS_MATERIAL_INVALID": (
        "the TLS certificate or key that storm.tls.* names does not load (not PEM, the key "
        "is not the certificate's, unreadable); make the material again with sparkstorm tls "
        "init, or name a matching storm.tls.cert.file and storm.tls.key.file"),
    "TLS_MATERIAL_MISSING": (
        "storm.tls.enabled is true but the CA, certificate or key is missing; run sparkstorm "
        "tls init and point storm.tls.dir at its folder, or turn storm.tls.enabled off"),
    "TOPOLOGY_ALREADY_ALIVE": (
        "a topology of that name is alive; kill it first or submit under another --name"),
    "TOPOLOGY_BEING_KILLED": (
        "the topology is being killed; it cannot be activated, deactivated or rebalanced"),
    "TOPOLOGY_BEING_REBALANCED": (
        "the topology is being rebalanced; wait until it is ACTIVE or INACTIVE again"),
    "TOPOLOGY_FILE_IMPORT_FAILED": (
        "importing the topology file raised; fix it or install what it imports"),
    "TOPOLOGY_FILE_NOT_FOUND": (
        "the topology file does not exist"),
    "TOPOLOGY_FILE_SYNTAX_ERROR": (
        "the topology file has a syntax error"),
    "TOPOLOGY_NAME_REQUIRED": (
        "the command needs a topology name; pass -n NAME or run from a streamparse project's "
        "root"),
    "TOPOLOGY_NOT_FOUND": (
        "no live topology of that name or id"),
    "TOPOLOGY_SHUTDOWN_TIMEOUT": (
        "LocalCluster.kill_topology's wait ended before the topology stopped; call it again to "
        "wait longer"),
    "TOPOLOGY_STALLED": (
        "the driver completed no window for topology.watchdog.stall.secs after each of the "
        "watchdog's remedies (cancelling the window jobs, a new Spark application) and "
        "stopped so that its worker starts again; see the worker's log for why windows did "
        "not complete (Spark master, executors, a hung component)"),
    "TUPLE_ARITY_MISMATCH": (
        "an emit's value count differs from the stream's declared fields"),
    "TUPLE_VALUE_UNENCODABLE": (
        "a tuple value cannot travel (not None, bool, 64-bit int, float, str, bytes, or lists, "
        "tuples and dicts of them); its tree fails, the rest of the window goes on"),
    "UNDECLARED_STREAM": (
        "a component emitted on a stream it does not declare; add it to outputs"),
    "UNKNOWN_GROUPING_FIELD": (
        "a fields grouping names a field the stream does not declare"),
    "UNKNOWN_SOURCE_COMPONENT": (
        "a bolt subscribes to a component that is not declared in the topology"),
    "UNKNOWN_SOURCE_STREAM": (
        "a bolt subscribes to a stream its source does not declare"),
    "UNKNOWN_WINDOW": (
        "a statistics window (?window=) is not 600, 10800, 86400 or :all-time"),
    "UNSUPPORTED_TOPOLOGY_FILE": (
        "sparkstorm run or submit got a file that is neither Python (.py) nor Flux (.yaml)"),
    "UPLOAD_ALREADY_FINISHED": (
        "a chunk was sent to an upload already finished; start a new upload"),
    "UPLOAD_CHECKSUM_MISMATCH": (
        "an upload's sha256 is not the one the client announced; it was dropped: upload again"),
    "UPLOAD_CORRUPT_ZIP": (
        "an upload is not a readable zip archive"),
    "UPLOAD_TOO_LARGE": (
        "an upload is over nimbus.upload.max.bytes; leave data out or raise the key on Nimbus"),
    "UPLOAD_TOO_MANY_FILES": (
        "an upload holds more than nimbus.upload.max.files files"),
    "UPLOAD_UNPACKED_TOO_LARGE": (
        "an upload would unpack to more than nimbus.upload.max.unpacked.bytes"),
    "UPLOAD_UNSAFE_PATH": (
        "an upload has a member outside the code folder (absolute or '..'); use relative paths"),
    "VIRTUALENV_INSTALL_FAILED": (
        "the topology's virtualenv could not be built on a worker host (venv or pip failed or "
        "timed out); the worker is FAILING and retries after the restart back-off"),
    "VIRTUALENV_NOT_FOUND": (
        "topology.virtualenv.install is false and the virtualenv is not on this host"),
    "VIRTUALENV_UNUSABLE": (
        "the virtualenv's python cannot import sparkstorm's worker"),
    "VISUALIZE_BAD_FORMAT": (
        "visualize -f names a format it does not write"),
    "WINDOW_BAD_OPTION": (
        "a windowed bolt's length, slide, lag or watermark interval is invalid"),
    "WINDOW_EXCEEDS_MAX_SPOUT_PENDING": (
        "a count window (length + slide) exceeds topology.max.spout.pending; the spouts would "
        "stop before it fills"),
    "WINDOW_EXCEEDS_MESSAGE_TIMEOUT": (
        "a window's duration (length + slide) exceeds topology.message.timeout.secs; its "
        "tuples would time out first"),
    "WINDOW_TIMESTAMP_MISSING": (
        "a windowed bolt in event time got a tuple without an int timestamp (ms) in its "
        "timestamp field"),
    "WORKER_NOT_ASSIGNED": (
        "the topology has no worker of that id now"),
}
"""Every error code, sorted: code -> what it means and, where one helps, the fix."""

__all__ = ["ERROR_CODES"]
