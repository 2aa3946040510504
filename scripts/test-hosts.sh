#!/usr/bin/env bash
# Test hosts on one machine: three network namespaces on a bridge, for tests and demos of a
# topology across hosts. Needs root (ip netns, veth, mounts).
#
#   scripts/test-hosts.sh up            hosts A, B, C (10.77.0.1-3) on bridge ssbr0
#   scripts/test-hosts.sh spark         Spark standalone master on A, a worker on B and on C
#   scripts/test-hosts.sh cluster       ZooKeeper and Nimbus on A, a supervisor on B and on C
#                                       (start 'spark' first: the topologies' spark.master)
#   scripts/test-hosts.sh control-plane ZooKeeper and Nimbus on A again (after kill-host A)
#   scripts/test-hosts.sh kill-host C   SIGKILL every process on host C (a lost machine)
#   scripts/test-hosts.sh exec A CMD..  run CMD on host A (its network, hostname and /tmp)
#   scripts/test-hosts.sh spark-master  only the master on A (add workers with spark-worker)
#   scripts/test-hosts.sh spark-worker B [CPU]  (another) Spark worker on B, pinned to CPU
#   scripts/test-hosts.sh status        what runs
#   scripts/test-hosts.sh down          stop everything started here, remove the hosts
#
# Each host has its own address, hostname (hostA...) and a private tmpfs /tmp, so no host
# sees another's Unix sockets or temporary files, as on real machines; the rest of the file
# system (the project, its .venv) is shared, and so is $TEST_HOSTS_DIR (default
# /tmp/sparkstorm-hosts, seen as the same path inside every host) for logs and results.
# Traffic goes only to the namespaces' addresses. Every wait is bounded.
# TEST_HOSTS_CPUS="B=0 C=1" pins each host's Spark worker (and so its executors, which
# inherit the affinity) to those CPUs with taskset: a host with one core, for benchmarks.
#
# Spark's own network is authenticated and encrypted: 'spark' makes the cluster's material
# ($TEST_HOSTS_DIR/tls, its spark-secret included) and a spark-defaults.conf (0600) with
# spark.authenticate, that secret and spark.network.crypto.enabled in
# $TEST_HOSTS_DIR/spark-conf, which the master, the workers and every command run by 'exec'
# read (SPARK_CONF_DIR): Spark clients of the hosts are configured as on a real cluster. The
# master's REST submission server (6066) stays off. sparkstorm's daemons do not get that
# folder: their workers authenticate with storm.tls.dir's spark-secret by themselves.
#
# The cluster's daemons read $TEST_HOSTS_DIR/conf/<host>.yaml (written by 'cluster'), with
# the lines of the file named by $TEST_HOSTS_CONF (YAML, optional) added to each: tests set
# short timeouts there. Each host's storm.local.dir is /tmp/storm-local, private to it.
set -euo pipefail

PROJECT=${PROJECT:-$(cd "$(dirname "$0")/.." && pwd)}
SHARED=${TEST_HOSTS_DIR:-/tmp/sparkstorm-hosts}
BRIDGE=${TEST_HOSTS_BRIDGE:-ssbr0}
PREFIX=${TEST_HOSTS_PREFIX:-ss}
SUBNET=${TEST_HOSTS_SUBNET:-10.77.0}
PYTHON=${PYTHON:-$PROJECT/.venv/bin/python}
[ -x "$PYTHON" ] || PYTHON=$(command -v python3)
export PYSPARK_PYTHON=$PYTHON PYSPARK_DRIVER_PYTHON=$PYTHON
HOSTS=(A B C)
# Spark workers remove the work folders of applications that ended (spark-work/app-*: their
# executors' logs and files), looking every minute, a minute after the folder last changed
SPARK_WORKER_OPTS="${SPARK_WORKER_OPTS:-} -Dspark.worker.cleanup.enabled=true \
-Dspark.worker.cleanup.interval=${TEST_HOSTS_CLEANUP_SECS:-60} \
-Dspark.worker.cleanup.appDataTtl=${TEST_HOSTS_CLEANUP_SECS:-60}"
export SPARK_WORKER_OPTS
declare -A IP=([A]=$SUBNET.1 [B]=$SUBNET.2 [C]=$SUBNET.3)
# Spark's conf folder of the hosts (see above), once 'spark' made it
SPARK_CONF=""
[ -s "$SHARED/spark-conf/spark-defaults.conf" ] && SPARK_CONF="$SHARED/spark-conf"

die() { echo "test-hosts: $*" >&2; exit 1; }
anchor() { cat "$SHARED/anchor.$1" 2>/dev/null || die "host $1 is not up (run: $0 up)"; }

# run a command on host $1: its network, mount (private /tmp) and UTS namespaces
run_in() {
  local host=$1; shift
  nsenter -t "$(anchor "$host")" -m -u -n --wd="$PWD" -- \
    env SPARK_LOCAL_IP="${IP[$host]}" SPARKSTORM_TEST_HOST="$host" \
    ${SPARK_CONF:+SPARK_CONF_DIR="$SPARK_CONF"} "$@"
}

is_host() { [ "$(run_in "$1" hostname 2>/dev/null)" = "host$1" ]; }

wait_for() {  # wait_for SECONDS DESCRIPTION COMMAND...: poll COMMAND until it succeeds
  local seconds=$1 what=$2; shift 2
  for _ in $(seq $((seconds * 5))); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
  die "gave up after ${seconds}s waiting for $what"
}

up() {
  [ "$(id -u)" = 0 ] || die "needs root (ip netns, veth and mounts)"
  command -v ip >/dev/null && command -v nsenter >/dev/null || die "needs iproute2 and util-linux"
  ip link show "$BRIDGE" >/dev/null 2>&1 && die "already up (run: $0 down)"
  mkdir -p "$SHARED"
  : > "$SHARED/hosts"
  for h in "${HOSTS[@]}"; do echo "${IP[$h]} host$h" >> "$SHARED/hosts"; done
  echo "127.0.0.1 localhost" >> "$SHARED/hosts"
  # what the hosts must still see under their private /tmp (paths without spaces)
  KEEP="$SHARED"
  for path in "$PROJECT" "$(dirname "$(dirname "$PYTHON")")"; do
    case "$path" in /tmp/*) KEEP="$KEEP $path" ;; esac
  done
  ip link add "$BRIDGE" type bridge
  ip link set "$BRIDGE" up
  for h in "${HOSTS[@]}"; do
    ip netns add "$PREFIX$h"
    ip link add "${PREFIX}v$h" type veth peer name eth0 netns "$PREFIX$h"
    ip link set "${PREFIX}v$h" master "$BRIDGE" up
    ip -n "$PREFIX$h" addr add "${IP[$h]}/24" dev eth0
    ip -n "$PREFIX$h" link set lo up
    ip -n "$PREFIX$h" link set eth0 up
    # an anchor process holds the host's mount and UTS namespaces: hostname, a private
    # /tmp (with the shared folder, and the project and its Python when they live under
    # /tmp, bound back into it at their paths), its own /etc/hosts
    ip netns exec "$PREFIX$h" unshare -m -u --propagation private sh -c "
      set -e
      hostname host$h
      mount -t tmpfs tmpfs /mnt
      i=0
      for keep in $KEEP; do mkdir -p /mnt/\$i; mount --bind \$keep /mnt/\$i; i=\$((i+1)); done
      mount -t tmpfs -o size=4g tmpfs /tmp
      i=0
      for keep in $KEEP; do mkdir -p \$keep; mount --move /mnt/\$i \$keep; i=\$((i+1)); done
      mount --bind '$SHARED/hosts' /etc/hosts
      exec sleep infinity" </dev/null >/dev/null 2>&1 &
    echo $! > "$SHARED/anchor.$h"
  done
  for h in "${HOSTS[@]}"; do wait_for 10 "host $h" is_host "$h"; done
  echo "test hosts up: A=${IP[A]} B=${IP[B]} C=${IP[C]} (shared folder $SHARED)"

}

# the cluster's TLS material, once, for every host's address; shared: the same path on each.
# Its spark-secret is the standalone Spark cluster's shared secret.
make_material() {
  local python=$PROJECT/.venv/bin/python  # $PYTHON may be a bare one (the hosts' workers')
  [ -x "$python" ] || python=$PYTHON
  [ -s "$SHARED/tls/ca.pem" ] || PYTHONPATH="$PROJECT/src${PYTHONPATH:+:$PYTHONPATH}" \
    "$python" -m sparkstorm.cli.main tls init --dir "$SHARED/tls" \
    --host "${IP[A]}" --host "${IP[B]}" --host "${IP[C]}" >/dev/null
  # material a run before the secret existed made
  [ -s "$SHARED/tls/spark-secret" ] || PYTHONPATH="$PROJECT/src${PYTHONPATH:+:$PYTHONPATH}" \
    "$python" -m sparkstorm.cli.main tls spark-secret --dir "$SHARED/tls" >/dev/null
}

# Spark's conf on every host: authentication with the shared secret, encryption, no REST
# submission server; 0600, as it holds the secret
spark_conf() {
  make_material
  mkdir -p "$SHARED/spark-conf"
  ( umask 077
    {
      echo "spark.authenticate true"
      echo "spark.authenticate.secret $(cat "$SHARED/tls/spark-secret")"
      echo "spark.network.crypto.enabled true"
      echo "spark.master.rest.enabled false"
    } > "$SHARED/spark-conf/spark-defaults.conf" )
  SPARK_CONF="$SHARED/spark-conf"
}

spark() {
  spark_conf
  SPARK_HOME=${SPARK_HOME:-$("$PYTHON" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))')}
  export SPARK_HOME
  run_in A setsid "$SPARK_HOME/bin/spark-class" org.apache.spark.deploy.master.Master \
    --host "${IP[A]}" --port 7077 --webui-port 8080 >"$SHARED/spark-master.log" 2>&1 </dev/null &
  for h in B C; do
    run_in "$h" setsid "$SPARK_HOME/bin/spark-class" org.apache.spark.deploy.worker.Worker \
      --host "${IP[$h]}" --cores "${TEST_HOSTS_CORES:-1}" --memory 2g \
      --work-dir /tmp/spark-work "spark://${IP[A]}:7077" >"$SHARED/spark-worker$h.log" 2>&1 </dev/null &
  done
  registered() { [ "$(grep -c 'Registering worker' "$SHARED/spark-master.log")" -ge 2 ]; }
  wait_for 180 "two Spark workers registered with the master" registered
  echo "spark://${IP[A]}:7077 with workers on B and C"
}

# the taskset prefix for host $1 from TEST_HOSTS_CPUS ("B=0 C=1"), or nothing
cpu_pin() {
  local pair
  for pair in ${TEST_HOSTS_CPUS:-}; do
    [ "${pair%%=*}" = "$1" ] && { echo "taskset -c ${pair#*=}"; return; }
  done
}

spark_master() {
  spark_conf
  SPARK_HOME=${SPARK_HOME:-$("$PYTHON" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))')}
  export SPARK_HOME
  run_in A setsid "$SPARK_HOME/bin/spark-class" org.apache.spark.deploy.master.Master \
    --host "${IP[A]}" --port 7077 --webui-port 8080 >"$SHARED/spark-master.log" 2>&1 </dev/null &
  wait_for 120 "the Spark master on A" grep -q 'I have been elected leader' "$SHARED/spark-master.log"
  echo "spark://${IP[A]}:7077"
}

# one Spark worker on host $1 (pinned by TEST_HOSTS_CPUS or to CPU $2), registered with A's master
spark_worker() {
  local host=$1 pin
  [ -n "${2:-}" ] && TEST_HOSTS_CPUS="$host=$2"
  pin=$(cpu_pin "$host")
  SPARK_HOME=${SPARK_HOME:-$("$PYTHON" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))')}
  export SPARK_HOME
  local before
  before=$(grep -c 'Registering worker' "$SHARED/spark-master.log" 2>/dev/null || true)
  # shellcheck disable=SC2086 # $pin is a command prefix or nothing
  run_in "$host" setsid $pin "$SPARK_HOME/bin/spark-class" org.apache.spark.deploy.worker.Worker \
    --host "${IP[$host]}" --cores "${TEST_HOSTS_CORES:-1}" --memory 2g \
    --work-dir /tmp/spark-work "spark://${IP[A]}:7077" >>"$SHARED/spark-worker$host.log" 2>&1 </dev/null &
  one_more() { [ "$(grep -c 'Registering worker' "$SHARED/spark-master.log")" -gt "${before:-0}" ]; }
  wait_for 180 "a Spark worker on $host registered with the master" one_more
  echo "Spark worker on $host ${pin:+($pin)}"
}

# --- the control plane: ZooKeeper and Nimbus on A, a supervisor on B and on C ---------------
ZK_PORT=${TEST_HOSTS_ZK_PORT:-2181}
NIMBUS_PORT=${TEST_HOSTS_NIMBUS_PORT:-6627}

sparkstorm_on() {  # sparkstorm_on HOST NAME ARGS...: a sparkstorm daemon on HOST, in the background
  local host=$1 name=$2; shift 2
  run_in "$host" setsid env -u SPARK_CONF_DIR SPARKSTORM_CONF_FILE="$SHARED/conf/$host.yaml" \
    PYTHONPATH="$PROJECT/src${PYTHONPATH:+:$PYTHONPATH}" \
    "$PYTHON" -m sparkstorm.cli.main "$@" >"$SHARED/$name.log" 2>&1 </dev/null &
}

write_cluster_conf() {  # one sparkstorm.yaml per host: where A's daemons are, the host's address
  mkdir -p "$SHARED/conf"
  [ -s "$SHARED/conf/token" ] || "$PYTHON" -c 'import secrets; print(secrets.token_hex(16))' \
    > "$SHARED/conf/token"
  make_material
  for h in "${HOSTS[@]}"; do
    {
      echo "storm.state.store: zookeeper"
      echo "storm.zookeeper.servers: [${IP[A]}]"
      echo "storm.zookeeper.port: $ZK_PORT"
      echo "dev.zookeeper.bind.address: ${IP[A]}"
      echo "nimbus.host: ${IP[A]}"
      echo "nimbus.port: $NIMBUS_PORT"
      echo "storm.cluster.token: $(cat "$SHARED/conf/token")"
      echo "storm.local.dir: /tmp/storm-local"
      echo "storm.tls.dir: $SHARED/tls"
      echo "storm.local.hostname: ${IP[$h]}"
      echo "spark.master: spark://${IP[A]}:7077"
      [ -z "${TEST_HOSTS_CONF:-}" ] || cat "$TEST_HOSTS_CONF"
    } > "$SHARED/conf/$h.yaml"
  done
}

# srvr names the mode only once the server serves (ruok answers while it still loads)
zookeeper_answers() { run_in A "$PYTHON" -c "
from sparkstorm.cluster.store.devzookeeper import serving
raise SystemExit(0 if serving($ZK_PORT, '${IP[A]}') else 1)"; }
nimbus_get() {  # nimbus_get PATH CHECK: Nimbus's answer (over TLS as the conf says) passes CHECK
  run_in A env SPARKSTORM_CONF_FILE="$SHARED/conf/A.yaml" \
    PYTHONPATH="$PROJECT/src${PYTHONPATH:+:$PYTHONPATH}" "$PYTHON" -c "
import sys
from sparkstorm.cluster.nimbus.client import NimbusClient
from sparkstorm.config import load_config
answer = NimbusClient.from_conf(load_config(), timeout=2).call('GET', '$1')
sys.exit(0 if $2 else 1)" 2>/dev/null; }
nimbus_answers() { nimbus_get /api/v1/cluster/summary True; }
supervisors_registered() { nimbus_get /api/v1/supervisor/summary \
  "len(answer['supervisors']) >= 2"; }

cluster() {
  write_cluster_conf
  sparkstorm_on A zookeeper dev-zookeeper
  wait_for 60 "ZooKeeper on ${IP[A]}:$ZK_PORT" zookeeper_answers
  sparkstorm_on A nimbus -v nimbus
  wait_for 60 "Nimbus on ${IP[A]}:$NIMBUS_PORT" nimbus_answers
  for h in B C; do sparkstorm_on "$h" "supervisor$h" -v supervisor; done
  wait_for 60 "two supervisors registered with Nimbus" supervisors_registered
  echo "ZooKeeper ${IP[A]}:$ZK_PORT, Nimbus ${IP[A]}:$NIMBUS_PORT, supervisors on B and C"
}

control_plane() {  # A's daemons again, on the conf and data 'cluster' left (host A came back)
  [ -s "$SHARED/conf/A.yaml" ] || die "no cluster conf (run: $0 cluster)"
  sparkstorm_on A zookeeper dev-zookeeper
  wait_for 60 "ZooKeeper on ${IP[A]}:$ZK_PORT" zookeeper_answers
  sparkstorm_on A nimbus -v nimbus
  wait_for 60 "Nimbus on ${IP[A]}:$NIMBUS_PORT" nimbus_answers
  echo "ZooKeeper ${IP[A]}:$ZK_PORT, Nimbus ${IP[A]}:$NIMBUS_PORT"
}

kill_host() {  # every process on the host but its anchor (which keeps it there for 'down')
  local host=$1 anchor_pid
  anchor_pid=$(anchor "$host")
  for pid in $(ip netns pids "$PREFIX$host"); do
    [ "$pid" = "$anchor_pid" ] || kill -KILL "$pid" 2>/dev/null || true
  done
  only_anchor() { [ "$(ip netns pids "$PREFIX$host" | grep -cvx "$anchor_pid")" = 0 ]; }
  wait_for 10 "every process of host $host gone" only_anchor
  echo "host $host: every process killed"
}

status() {
  for h in "${HOSTS[@]}"; do
    echo "host $h (${IP[$h]}): $(ip netns pids "$PREFIX$h" 2>/dev/null | wc -l) processes"
  done
}

down() {
  # everything in our namespaces was started through this script: stop it by pid
  for signal in TERM KILL; do
    for h in "${HOSTS[@]}"; do
      for pid in $(ip netns pids "$PREFIX$h" 2>/dev/null); do kill -s "$signal" "$pid" 2>/dev/null || true; done
    done
    for _ in $(seq 25); do
      left=0
      for h in "${HOSTS[@]}"; do left=$((left + $(ip netns pids "$PREFIX$h" 2>/dev/null | wc -l))); done
      [ "$left" = 0 ] && break
      sleep 0.2
    done
  done
  for h in "${HOSTS[@]}"; do
    ip netns del "$PREFIX$h" 2>/dev/null || true
    rm -f "$SHARED/anchor.$h"
  done
  ip link del "$BRIDGE" 2>/dev/null || true
  rm -f "$SHARED/hosts" "$SHARED"/spark-*.log "$SHARED"/{zookeeper,nimbus,supervisorB,supervisorC}.log
  rm -rf "$SHARED/conf" "$SHARED/spark-conf"
  rmdir "$SHARED" 2>/dev/null || true
}

case "${1:-}" in
  up) up ;;
  spark) spark ;;
  spark-master) spark_master ;;
  spark-worker) [ $# -ge 2 ] || die "usage: $0 spark-worker B|C [CPU]"; spark_worker "$2" "${3:-}" ;;
  cluster) cluster ;;
  control-plane) control_plane ;;
  kill-host) [ $# = 2 ] && [ -n "${IP[${2:-}]:-}" ] || die "usage: $0 kill-host A|B|C"; kill_host "$2" ;;
  exec) [ $# -ge 3 ] || die "usage: $0 exec A|B|C COMMAND..."; h=$2; shift 2; run_in "$h" "$@" ;;
  status) status ;;
  down) down ;;
  *) die "usage: $0 up | spark | spark-master | spark-worker B|C [CPU] | cluster | control-plane | kill-host A|B|C | exec A|B|C COMMAND... | status | down" ;;
esac
