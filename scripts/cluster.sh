#!/usr/bin/env bash
# A Spark standalone cluster from the installed PySpark (no download): one master and N
# workers, for the cluster tests and for anyone who wants a cluster on one machine.
#
#   scripts/cluster.sh up [--workers N] [--cores C] [--memory M] [--netns]
#   scripts/cluster.sh down | status
#   scripts/cluster.sh kill-worker I | start-worker I     (a worker host dies / comes back)
#
# --netns (root, iproute2): each worker runs in its own network namespace, with its own address
# on a bridge (10.77.0.1 is this host, worker I is 10.77.0.(10+I); ICEBATCH_CLUSTER_SUBNET and
# ICEBATCH_CLUSTER_NAME change the addresses and the interface names), as separate hosts would;
# the file system stays shared, as an NFS mount of the warehouse would be. Without it, the
# master and workers listen on 127.0.0.1.
#
# `up` writes $ICEBATCH_CLUSTER_DIR/env (default build/cluster/env): the settings that point
# Icebatch's workers at the cluster. `source` it before `icebatch worker`.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${ICEBATCH_CLUSTER_DIR:-$ROOT/build/cluster}"
VENV="${ICEBATCH_VENV:-$ROOT/.venv}"
EXECUTOR_VENV="${ICEBATCH_EXECUTOR_VENV:-$ROOT/build/executor-venv}"
SUBNET="${ICEBATCH_CLUSTER_SUBNET:-10.77.0}"
NAME="${ICEBATCH_CLUSTER_NAME:-icebatch}"   # prefix of the bridge, veths and namespaces
BRIDGE="$NAME-br"
PORT=7077

say() { printf '\033[1m==> %s\033[0m\n' "$*"; }
[ -x "$VENV/bin/python" ] || { echo "no $VENV: run scripts/setup.sh first" >&2; exit 1; }
spark_home() { "$VENV/bin/python" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))'; }
netns() { [ -f "$DIR/netns" ]; }
host_ip() { if netns; then echo "$SUBNET.1"; else echo 127.0.0.1; fi; }
worker_ip() { if netns; then echo "$SUBNET.$((10 + $1))"; else echo 127.0.0.1; fi; }

executor_python() {
  # an executor's Python: Icebatch's third-party packages, not Icebatch (its code is shipped)
  if [ ! -x "$EXECUTOR_VENV/bin/python" ] || [ ! -f "$EXECUTOR_VENV/.ready" ]; then
    say "creating the executors' Python environment $EXECUTOR_VENV"
    "${PYTHON:-python3}" -m venv "$EXECUTOR_VENV"
    # with the uv of setup.sh when there is one (36 -> 9 s), else pip; compiled as pip does
    local install=("$EXECUTOR_VENV/bin/pip" install)
    [ -x "$VENV/bin/uv" ] &&
      install=("$VENV/bin/uv" pip install --compile-bytecode --python "$EXECUTOR_VENV/bin/python")
    "${install[@]}" --quiet -c "$ROOT/constraints.txt" \
      -r "$ROOT/deploy/executor-requirements.txt" 2>&1 | grep -v '^WARNING: Location' || true
    "$EXECUTOR_VENV/bin/python" -c 'import pyarrow, pyiceberg, pydantic_settings'
    touch "$EXECUTOR_VENV/.ready"
  fi
}

network_up() {
  local n=$1
  ip link add "$BRIDGE" type bridge 2>/dev/null || true
  ip addr replace "$SUBNET.1/24" dev "$BRIDGE"
  ip link set "$BRIDGE" up
  for i in $(seq 1 "$n"); do
    ip netns add "$NAME-w$i"
    ip link add "$NAME-v$i" type veth peer name eth0 netns "$NAME-w$i"
    ip link set "$NAME-v$i" master "$BRIDGE" up
    ip -n "$NAME-w$i" addr add "$(worker_ip "$i")/24" dev eth0
    ip -n "$NAME-w$i" link set eth0 up
    ip -n "$NAME-w$i" link set lo up
  done
}

network_down() {
  for ns in $(ip netns list 2>/dev/null | awk -v p="^$NAME-w" '$1 ~ p {print $1}'); do
    ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
    ip netns delete "$ns"
  done
  # a namespace goes away only once its last process has; its veth lingers until then, and a
  # quick `up` after `down` would meet it: delete the host ends (that removes both), then wait
  for _ in $(seq 1 50); do
    links="$(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1 |
      grep -E "^$NAME-(v[0-9]+|br)$" || true)"
    [ -z "$links" ] && return 0
    for link in $links; do ip link delete "$link" 2>/dev/null || true; done
    sleep 0.2
  done
  echo "interfaces of $NAME still present: $links" >&2
  return 1
}

start_worker() {
  local i=$1 ip cores memory
  ip="$(worker_ip "$i")"; cores="$(cat "$DIR/cores")"; memory="$(cat "$DIR/memory")"
  mkdir -p "$DIR/worker-$i"
  local cmd=(env SPARK_HOME="$(spark_home)" SPARK_LOCAL_IP="$ip" SPARK_WORKER_DIR="$DIR/worker-$i"
    "$(spark_home)/bin/spark-class" org.apache.spark.deploy.worker.Worker
    --host "$ip" --cores "$cores" --memory "$memory" --work-dir "$DIR/worker-$i/work"
    --webui-port 0 "spark://$(host_ip):$PORT")
  if netns; then cmd=(ip netns exec "$NAME-w$i" "${cmd[@]}"); fi
  setsid "${cmd[@]}" >"$DIR/worker-$i/worker.log" 2>&1 < /dev/null &
  echo $! >"$DIR/worker-$i/pid"
}

kill_worker() {
  local i=$1
  if netns; then  # the whole host: the worker and every executor it started
    # (a process may exit between the listing and its kill: list again until none is left)
    for _ in 1 2 3 4 5; do
      [ -z "$(ip netns pids "$NAME-w$i")" ] && break
      ip netns pids "$NAME-w$i" | xargs -r kill -9 2>/dev/null || true
      sleep 0.2
    done
  elif [ -f "$DIR/worker-$i/pid" ]; then
    pkill -9 -f -- "--work-dir $DIR/worker-$i/work" || true  # its executors
    kill -9 "$(cat "$DIR/worker-$i/pid")" 2>/dev/null || true
  fi
  rm -f "$DIR/worker-$i/pid"
}

wait_workers() {
  local n=$1 log="$DIR/master.log"
  for _ in $(seq 1 120); do
    [ "$(grep -c 'Registering worker' "$log" 2>/dev/null || true)" -ge "$n" ] && return 0
    sleep 0.5
  done
  echo "only $(grep -c 'Registering worker' "$log" || true) of $n workers registered; see $DIR" >&2
  return 1
}

up() {
  local workers=2 cores=3 memory=3g use_netns=0
  while (($#)); do
    case "$1" in
      --workers) workers=$2; shift 2 ;;
      --cores) cores=$2; shift 2 ;;
      --memory) memory=$2; shift 2 ;;
      --netns) use_netns=1; shift ;;
      *) echo "unknown option $1" >&2; exit 2 ;;
    esac
  done
  down >/dev/null 2>&1 || true
  mkdir -p "$DIR"
  echo "$workers" >"$DIR/workers"; echo "$cores" >"$DIR/cores"; echo "$memory" >"$DIR/memory"
  executor_python
  if ((use_netns)); then
    touch "$DIR/netns"
    network_up "$workers"
  fi
  say "starting the Spark master at spark://$(host_ip):$PORT"
  # exactly this port: with Spark's usual retries, a master left over from another run would
  # keep 7077 and the workers would register with it, not with this one
  setsid env SPARK_HOME="$(spark_home)" SPARK_LOCAL_IP="$(host_ip)" \
    SPARK_MASTER_OPTS="-Dspark.port.maxRetries=0" \
    "$(spark_home)/bin/spark-class" org.apache.spark.deploy.master.Master \
    --host "$(host_ip)" --port "$PORT" --webui-port 0 >"$DIR/master.log" 2>&1 < /dev/null &
  echo $! >"$DIR/master.pid"
  for i in $(seq 1 "$workers"); do start_worker "$i"; done
  wait_workers "$workers"
  cat >"$DIR/env" <<ENV
export ICEBATCH_SPARK_MASTER=spark://$(host_ip):$PORT
export ICEBATCH_SPARK_DRIVER_HOST=$(host_ip)
export ICEBATCH_SPARK_EXECUTOR_PYTHON=$EXECUTOR_VENV/bin/python
ENV
  say "$workers workers registered ($cores cores, $memory each); settings in $DIR/env"
}

down() {
  if [ -d "$DIR" ]; then
    for pidfile in "$DIR"/worker-*/pid; do
      [ -f "$pidfile" ] && kill_worker "$(basename "$(dirname "$pidfile")" | cut -d- -f2)"
    done
    [ -f "$DIR/master.pid" ] && kill -9 "$(cat "$DIR/master.pid")" 2>/dev/null || true
    rm -f "$DIR/master.pid" "$DIR/netns" "$DIR/env"
  fi
  network_down
}

status() {
  [ -f "$DIR/env" ] || { echo "no cluster (scripts/cluster.sh up)"; return 1; }
  cat "$DIR/env"
  grep -h 'Registering worker\|Removing worker' "$DIR/master.log" | tail -n 20
}

case "${1:-}" in
  up) shift; up "$@" ;;
  down) down ;;
  status) status ;;
  kill-worker) kill_worker "$2" ;;
  start-worker) start_worker "$2" ;;
  *) sed -n '2,16p' "$0"; exit 2 ;;
esac
