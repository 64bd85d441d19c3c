"""What "erased everywhere" costs readers: reads with 0 vs 1,000 vs 50,000 GDPR-deleted ids.

Run: `.venv/bin/python -m bench.gdpr_reads [--batches 5] [--rows 500000] [--levels 1000,50000]
[--job-size 100] [--runs 3] [--quick] [--keep]`.

One run, one fresh embedded-mode home (`icebatch api` + `icebatch worker` as real processes).
`--rows` events (`user_id` from 100k ids, a random subset of a 1M-id universe) go in through the
API as `--batches` Parquet batches. Then, level by level, privacy jobs of `--job-size` ids each
(POST /v1/privacy/jobs, committed by the worker) erase the first n ids of a fixed random order of
the universe (~10 % of them have rows). At each level (0 is the baseline), over HTTP, Arrow
format, the whole body received and decoded:
  - `GET /rows` (current), `GET /rows?as_of=<the last snapshot before any delete>`,
    `GET /changes?kind=appended` from the first batch's snapshot to that one;
  - cold: the first read of each after the level's deletes landed (the first of the three pays
    `in_force`'s build, each its own filter build); warm: best of `--runs` more, interleaved.
Row counts are checked against the generated data (erased ids' rows gone from `/rows`; in
`/changes` they stay, payload null). In this process, on the same store: `in_force` cold (first
call at the level) and warm (median of 20: the SQL lookup, the tombstone list's path, a cache hit),
the SQL lookup alone, and a cProfile of one cold current read at the last level.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import statistics
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from bench import embedded
from bench.common import DATASET, events, machine_line, work_dir
from bench.embedded import log
from bench.incremental import read_arrow

UNIVERSE, USERS = 1_000_000, 100_000
READS = ("rows current", "rows as_of", "changes")


def generate(
    folder: Path, batches: int, rows: int, seed: int
) -> tuple[list[Path], pa.Table, list[str]]:
    """The batch files, all their rows, and the universe's ids in erasure order."""
    folder.mkdir(parents=True)
    rng = np.random.default_rng(seed)
    universe = np.array([f"u{i:07d}" for i in range(UNIVERSE)], dtype=object)
    users = pa.array(rng.choice(universe, USERS, replace=False).tolist())
    paths, tables = [], []
    for i in range(batches):
        table = events(rows // batches, i * (rows // batches), users, 4, rng)
        paths.append(folder / f"batch-{i:02d}.parquet")
        pq.write_table(table, paths[-1])
        tables.append(table)
    return paths, pa.concat_tables(tables), rng.permutation(universe).tolist()


def erase(client: httpx.Client, did: str, ids: list[str], job_size: int) -> float:
    """Privacy jobs of `job_size` ids through the API; wait until all are complete: seconds."""
    began = time.perf_counter()
    jobs = []
    for i in range(0, len(ids), job_size):
        body = {"dataset_ids": [did], "column": "user_id", "values": ids[i : i + job_size]}
        jobs.append(client.post("/v1/privacy/jobs", json=body).raise_for_status().json()["id"])
    for job in jobs:
        while (got := client.get(f"/v1/privacy/jobs/{job}").json())["status"] != "complete":
            if got["status"] == "failed" or time.perf_counter() - began > 900:
                raise RuntimeError(f"privacy job {job}: {got}")
            time.sleep(0.1)
    return time.perf_counter() - began


def median_of(call: Callable[[], object], times: int = 20) -> float:
    spent = []
    for _ in range(times):
        began = time.perf_counter()
        call()
        spent.append(time.perf_counter() - began)
    return statistics.median(spent)


def in_process(did: str, table_name: str, home: Path, profile: bool) -> dict[str, Any]:
    """In this process, on the same store: one cold current read in phases (`in_force`, the
    filter build, the scan; under cProfile if `profile`), then `in_force` warm and its SQL
    lookup alone (medians of 20 calls). Seconds."""
    from app.db import session_scope
    from app.lake import visible
    from app.privacy import reads as gdpr
    from app.privacy import repository

    table = embedded.load_table(home, table_name)
    snapshot, profiler = table.current_snapshot(), cProfile.Profile()
    with session_scope() as session:
        if profile:
            profiler.enable()
        began = time.perf_counter()
        found = gdpr.in_force(session, did, table)
        built = time.perf_counter()
        visible.tombstone_filter(table, snapshot, found)
        filtered = time.perf_counter()
        schema, batches = visible.row_batches(table, snapshot, gdpr=found)
        rows = pa.Table.from_batches(list(batches), schema).num_rows
        scanned = time.perf_counter()
        profiler.disable()
        out: dict[str, Any] = {
            "cold": built - began,
            "filter": filtered - built,
            "scan": scanned - filtered,
            "rows": rows,
            "warm": median_of(lambda: gdpr.in_force(session, did, table)),
            "sql": median_of(lambda: repository.gdpr_in_force(session, did)),
            "tombstones": found.rows.num_rows,
            "restatements": len(repository.gdpr_in_force(session, did)),
        }
    if profile:
        text = io.StringIO()
        pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(15)
        out["profile"] = text.getvalue()
    return out


def run(args: argparse.Namespace, home: Path, paths: list[Path], data: pa.Table) -> dict[str, Any]:
    order: list[str] = args.order
    with embedded.service(home) as svc:
        client = svc.client
        dataset = embedded.create_dataset(client, DATASET)
        did = dataset["id"]
        snaps = []
        for path in paths:
            embedded.ingest(client, did, path)
            snaps.append(embedded.current_snapshot(client, did))
        log(f"ingested {len(paths)} batches")
        rows, changes = f"/v1/datasets/{did}/rows", f"/v1/datasets/{did}/changes"
        appended = data.slice(data.num_rows // len(paths))  # batches 2..n
        reads: dict[str, tuple[str, dict[str, Any]]] = {
            "rows current": (rows, {}),
            "rows as_of": (rows, {"as_of": str(snaps[-1])}),
            "changes": (
                changes,
                {"kind": "appended", "from_snapshot": snaps[0], "to_snapshot": snaps[-1]},
            ),
        }
        primed = {name: read_arrow(client, *read)[0] for name, read in reads.items()}
        out: dict[str, Any] = {"levels": {}, "primed": primed}
        for level in [0, *args.levels]:
            done = sum(out["levels"][n]["erased"] for n in out["levels"])
            erased = order[:level]
            erase_s = erase(client, did, order[done:level], args.job_size) if level else 0.0
            gone = pc.is_in(data["user_id"], pa.array(erased, pa.string()))
            visible = data.num_rows - pc.sum(gone).as_py() if level else data.num_rows
            nulled = pc.sum(pc.is_in(appended["user_id"], pa.array(erased, pa.string()))).as_py()
            expected = {
                "rows current": visible,
                "rows as_of": visible,
                "changes": appended.num_rows,
            }
            times: dict[str, list[float]] = {name: [] for name in reads}
            for _ in range(args.runs + 1):
                for name, (url, params) in reads.items():
                    seconds, count = read_arrow(client, url, params)
                    if count != expected[name]:
                        raise RuntimeError(
                            f"{level} {name}: {count:,} rows, not {expected[name]:,}"
                        )
                    times[name].append(seconds)
            costs = in_process(did, dataset["table"], home, level == args.levels[-1])
            out["levels"][level] = {
                "erased": level - done if level else 0,
                "erase_s": erase_s,
                "times": times,
                "visible": visible,
                "nulled": nulled or 0,
                "in_force": costs,
            }
            if costs["rows"] != visible:
                raise RuntimeError(f"{level}: in-process read {costs['rows']:,} rows")
            log(f"level {level}: {costs['restatements']} restatements, erase {erase_s:.1f}s")
        return out


def report(args: argparse.Namespace, data: pa.Table, out: dict[str, Any]) -> None:
    levels = out["levels"]
    print(
        f"\nrun: {' '.join(sys.argv[1:]) or '(defaults)'}; {data.num_rows:,} rows in "
        f"{args.batches} batches; privacy jobs of {args.job_size} ids; total "
        f"{time.perf_counter() - embedded.BEGAN:.0f}s"
    )
    base = levels[0]["times"]
    print(
        "first reads after the ingest (not measured): "
        + ", ".join(f"{k} {v:.3f}s" for k, v in out["primed"].items())
    )
    print("\n| erased ids | read         | rows      | cold s | x base | warm s | x base | all (s)")
    print("|------------|--------------|-----------|--------|--------|--------|--------|--------")
    for level, got in levels.items():
        for name in READS:
            cold, warm = got["times"][name][0], min(got["times"][name][1:])
            every = " ".join(f"{x:.3f}" for x in got["times"][name])
            count = (
                got["visible"]
                if name != "changes"
                else data.num_rows - data.num_rows // args.batches
            )
            print(
                f"| {level:>10,} | {name:<12} | {count:>9,} | {cold:6.3f} | "
                f"{cold / base[name][0]:5.2f}x | {warm:6.3f} | "
                f"{warm / min(base[name][1:]):5.2f}x | {every}"
            )
    print(
        "\nin this process (seconds): a cold current read in phases, then in_force warm and its"
        " SQL lookup alone (median of 20 calls)"
    )
    print(
        "| erased ids | restatements | tombstones | erase jobs s | in_force cold | filter build"
        " | scan   | in_force warm | SQL    |"
    )
    print("|" + "|".join("-" * n for n in (12, 14, 12, 14, 15, 14, 8, 15, 8)) + "|")
    for level, got in levels.items():
        c = got["in_force"]
        print(
            f"| {level:>10,} | {c['restatements']:>12,} | {c['tombstones']:>10,} | "
            f"{got['erase_s']:>12.1f} | {c['cold']:>13.4f} | {c['filter']:>12.4f} | "
            f"{c['scan']:.4f} | {c['warm']:>13.4f} | {c['sql']:.4f} |"
        )
    for level, got in levels.items():
        print(
            f"level {level:,}: {data.num_rows - got['visible']:,} rows hidden from /rows; "
            f"/changes returned {got['nulled']:,} erased rows with payload null"
        )
    last = levels[max(levels)]["in_force"]
    print(f"\ncProfile of the cold read at the last level ({last['rows']:,} rows):")
    print(last["profile"])


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.gdpr_reads", description=__doc__)
    parser.add_argument("--batches", type=int, default=5)
    parser.add_argument("--rows", type=int, default=500_000)
    parser.add_argument("--levels", default="1000,50000", help="erased ids, comma-separated")
    parser.add_argument("--job-size", type=int, default=100, help="ids per privacy job")
    parser.add_argument("--runs", type=int, default=3, help="warm runs per read (best kept)")
    parser.add_argument("--seed", type=int, default=20261122)
    parser.add_argument("--quick", action="store_true", help="a small smoke run")
    parser.add_argument("--keep", action="store_true", help="keep the temp dir")
    args = parser.parse_args()
    args.levels = [int(x) for x in args.levels.split(",")]
    if args.quick:
        args.rows, args.levels, args.runs = 50_000, [100, 1000], 2
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    for key in ("ICEBATCH_DATABASE_URL", "ICEBATCH_BROKER_URL", "ICEBATCH_WAREHOUSE"):
        os.environ.pop(key, None)
    now = datetime.now(UTC)
    machine_line(os.environ.get("ICEBATCH_SPARK_MASTER", "local[*]"), f"; {now:%Y-%m-%d %H:%M} UTC")
    with work_dir("icebatch-bench-gdpr-", args.keep) as work:
        os.environ["ICEBATCH_HOME"] = str(work / "home")  # in_force in this process
        log(f"generating {args.batches} batches, {args.rows:,} rows")
        paths, data, args.order = generate(work / "batches", args.batches, args.rows, args.seed)
        report(args, data, run(args, work / "home", paths, data))


if __name__ == "__main__":
    main()
