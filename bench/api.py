"""Polling load on the API (PostgreSQL + Redis), the load generator on the same machine.

    .venv/bin/python -m bench.api [--api-workers 2] [--seconds 10] [--tabs 1000]

(a) Saturation, closed loop: `--connections` keep-alive connections each send the next request
    as soon as the last answered, for `--seconds`: `GET /healthz` (no key, no SQL: the server's
    ceiling), a full `GET /v1/batches/{id}`, and the same GET with `If-None-Match` (the 304 path).
(b) A UI-like open loop: `--tabs` browser tabs, each polling its in-flight batch every 2 s with
    its last ETag (tabs/2 requests a second offered, on a schedule that does not wait for
    answers: latency counts from the scheduled time), while a client ingests a batch every few
    seconds through a real worker, some tabs watching those batches go staged → success.
    Its first round is every tab's first, full GET of a batch no API process has served yet;
    how much such a cold GET costs is measured apart, one request at a time: a full GET of each
    of 300 fresh batches (each with a file), then the same GETs again (answered from memory).

The generator speaks HTTP/1.1 itself (asyncio streams), in `--generators` processes, so that it
costs far less CPU than the server it measures. Every answer's status is checked (200 or 304
as expected); an error is counted, never dropped. The fair-use limit is raised for the run
(`ICEBATCH_RATE_LIMIT_*`): this measures the API, not the limiter.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import statistics
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psycopg

from bench.common import (
    DATASET,
    ICEBATCH,
    Procs,
    create_key,
    free_port,
    machine_line,
    start,
    stop,
    wait_for,
    work_dir,
    worker_ready,
)

PG = "postgresql://postgres@127.0.0.1:5432"
REDIS = "redis://127.0.0.1:6379/12"
CSV = b"event_id,user_id,event_time,payload\n1,u1,2026-01-01T10:00:00,p\n"


@dataclass
class Tally:
    """What one generator saw: answers by status, latencies (s), transport errors."""

    statuses: dict[int, int] = field(default_factory=dict)
    latencies: list[float] = field(default_factory=list)
    # the open loop's (seconds since its start, latency) of each answer, for the time profile
    timeline: list[tuple[float, float]] = field(default_factory=list)
    errors: int = 0
    wrong: int = 0  # an answer other than the expected one


async def _connect(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.open_connection("127.0.0.1", port)


async def _request(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, head: bytes
) -> tuple[int, dict[bytes, bytes]]:
    """Send one GET (its request head) and read the whole answer: (status, headers)."""
    writer.write(head)
    raw = await reader.readuntil(b"\r\n\r\n")
    lines = raw.split(b"\r\n")
    status = int(lines[0].split(b" ", 2)[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get(b"content-length", b"0"))
    if length:
        await reader.readexactly(length)
    return status, headers


def _head(path: str, key: str | None, etag: bytes | None = None) -> bytes:
    lines = [f"GET {path} HTTP/1.1", "Host: 127.0.0.1"]
    if key:
        lines.append(f"Authorization: Bearer {key}")
    if etag:
        lines.append(f"If-None-Match: {etag.decode()}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


async def _closed(port: int, head: bytes, expect: int, connections: int, seconds: float) -> Tally:
    tally = Tally()
    deadline = time.monotonic() + seconds

    async def one() -> None:
        reader, writer = await _connect(port)
        while time.monotonic() < deadline:
            began = time.perf_counter()
            try:
                status, _ = await _request(reader, writer, head)
            except (OSError, asyncio.IncompleteReadError):
                tally.errors += 1
                reader, writer = await _connect(port)
                continue
            tally.latencies.append(time.perf_counter() - began)
            tally.statuses[status] = tally.statuses.get(status, 0) + 1
            tally.wrong += status != expect
        writer.close()
        await writer.wait_closed()  # gone before the next phase opens its own connections

    await asyncio.gather(*(one() for _ in range(connections)))
    return tally


def closed_loop(args: tuple[int, bytes, int, int, float]) -> Tally:
    """One generator process of the closed-loop load."""
    return asyncio.run(_closed(*args))


async def _open(
    port: int,
    key: str,
    batches: Sequence[str],
    tabs: int,
    period: float,
    seconds: float,
    connections: int,
    offset: float,
) -> Tally:
    """Tabs polling their batch every `period` s on a fixed schedule, through a connection
    pool (a proxy's, or a browser's per-host limit); latency from the scheduled time."""
    tally = Tally()
    pool: asyncio.Queue[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = asyncio.Queue()
    for _ in range(connections):
        pool.put_nowait(await _connect(port))
    etags: dict[int, bytes] = {}
    begin = time.monotonic() + 0.5
    schedule = sorted(
        (begin + offset + (tab * period / tabs) + round_ * period, tab)
        for tab in range(tabs)
        for round_ in range(int(seconds / period))
    )

    async def poll(at: float, tab: int) -> None:
        reader, writer = await pool.get()
        path = f"/v1/batches/{batches[tab % len(batches)]}"
        try:
            status, headers = await _request(reader, writer, _head(path, key, etags.get(tab)))
        except (OSError, asyncio.IncompleteReadError):
            tally.errors += 1
            pool.put_nowait(await _connect(port))
            return
        pool.put_nowait((reader, writer))
        tally.latencies.append(time.monotonic() - at)
        tally.timeline.append((at - begin, time.monotonic() - at))
        tally.statuses[status] = tally.statuses.get(status, 0) + 1
        tally.wrong += status not in (200, 304)
        if b"etag" in headers:
            etags[tab] = headers[b"etag"]

    running = []
    for at, tab in schedule:
        delay = at - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        running.append(asyncio.ensure_future(poll(at, tab)))
    await asyncio.gather(*running)
    return tally


def open_loop(args: tuple[Any, ...]) -> Tally:
    """One generator process of the open-loop load."""
    return asyncio.run(_open(*args))


def merge(tallies: Sequence[Tally]) -> Tally:
    total = Tally()
    for tally in tallies:
        for status, n in tally.statuses.items():
            total.statuses[status] = total.statuses.get(status, 0) + n
        total.latencies += tally.latencies
        total.timeline += tally.timeline
        total.errors += tally.errors
        total.wrong += tally.wrong
    return total


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def cold_gets(client: httpx.Client, dataset: str, count: int = 300) -> None:
    """Full GETs one at a time: each batch's first (no process has read it) and its second."""
    fresh = []
    for _ in range(count):
        batch = client.post("/v1/batches", json={"dataset_id": dataset, "format": "csv"})
        fresh.append(batch.json()["id"])
        client.put(f"/v1/batches/{fresh[-1]}/files/a.csv", content=CSV).raise_for_status()
    time.sleep(1.5)  # the creations' notifications heard
    timings: dict[str, list[float]] = {"first": [], "again": []}
    for kind in timings:
        for batch in fresh:
            started = time.perf_counter()
            client.get(f"/v1/batches/{batch}").raise_for_status()
            timings[kind].append(time.perf_counter() - started)
    first, again = (1000 * pct(timings[k], 0.5) for k in ("first", "again"))
    print(
        f"full GET one at a time, p50: a batch's first {first:.2f} ms, again {again:.2f} ms "
        f"(first / again = {first / again:.2f})"
    )


def ingest(client: httpx.Client, dataset: str) -> str:
    """Open, upload and complete a one-row batch (the worker promotes it)."""
    batch = client.post("/v1/batches", json={"dataset_id": dataset, "format": "csv"}).json()["id"]
    client.put(f"/v1/batches/{batch}/files/a.csv", content=CSV).raise_for_status()
    client.post(f"/v1/batches/{batch}/complete").raise_for_status()
    return str(batch)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--api-workers", type=int, default=2, help="`icebatch api --workers`")
    parser.add_argument("--generators", type=int, default=2, help="load generator processes")
    parser.add_argument("--connections", type=int, default=16, help="per generator")
    parser.add_argument("--seconds", type=float, default=10.0, help="each closed-loop phase")
    parser.add_argument("--tabs", type=int, default=1000)
    parser.add_argument("--open-seconds", type=float, default=30.0)
    parser.add_argument("--keep", action="store_true", help="keep the work folder and database")
    args = parser.parse_args()
    machine_line("local[1]", f", {args.api_workers} API process(es), {args.generators} generators")

    database = f"bench_api_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{database}"')
    procs: Procs = []
    with work_dir("icebatch-bench-api-", args.keep) as work:
        env = {
            **os.environ,
            "ICEBATCH_HOME": str(work),
            "ICEBATCH_DATABASE_URL": f"{PG}/{database}",
            "ICEBATCH_BROKER_URL": REDIS,
            "ICEBATCH_RATE_LIMIT_PER_SECOND": "1000000",
            "ICEBATCH_RATE_LIMIT_BURST": "1000000",
            "ICEBATCH_SPARK_MASTER": "local[1]",
            "ICEBATCH_SPARK_DRIVER_MEMORY": "1g",
        }
        try:
            run(args, env, work, procs)
        finally:
            stop(procs)
            if not args.keep:
                with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
                    conn.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')


def run(args: argparse.Namespace, env: dict[str, str], work: Path, procs: Procs) -> None:
    import redis

    redis.Redis.from_url(REDIS).flushdb()
    port = free_port()
    key = create_key(env)
    api_argv = [ICEBATCH, "api", "--port", str(port), "--workers", str(args.api_workers)]
    procs.append(start(api_argv, env, work / "api.log"))
    procs.append(start([ICEBATCH, "worker"], env, work / "worker.log"))
    base = f"http://127.0.0.1:{port}"

    def ready() -> bool:
        try:
            return httpx.get(f"{base}/readyz", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    wait_for(ready, "the API", procs)
    client = httpx.Client(base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=60)
    dataset = client.post("/v1/datasets", json=DATASET).json()["id"]
    watched = client.post("/v1/batches", json={"dataset_id": dataset, "format": "csv"}).json()
    batch_path = f"/v1/batches/{watched['id']}"
    etag = client.get(batch_path).headers["ETag"].encode()
    wait_for(worker_ready(work / "worker.log"), "the worker", procs)
    warm = ingest(client, dataset)  # the worker's SparkSession starts
    wait_for(
        lambda: client.get(f"/v1/batches/{warm}").json()["status"] == "success",
        "the warm-up ingest",
        procs,
        timeout=300,
    )

    # (a) saturation
    phases = [
        ("GET /healthz (no key, no SQL)", _head("/healthz", None), 200),
        ("GET batch, full (200)", _head(batch_path, key), 200),
        ("GET batch, If-None-Match (304)", _head(batch_path, key, etag), 304),
    ]
    print(
        f"\n(a) closed loop: {args.generators} x {args.connections} connections, "
        f"{args.seconds:.0f} s a phase, load average {os.getloadavg()[0]:.2f}"
    )
    print("| request                          |   req/s |  p50 ms |  p99 ms | errors |")
    print("|----------------------------------|---------|---------|---------|--------|")
    rates: dict[str, float] = {}
    with multiprocessing.Pool(args.generators) as pool:
        for name, head, expect in phases:
            job = (port, head, expect, args.connections, args.seconds)
            time.sleep(1.0)  # the last phase's connections closed on the server's side too
            tally = merge(pool.map(closed_loop, [job] * args.generators))
            rates[name] = len(tally.latencies) / args.seconds
            print(
                f"| {name:<32} | {rates[name]:7.0f} | {1000 * pct(tally.latencies, 0.5):7.2f} "
                f"| {1000 * pct(tally.latencies, 0.99):7.2f} | {tally.errors + tally.wrong:6d} |"
            )
            if tally.errors or tally.wrong:
                other = {s: n for s, n in tally.statuses.items() if s != expect}
                print(f"|   (transport errors {tally.errors}; other answers {json.dumps(other)})")
    r304, full, ceiling = rates[phases[2][0]], rates[phases[1][0]], rates[phases[0][0]]
    print(
        f"ratios: 304 / full GET = {r304 / full:.2f}; 304 / healthz = {r304 / ceiling:.2f}; "
        f"304 path {r304:.0f} req/s (goal >= 1,000)"
    )

    cold_gets(client, dataset)

    # (b) open loop while ingests run
    tabs_batches = [
        client.post("/v1/batches", json={"dataset_id": dataset, "format": "csv"}).json()["id"]
        for _ in range(min(args.tabs, 200))
    ]
    stop_ingests = multiprocessing.Event()
    feeder = multiprocessing.Process(target=_ingests, args=(base, key, dataset, stop_ingests))
    feeder.start()
    per = args.tabs // args.generators
    jobs = [
        (
            port,
            key,
            tabs_batches,
            per,
            2.0,
            args.open_seconds,
            args.connections,
            g * 2.0 / args.tabs,
        )
        for g in range(args.generators)
    ]
    time.sleep(1.0)  # (a)'s connections closed on the server's side too
    before = os.times()
    started = time.monotonic()
    with multiprocessing.Pool(args.generators) as pool:
        tally = merge(pool.map(open_loop, jobs))
    elapsed = time.monotonic() - started
    stop_ingests.set()
    feeder.join(timeout=60)
    after = os.times()
    landed = [
        b
        for b in client.get("/v1/batches", params={"limit": 500}).json()["items"]
        if b["status"] == "success"
    ]
    offered = args.tabs / 2.0
    served = len(tally.latencies)
    print(
        f"\n(b) open loop: {args.tabs} tabs polling every 2 s ({offered:.0f} req/s offered), "
        f"{args.open_seconds:.0f} s, ingests running (batches landed in all: {len(landed)})"
    )
    print(
        f"answers {served} ({served / elapsed:.0f}/s): {json.dumps(tally.statuses)}; "
        f"errors {tally.errors + tally.wrong}"
    )
    lat = tally.latencies
    print(
        f"latency ms: p50 {1000 * pct(lat, 0.5):.2f}  p90 {1000 * pct(lat, 0.9):.2f}  "
        f"p99 {1000 * pct(lat, 0.99):.2f}  max {1000 * max(lat):.2f}  "
        f"mean {1000 * statistics.fmean(lat):.2f}  (goal p99 <= 50 ms, no error)"
    )
    # where the slow answers are: p99 per 2 s round (round 1: every tab's first, full GET)
    rounds: dict[int, list[float]] = {}
    for at, latency in tally.timeline:
        rounds.setdefault(int(at // 2.0), []).append(latency)
    print(
        "p99 ms per 2 s round: "
        + " ".join(f"{1000 * pct(v, 0.99):.0f}" for _, v in sorted(rounds.items()))
    )
    steady = [latency for at, latency in tally.timeline if at >= 2.0]
    print(f"after the first round: p99 {1000 * pct(steady, 0.99):.2f} ms")
    cpu = (after.children_user + after.children_system) - (
        before.children_user + before.children_system
    )
    print(f"generators' CPU: {cpu:.1f} s; load average {os.getloadavg()[0]:.2f}")


def _ingests(base: str, key: str, dataset: str, done: Any) -> None:
    """Ingest a one-row batch every 3 s until `done` (the worker is busy meanwhile)."""
    with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=60) as c:
        while not done.is_set():
            ingest(c, dataset)
            done.wait(3.0)


if __name__ == "__main__":
    main()
