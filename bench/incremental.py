"""Incremental reads: a 1 % increment (`GET /changes`) against a full read (`GET /rows`).

Run: `.venv/bin/python -m bench.incremental [--batches 20] [--rows 2000000] [--share 0.01]
[--runs 3] [--quick] [--keep]`.

One run, one fresh embedded-mode home (`icebatch api` + `icebatch worker` as real processes):
`--batches` Parquet batches, `--rows` events in all, go in through the API (one dataset,
day-partitioned, Icebatch's ingest layout). Two of them are small, `--share` of the rows each:
the one in the middle and the last; the others split the rest evenly (with `--batches 100
--share 0.01` every batch is 1 %). Then the small batch in the middle is reverted. Measured
over HTTP, Arrow format, the whole body received and decoded (best of `--runs`, interleaved):
  - appended: `GET /changes?kind=appended&from_snapshot=<before the last batch>&to_snapshot=<its
    snapshot>` (the last batch: 1 % of the rows at 100 batches) against `GET /rows?as_of=<that
    snapshot>` (every row);
  - deleted: `GET /changes?kind=deleted` over the revert's snapshot (the reverted batch's rows)
    against `GET /rows?as_of=<the revert's snapshot>`.
Row counts are checked: the increment has exactly the batch's rows, the full read every visible
row. Goal: increment seconds / full-read seconds <= 0.05.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from bench import embedded
from bench.common import DATASET, events, machine_line, work_dir
from bench.embedded import log
from bench.vacuum import USERS


def sizes(batches: int, rows: int, share: float) -> list[int]:
    """Rows per batch: the middle and the last batch `share` of `rows`, the rest even."""
    small = max(1, round(rows * share))
    bulk, extra = divmod(rows - 2 * small, batches - 2)
    out = [bulk + (1 if i < extra else 0) for i in range(batches - 2)]
    out.insert(batches // 2, small)
    return [*out, small]


def generate(folder: Path, counts: list[int], days: int, seed: int) -> list[Path]:
    folder.mkdir(parents=True)
    rng = np.random.default_rng(seed)
    users = pa.array([f"user_{i:05d}" for i in range(USERS)])
    paths, first = [], 0
    for i, count in enumerate(counts):
        path = folder / f"batch-{i:03d}.parquet"
        pq.write_table(events(count, first, users, days, rng), path)
        paths.append(path)
        first += count
    return paths


def read_arrow(client: httpx.Client, path: str, params: dict[str, Any]) -> tuple[float, int]:
    """Seconds to receive and decode the Arrow stream of one GET, and its row count."""
    began = time.perf_counter()
    got = client.get(path, params={**params, "format": "arrow"})
    if got.status_code != 200:
        raise RuntimeError(f"GET {path} {params}: {got.status_code} {got.text[:500]}")
    table = pa.ipc.open_stream(got.content).read_all()
    return time.perf_counter() - began, table.num_rows


Reads = dict[str, tuple[str, dict[str, Any], int]]  # name -> (path, params, rows expected)


def measure(client: httpx.Client, reads: Reads, runs: int) -> dict[str, list[float]]:
    """Each read `runs` times, interleaved; checks each read's row count."""
    times: dict[str, list[float]] = {name: [] for name in reads}
    for run in range(runs):
        for name, (path, params, expected) in reads.items():
            seconds, rows = read_arrow(client, path, params)
            if rows != expected:
                raise RuntimeError(f"{name}: {rows:,} rows, expected {expected:,}")
            times[name].append(seconds)
        log(f"run {run + 1}: " + ", ".join(f"{k} {v[-1]:.3f}s" for k, v in times.items()))
    return times


def run_service(args: argparse.Namespace, home: Path, paths: list[Path]) -> dict[str, Any]:
    with embedded.service(home) as svc:
        client = svc.client
        did = embedded.create_dataset(client, DATASET)["id"]
        snapshots, batches = [], []
        began = time.perf_counter()
        for i, path in enumerate(paths):
            batches.append(embedded.ingest(client, did, path))
            snapshots.append(embedded.current_snapshot(client, did))
            if (i + 1) % 10 == 0 or i + 1 == len(paths):
                log(f"ingested batch {i + 1}/{len(paths)}")
        ingest_s = time.perf_counter() - began
        total = sum(int(b["row_count"]) for b in batches)
        last = int(batches[-1]["row_count"])
        victim = batches[len(batches) // 2]  # the small one in the middle
        changes, rows = f"/v1/datasets/{did}/changes", f"/v1/datasets/{did}/rows"
        appended: Reads = {
            "appended increment": (
                changes,
                {"kind": "appended", "from_snapshot": snapshots[-2], "to_snapshot": snapshots[-1]},
                last,
            ),
            "full read": (rows, {"as_of": str(snapshots[-1])}, total),
        }
        log("appended: increment vs full read")
        first = measure(client, appended, args.runs)
        revert = embedded.revert(client, victim["id"])
        after = embedded.current_snapshot(client, did)
        removed = int(victim["row_count"])
        deleted: Reads = {
            "deleted increment": (
                changes,
                {"kind": "deleted", "from_snapshot": snapshots[-1], "to_snapshot": after},
                removed,
            ),
            "full read after revert": (rows, {"as_of": str(after)}, total - removed),
        }
        log("deleted: increment vs full read")
        second = measure(client, deleted, args.runs)
        return {
            "ingest_seconds": ingest_s,
            "rows": total,
            "last_rows": last,
            "removed_rows": removed,
            "revert_seconds": revert["duration_seconds"],
            "times": first | second,
            "snapshots": snapshots,
        }


def report(args: argparse.Namespace, out: dict[str, Any]) -> None:
    print(
        f"\nrun: {' '.join(sys.argv[1:]) or '(defaults)'}; {out['rows']:,} rows in "
        f"{args.batches} batches over {args.days} days (ingested in "
        f"{out['ingest_seconds']:.0f}s, {len(out['snapshots'])} snapshots); increment = 1 "
        f"batch ({out['last_rows']:,} rows, "
        f"{100 * out['last_rows'] / out['rows']:.1f} % of the rows); "
        f"total {time.perf_counter() - embedded.BEGAN:.0f}s"
    )
    times = out["times"]
    print(
        f"\n| read                   |    rows   | best s | all runs (s)\n|{'-' * 24}|{'-' * 11}|"
    )
    counts = {
        "appended increment": out["last_rows"],
        "full read": out["rows"],
        "deleted increment": out["removed_rows"],
        "full read after revert": out["rows"] - out["removed_rows"],
    }
    for name, secs in times.items():
        every = " ".join(f"{x:.3f}" for x in secs)
        print(f"| {name:<22} | {counts[name]:>9,} | {min(secs):>6.3f} | {every}")
    print()
    for inc, full in (
        ("appended increment", "full read"),
        ("deleted increment", "full read after revert"),
    ):
        ratio = min(times[inc]) / min(times[full])
        verdict = "met" if ratio <= 0.05 else "NOT met"
        print(f"ratio {inc} / {full}: {ratio:.3f} (goal <= 0.05: {verdict})")


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.incremental", description=__doc__)
    parser.add_argument("--batches", type=int, default=20)
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--share", type=float, default=0.01, help="rows of a small batch")
    parser.add_argument("--days", type=int, default=4)
    parser.add_argument("--runs", type=int, default=3, help="runs per read (best kept)")
    parser.add_argument("--seed", type=int, default=20261123)
    parser.add_argument("--quick", action="store_true", help="a small smoke run")
    parser.add_argument("--keep", action="store_true", help="keep the temp dir")
    args = parser.parse_args()
    if args.quick:
        args.batches, args.rows, args.runs = 6, 100_000, 2
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    for key in ("ICEBATCH_DATABASE_URL", "ICEBATCH_BROKER_URL", "ICEBATCH_WAREHOUSE"):
        os.environ.pop(key, None)
    now = datetime.now(UTC)
    machine_line(os.environ.get("ICEBATCH_SPARK_MASTER", "local[*]"), f"; {now:%Y-%m-%d %H:%M} UTC")
    with work_dir("icebatch-bench-incremental-", args.keep) as work:
        counts = sizes(args.batches, args.rows, args.share)
        log(f"generating {args.batches} batches, {args.rows:,} rows: {counts}")
        paths = generate(work / "batches", counts, args.days, args.seed)
        report(args, run_service(args, work / "home", paths))


if __name__ == "__main__":
    main()
