"""CDC replication end to end, in one run: accept rate, backlog drain, lag at a sustained offered
rate, and the processor against a plain MERGE INTO.

Run: `.venv/bin/python -m bench.cdc [--entities 1000000] [--events 5000000] [--rate 10000]`
(`--scale 0.05` for a quick look). PostgreSQL and Redis of this machine; `icebatch api` and
two `icebatch worker` processes (one with the beat), Spark `local[2]` each.

Three tenants (orgs) hold 40 / 30 / 30 % of `--entities`. Every event body is generated
before anything is timed (JSON lines, ~150-250 bytes each).
1. **Accept**: one PUT per entity posted over HTTP in chunks of `--chunk` events by one client
   thread per tenant, workers stopped: accepted events/s (202 = durable).
2. **Drain**: the workers start; the time until every tenant's raw table holds all of it:
   events/s applied end to end from a backlog.
3. **Sustained**: the rest of `--events` (PUT 30 %, PATCH 60 %, DELETE 10 %; 5 % of event
   times 1 s-10 min in the past; 3 % carry a link to another entity of the tenant) offered at
   `--rate` events/s in total, one chunk per tenant per second. Each chunk's lag is the time
   from its 202 to the lag endpoint's `processed` reaching its last sequence number (polled
   every 0.25 s); printed as p50/p99 with the part of it until the chunk was staged (`staged`
   reaching it: the wait for a dumper job), the seed's `replication_lag_seconds` (event time)
   sampled meanwhile, the events/s applied end to end (events / (last applied - first
   posted)) and each request's round trip as the client saw it (p50/p99).
4. **Merge step**: with the workers stopped, `--merge-events` more events for the first
   tenant are staged and processed in this process (the processor job as a worker runs it),
   timed (after a warm-up run of 5,000 events: the JVM's start is not the processor's); then
   the raw table is set back to the snapshot before that run and a plain Spark `MERGE INTO`
   of the same folded rows (the processor's result for the touched entities, materialized
   first: upserts and deletes) is timed on it. Both results are compared row for row; the
   ratio is plain seconds / the processor's MERGE step seconds (goal >= 0.7), and the whole
   run's seconds are printed beside it.

`--accept-only`: phase 1, then the sustained phase's events posted as fast as each tenant's
client goes with the workers stopped (changes of rows phase 1 created); each phase prints the
CPU it took per event in the API's processes and in PostgreSQL's (every process of the server:
run it with nothing else using the server).

`--workers 1|2`, `--worker-concurrency N`: how many `icebatch worker` processes run (two by
default, the first with the beat), each with `--concurrency N` slots (one by default). One worker
of two slots runs the same number of jobs at once in one JVM: its Spark code is compiled once.

`--debezium`: the same, as Debezium's PostgreSQL connector would send it through Debezium
Server's HTTP sink: each event a change event value (a PATCH becomes an update carrying the
row's whole new image; event times follow the log, no late ones), posted to
`POST /v1/cdc/debezium` in JSON arrays of 200 (the sink's batch), no merge step.
"""

from __future__ import annotations

import argparse
import os
import statistics
import threading
import time
import uuid
from collections import deque
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import psycopg

from bench import cpu
from bench.cdc_merge_step import merge_step
from bench.cdc_tenants import Tenant
from bench.common import ICEBATCH, Procs, free_port, machine_line, start, stop, wait_for, work_dir

PG = "postgresql://postgres@127.0.0.1:5432"
REDIS = "redis://127.0.0.1:6379/13"
SHARES = (0.4, 0.3, 0.3)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def in_threads(work: dict[Tenant, Any]) -> None:
    errors: list[BaseException] = []

    def run(tenant: Tenant) -> None:
        try:
            work[tenant](tenant)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(t,)) for t in work]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def accept_changes(
    tenants: list[Tenant], streams: dict[Tenant, list[list[bytes]]], meter: cpu.Meter
) -> None:
    """The sustained phase's events posted as fast as each tenant's client goes (one request at
    a time, as a sink does), workers stopped: changes of rows the accept phase created."""
    requests: list[float] = []
    accepted: list[int] = []
    lock = threading.Lock()

    def offer(t: Tenant) -> None:
        for bodies in streams[t]:
            for body in bodies:
                sent = time.monotonic()
                answer = t.post(body)
                with lock:
                    requests.append(time.monotonic() - sent)
                    accepted.append(answer["accepted"])

    meter.reset()
    started = time.monotonic()
    in_threads(dict.fromkeys(tenants, offer))
    took = time.monotonic() - started
    changes = sum(accepted)
    p50, p99 = (percentile(requests, q) * 1000 for q in (0.5, 0.99))
    print(
        f"changes: {changes:,} events in {took:.1f} s = {changes / took:,.0f} events/s; "
        f"round trip p50 {p50:.0f} ms, p99 {p99:.0f} ms; "
        f"CPU per event: {cpu.per_event(meter.used(), changes)}"
    )


def drained(tenants: list[Tenant], procs: Procs, timeout: float) -> float:
    started = time.monotonic()
    wait_for(
        lambda: all(t.lag()["processed"] >= t.accepted for t in tenants),
        "every tenant replicated",
        procs,
        timeout,
    )
    return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entities", type=int, default=1_000_000)
    parser.add_argument("--events", type=int, default=5_000_000, help="in all, creation included")
    parser.add_argument("--rate", type=int, default=10_000, help="offered events/s (sustained)")
    parser.add_argument("--chunk", type=int, default=20_000, help="events per request (accept)")
    parser.add_argument("--merge-events", type=int, default=300_000)
    parser.add_argument("--scale", type=float, default=1.0, help="multiplies the sizes")
    parser.add_argument("--keep", action="store_true")
    parser.add_argument(
        "--debezium",
        action="store_true",
        help="post Debezium change event values (PostgreSQL connector, schemas off) to "
        "POST /v1/cdc/debezium in arrays of 200; no merge step",
    )
    parser.add_argument(
        "--api-processes", type=int, default=1, help="`icebatch api --workers` (one per core)"
    )
    parser.add_argument(
        "--accept-only", action="store_true", help="stop after the accept phase (to profile it)"
    )
    parser.add_argument(
        "--worker-concurrency", type=int, default=1, help="`icebatch worker --concurrency`"
    )
    parser.add_argument("--workers", type=int, default=2, choices=(1, 2), help="worker processes")
    args = parser.parse_args()
    for name in ("entities", "events", "merge_events"):
        setattr(args, name, int(getattr(args, name) * args.scale))
    machine_line(
        "local[2]",
        f", {args.api_processes} API process(es), {args.workers} worker(s) of "
        f"{args.worker_concurrency} slot(s)",
    )
    database = f"bench_cdc_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{database}"')
    procs: Procs = []
    with work_dir("icebatch-bench-cdc-", args.keep) as work:
        env = {
            **os.environ,
            "ICEBATCH_HOME": str(work),
            "ICEBATCH_DATABASE_URL": f"{PG}/{database}",
            "ICEBATCH_BROKER_URL": REDIS,
            "ICEBATCH_RATE_LIMIT_PER_SECOND": "1000000",
            "ICEBATCH_RATE_LIMIT_BURST": "1000000",
            "ICEBATCH_SPARK_MASTER": "local[2]",
            "ICEBATCH_SPARK_DRIVER_MEMORY": "4g",
            "ICEBATCH_CDC_SCHEDULE_SECONDS": "1",
        }
        try:
            run(args, env, work, procs)
        finally:
            stop(procs)
            if not args.keep:
                with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
                    conn.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')


def passed(chunks: deque[tuple[int, float]], through: int, now: float, ages: list[float]) -> bool:
    """Pop the chunks (last sequence number, answered at) that `through` has reached, their ages
    at `now` into `ages`: whether there was one."""
    popped = False
    while chunks and through >= chunks[0][0]:
        ages.append(now - chunks.popleft()[1])
        popped = True
    return popped


def start_workers(
    env: dict[str, str], work: Path, procs: Procs, concurrency: int = 1, count: int = 2
) -> Procs:
    worker = [ICEBATCH, "worker", "--concurrency", str(concurrency)]
    workers = [start([*worker, "--beat"], env, work / "worker-a.log")]
    if count > 1:
        workers.append(start(worker, env, work / "worker-b.log"))
    procs.extend(workers)
    return workers


def run(args: argparse.Namespace, env: dict[str, str], work: Path, procs: Procs) -> None:
    import redis

    redis.Redis.from_url(REDIS).flushdb()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    tenants = [
        Tenant(name, int(args.entities * share), seed, args.debezium)
        for seed, (name, share) in enumerate(zip("abc", SHARES, strict=True))
    ]
    streamed = args.events - sum(t.entities for t in tenants)
    seconds = max(1, streamed // args.rate)
    per_second = [int(args.rate * share) for share in SHARES]

    generating = time.monotonic()
    now = datetime.now(UTC).replace(microsecond=0)
    creation = {t: t.creation(now - timedelta(hours=1, seconds=10), args.chunk) for t in tenants}
    streams = {
        t: t.stream(now - timedelta(hours=1), seconds, n)
        for t, n in zip(tenants, per_second, strict=True)
    }
    total = sum(t.entities for t in tenants) + seconds * sum(per_second)
    size = sum(len(b) for bodies in creation.values() for b in bodies) + sum(
        len(b) for seconds_of in streams.values() for bodies in seconds_of for b in bodies
    )
    print(
        f"generated {total:,} events ({size / 1e6:.0f} MB of JSON lines) for "
        f"{sum(t.entities for t in tenants):,} entities in {time.monotonic() - generating:.0f} s",
        flush=True,
    )

    import subprocess

    for t in tenants:
        argv = [ICEBATCH, "keys", "create", "--org", t.org]
        t.key = subprocess.run(argv, env=env, capture_output=True, check=True, text=True).stdout
        t.key = t.key.split()[-1]
    api = [ICEBATCH, "api", "--port", str(port), "--workers", str(args.api_processes)]
    procs.append(start(api, env, work / "api.log"))

    def ready() -> bool:
        try:
            return httpx.get(f"{base}/readyz", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    wait_for(ready, "the API", procs)
    for t in tenants:
        t.client = httpx.Client(
            base_url=base, headers={"Authorization": f"Bearer {t.key}"}, timeout=300
        )
        config = {"process_interval_seconds": 2, "backlog_threshold": 100_000}
        t.client.put("/v1/cdc/config", json=config).raise_for_status()

    # 1. accept, workers stopped
    api_pid = procs[-1].pid
    meter = cpu.Meter({"API": lambda: cpu.tree(api_pid), "PostgreSQL": cpu.postgres})
    started = time.monotonic()
    in_threads({t: lambda t: [t.post(b) for b in creation[t]] for t in tenants})
    accept_s = time.monotonic() - started
    created = sum(t.entities for t in tenants)
    print(
        f"accept: {created:,} events in {accept_s:.1f} s = {created / accept_s:,.0f} events/s; "
        f"CPU per event: {cpu.per_event(meter.used(), created)}"
    )
    if args.accept_only:
        accept_changes(tenants, streams, meter)
        return

    # 2. drain the creation backlog
    workers = start_workers(env, work, procs, args.worker_concurrency, args.workers)
    drain_s = drained(tenants, procs, timeout=3600)
    print(
        f"drain: {created:,} events applied in {drain_s:.1f} s (workers' start included) = "
        f"{created / drain_s:,.0f} events/s",
        flush=True,
    )

    # 3. sustained offered rate
    # per tenant, its posted chunks not yet applied, oldest first (a tenant posts one request at
    # a time, so their sequence numbers ascend): the watcher pops what `processed` passed
    waiting: dict[Tenant, deque[tuple[int, float]]] = {t: deque() for t in tenants}
    unstaged: dict[Tenant, deque[tuple[int, float]]] = {t: deque() for t in tenants}
    latencies: list[float] = []
    staging: list[float] = []  # each chunk's 202 -> staged: the part of its lag before a run
    requests: list[float] = []  # each request's round trip, as the client saw it
    lags: list[float] = []
    lock = threading.Lock()
    phase = cpu.PhaseCpu(api_pid, [w.pid for w in workers])
    t0 = time.monotonic()

    def offer(t: Tenant) -> None:
        for s, bodies in enumerate(streams[t]):
            time.sleep(max(0.0, t0 + s - time.monotonic()))
            for body in bodies:
                sent = time.monotonic()
                accepted = t.post(body)
                answered = time.monotonic()
                with lock:
                    requests.append(answered - sent)
                    if accepted["last_sequence"] is not None:
                        waiting[t].append((accepted["last_sequence"], answered))
                        unstaged[t].append((accepted["last_sequence"], answered))

    last_applied = t0
    stop_watch = threading.Event()

    def watch() -> None:
        nonlocal last_applied
        while not stop_watch.wait(0.25):
            for t in tenants:
                figures = t.lag()
                now_s = time.monotonic()
                with lock:
                    passed(unstaged[t], figures["staged"], now_s, staging)
                    if passed(waiting[t], figures["processed"], now_s, latencies):
                        last_applied = now_s
                lags.append(figures["replication_lag_seconds"])

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    in_threads(dict.fromkeys(tenants, offer))
    offered_s = time.monotonic() - t0
    drained(tenants, procs, timeout=3600)
    time.sleep(0.5)
    stop_watch.set()
    watcher.join()
    assert not any(waiting.values()), "chunks the watcher never saw applied"
    streamed_events = seconds * sum(per_second)
    end_to_end = last_applied - t0
    print(
        f"sustained: {streamed_events:,} events offered at {args.rate:,}/s over {offered_s:.0f} s "
        f"(achieved offer {streamed_events / offered_s:,.0f}/s); applied end to end "
        f"{streamed_events / end_to_end:,.0f} events/s; chunk lag (202 -> applied) "
        f"p50 {percentile(latencies, 0.5):.1f} s, p99 {percentile(latencies, 0.99):.1f} s, "
        f"max {max(latencies):.1f} s (of it 202 -> staged p50 {percentile(staging, 0.5):.1f} s, "
        f"p99 {percentile(staging, 0.99):.1f} s); seed replication_lag_seconds p50 "
        f"{percentile(lags, 0.5):.1f} s, p99 {percentile(lags, 0.99):.1f} s",
        flush=True,
    )
    p50, p99 = (percentile(requests, q) * 1000 for q in (0.5, 0.99))
    print(
        f"requests: {len(requests):,}, round trip as the client saw it p50 {p50:.0f} ms, "
        f"p99 {p99:.0f} ms",
        flush=True,
    )
    print(phase.line(time.monotonic() - t0, streamed_events), flush=True)
    jobs = runs_of(tenants)
    print(f"processor runs: {jobs}")

    # 4. merge step against a plain MERGE INTO
    stop(workers)
    if not args.debezium:
        merge_step(args, env, tenants[0])


def runs_of(tenants: list[Tenant]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for t in tenants:
        assert t.client is not None
        items = t.client.get("/v1/jobs", params={"kind": "cdc_process", "limit": 500}).json()
        done = [j for j in items["items"] if j["state"] == "succeeded"]
        durations = [
            (
                datetime.fromisoformat(j["finished_at"]) - datetime.fromisoformat(j["started_at"])
            ).total_seconds()
            for j in done
            if j.get("finished_at") and j.get("started_at")
        ]
        out[t.name] = {
            "runs": len(done),
            "median_s": round(statistics.median(durations), 1) if durations else None,
        }
    return out


if __name__ == "__main__":
    main()
