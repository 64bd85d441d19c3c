#!/usr/bin/env bash
# The test command of README and CI: starts PostgreSQL and Redis if they are not running,
# then runs the whole suite (Spark and end-to-end tests included) on ICEBATCH_TEST_WORKERS
# pytest-xdist workers (default: one more than the cores, at most 6 — much of an end-to-end test
# is waiting on processes, and more workers than that on 2 cores cost more CPU in contention than
# they save in waiting: docs/testing.md; the tests are split among them by their recorded cost,
# tests/fixtures/schedule.py). 0 runs them in this one process.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

if ! pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then
  echo "==> starting PostgreSQL"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start
  for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 1; done
fi
if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  echo "==> starting Redis"
  mkdir -p /var/lib/redis /var/log/redis
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log
  for _ in $(seq 1 30); do redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && break; sleep 1; done
fi

cores="$(nproc)"
workers="${ICEBATCH_TEST_WORKERS:-$((cores + 1 < 6 ? cores + 1 : 6))}"
parallel=()
if [ "$workers" != "0" ]; then
  parallel=(-n "$workers" --dist worksteal)
fi
exec .venv/bin/python -m pytest -q -p no:cacheprovider "${parallel[@]}" "$@"
