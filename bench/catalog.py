"""What the Iceberg REST catalog costs: `loadTable` of a dataset carrying many restatements, and
the lag from a batch's `success` to its rows in an engine through the catalog.

Run: `.venv/bin/python -m bench.catalog [--restatements 10000] [--loads 300] [--batches 20]
[--quick] [--keep]`.

One run, one fresh embedded-mode home (`icebatch api` + `icebatch worker` as real processes).
A dataset gets one 100k-row batch, then `--restatements` GDPR privacy jobs of one id each
(POST /v1/privacy/jobs from 8 threads; the worker's group committer commits them, the
materializer turns them into position deletes); the script waits until every job is complete
and the catalog serves the newest snapshot. Then, interleaved in rounds of 50, each measure
`--loads` times, one request at a time:
  - `loadTable` full: GET /iceberg/v1/namespaces/{org}/tables/events, the whole body read
    (the served document is built once per table version and ETag, then served from memory);
  - `loadTable` 304: the same with `If-None-Match` (the tag's lookup only);
  - PyIceberg `RestCatalog.load_table` (the client's own parse of the full answer);
  - the baseline: PyIceberg `SqlCatalog.load_table` on the same SQLite catalog (what an engine
    reading around Icebatch does: read the metadata file).
And the first (cold) build of the served document after the last commit. Then `--batches`
batches of 100 rows, one after the other: for each, the time from its `success` (polled every
20 ms) to the catalog serving its snapshot (polled every 20 ms with If-None-Match).
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import httpx
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from bench import embedded
from bench.common import DATASET, events, machine_line, work_dir
from bench.embedded import log


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _row(name: str, seconds: list[float], baseline: float | None) -> str:
    rate = len(seconds) / sum(seconds)
    ratio = f"{rate / baseline:6.2f}" if baseline else "   1.00"
    return (
        f"| {name:<34} | {len(seconds):5d} | {rate:9.1f} | {statistics.median(seconds) * 1e3:7.2f}"
        f" | {_quantile(seconds, 0.99) * 1e3:7.2f} | {ratio} |"
    )


def restate(client: httpx.Client, did: str, users: list[str]) -> float:
    """One GDPR privacy job per user from 8 threads; wait until all are complete: seconds."""
    began = time.perf_counter()
    local = threading.local()

    def post(user: str) -> str:
        if not hasattr(local, "client"):
            local.client = httpx.Client(
                base_url=str(client.base_url), headers=client.headers, timeout=600
            )
        body = {"dataset_ids": [did], "column": "user_id", "values": [user]}
        answer = local.client.post("/v1/privacy/jobs", json=body)
        return str(answer.raise_for_status().json()["id"])

    with ThreadPoolExecutor(8) as pool:
        jobs = list(pool.map(post, users))
    log(f"{len(jobs)} privacy jobs accepted in {time.perf_counter() - began:.1f}s")
    for job in jobs:
        while (got := client.get(f"/v1/privacy/jobs/{job}").json())["status"] != "complete":
            if got["status"] == "failed" or time.perf_counter() - began > 3600:
                raise RuntimeError(f"privacy job {job}: {got}")
            time.sleep(0.2)
    return time.perf_counter() - began


def timed(call: Callable[[], object]) -> float:
    began = time.perf_counter()
    call()
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--restatements", type=int, default=10_000)
    parser.add_argument("--loads", type=int, default=300)
    parser.add_argument("--batches", type=int, default=20)
    parser.add_argument(
        "--quick", action="store_true", help="200 restatements, 50 loads, 5 batches"
    )
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.restatements, args.loads, args.batches = 200, 50, 5
    machine_line("local[*]")
    rng = np.random.default_rng(20261126)
    with work_dir("bench-catalog-", args.keep) as work, embedded.service(work / "home") as svc:
        client = svc.client
        did = embedded.create_dataset(client, DATASET)["id"]
        org = client.get("/v1/datasets").json()["items"][0]["table"].split(".")[1]
        users = pa.array([f"u{i:06d}" for i in range(max(20_000, args.restatements * 2))])
        first = work / "first.parquet"
        pq.write_table(events(100_000, 0, users, 4, rng), first)
        embedded.ingest(client, did, first)
        log("first batch in")
        erased = rng.choice(len(users), args.restatements, replace=False)
        took = restate(client, did, [users[int(i)].as_py() for i in erased])
        log(f"{args.restatements} restatements complete in {took:.1f}s")
        path = f"/iceberg/v1/namespaces/{org}/tables/events"

        def served() -> int | None:
            got = client.get(path)
            if got.status_code != 200:
                return None
            return int(got.json()["metadata"]["current-snapshot-id"] or 0)

        deadline = time.monotonic() + 600
        while served() != embedded.current_snapshot(client, did):
            assert time.monotonic() < deadline, "the catalog never served the newest snapshot"
            time.sleep(0.2)
        snapshots = len(
            client.get(path, params={"snapshots": "all"}).json()["metadata"]["snapshots"]
        )
        summary = client.get(f"/v1/datasets/{did}").json()
        log(f"served: {snapshots} snapshots; dataset: {summary.get('snapshots')} snapshots")

        from pyiceberg.catalog.rest import RestCatalog

        key = str(client.headers["Authorization"]).removeprefix("Bearer ")
        rest = RestCatalog("bench", uri=f"{str(client.base_url).rstrip('/')}/iceberg", token=key)
        direct = embedded.load_table(svc.home, f"x.{org}.events")
        jdbc = direct.catalog
        tag = client.get(path).headers["ETag"]
        body_bytes = len(client.get(path).content)
        measures: dict[str, list[float]] = {
            "PyIceberg SqlCatalog.load_table": [],
            "loadTable, full body": [],
            "loadTable, If-None-Match (304)": [],
            "PyIceberg RestCatalog.load_table": [],
        }
        calls: dict[str, Callable[[], object]] = {
            "PyIceberg SqlCatalog.load_table": lambda: jdbc.load_table(f"{org}.events"),
            "loadTable, full body": lambda: client.get(path).raise_for_status().content,
            "loadTable, If-None-Match (304)": lambda: client.get(
                path, headers={"If-None-Match": tag}
            ),
            "PyIceberg RestCatalog.load_table": lambda: rest.load_table(f"{org}.events"),
        }
        for _ in range(max(1, args.loads // 50)):
            for name, call in calls.items():
                measures[name] += [timed(call) for _ in range(50)]
        not_modified = client.get(path, headers={"If-None-Match": tag})
        assert not_modified.status_code == 304, not_modified.status_code

        # the cold build: the first load after a commit (a new batch)
        small = work / "small-0.parquet"
        pq.write_table(events(100, 10_000_000, users, 1, rng), small)
        embedded.ingest(client, did, small)
        cold = timed(lambda: client.get(path).raise_for_status())
        warm = timed(lambda: client.get(path).raise_for_status())

        lags = []
        for i in range(args.batches):
            batch = work / f"lag-{i}.parquet"
            pq.write_table(events(100, 20_000_000 + i * 100, users, 1, rng), batch)
            state = embedded.ingest(client, did, batch)  # returns once `success` is seen
            seen = time.perf_counter()
            target = int(state["snapshot_id"])
            while served() != target:
                time.sleep(0.02)
            lags.append(time.perf_counter() - seen)

        print()
        print(
            f"dataset: 100,000 rows, {args.restatements} GDPR restatements, "
            f"{snapshots} served snapshots, served document {body_bytes:,} bytes"
        )
        print(
            "| load                               | calls |  calls/s |  p50 ms |  p99 ms | ratio |"
        )
        print(
            "|------------------------------------|-------|----------|---------|---------|-------|"
        )
        baseline = len(measures["PyIceberg SqlCatalog.load_table"]) / sum(
            measures["PyIceberg SqlCatalog.load_table"]
        )
        for name, seconds in measures.items():
            print(_row(name, seconds, None if name.startswith("PyIceberg Sql") else baseline))
        print(f"cold build after a commit: {cold * 1e3:.1f} ms (next load {warm * 1e3:.1f} ms)")
        print(
            f"batch success -> served by the catalog, {len(lags)} batches: "
            f"p50 {statistics.median(lags) * 1e3:.0f} ms, p99 {_quantile(lags, 0.99) * 1e3:.0f} ms,"
            f" max {max(lags) * 1e3:.0f} ms"
        )


if __name__ == "__main__":
    main()
