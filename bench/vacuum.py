"""Vacuum: bytes rewritten against the bytes of the files that really hold tombstoned rows (sorted
and unsorted layouts), and the vacuum job's time against Iceberg's own purge on a twin table.

Run: `.venv/bin/python -m bench.vacuum [--batches 40] [--rows-per-batch 100000] [--reverts 3]
[--quick] [--keep]`.

One run, one fresh embedded-mode home (`icebatch api` + `icebatch worker` as real processes):
  - two datasets get the same `--batches` Parquet batches through the API (day-partitioned;
    Icebatch's ingest layout: one file per batch and day, sorted by (day, _batch_id));
  - `unsorted` is then compacted by Icebatch itself (`POST /compact {"strategy": "sort",
    "sort_by": ["payload"], "target_file_bytes": ...}`): every file mixes the batches of its
    group and its `_batch_id` bounds are wide;
  - the same `--reverts` batches are reverted in both (REVERT: tombstones only);
  - for each dataset: an independent count (PyArrow reads `_batch_id` of every live file of the
    pre-vacuum snapshot: which files hold a reverted batch's row), then `POST /vacuum
    {"dry_run": true}` and `{"mode": "full"}`; checks: every tombstoned row left the live files,
    no other row did, and `rows_purged` equals the independent count;
  - the processes stop; in this process a SparkSession with the worker's settings registers twin
    tables on each dataset's pre-revert metadata (the very same data files: same rows, same
    layout), switches them to merge-on-read, runs `DELETE FROM twin WHERE _batch_id IN (...)`
    (position deletes) and times `CALL system.rewrite_data_files(...)` with
    `delete-file-threshold=1` (Iceberg's purge): with `min-file-size-bytes=0` (only the files
    with deletes, like the vacuum) and with the issue's options alone (size rules on: small
    files are bin-packed too). Each twin's row count is checked.
Ratios printed: vacuum bytes rewritten / bytes of files holding tombstoned rows (goal <= 1.05),
vacuum job seconds / Iceberg purge seconds.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from bench import embedded
from bench.common import DATASET, events, machine_line, work_dir
from bench.embedded import log

USERS = 50_000
LAYOUTS = ("sorted", "unsorted")
PURGE_ONLY = {"delete-file-threshold": "1", "min-file-size-bytes": "0"}
# (row-level DELETE?, rewrite_data_files options) per variant; the first is the headline one
VARIANTS: dict[str, tuple[bool, dict[str, str]]] = {
    "row-level, purge-only": (True, PURGE_ONLY),
    "as planned, purge-only": (False, PURGE_ONLY),
    "row-level, issue opts": (True, {"delete-file-threshold": "1"}),
}
HEADLINE = "row-level, purge-only"


def generate(
    folder: Path, batches: int, rows: int, days: int, seed: int, users_count: int = USERS
) -> list[Path]:
    folder.mkdir(parents=True)
    rng = np.random.default_rng(seed)
    users = pa.array([f"user_{i:05d}" for i in range(users_count)])
    paths = []
    for i in range(batches):
        path = folder / f"batch-{i:03d}.parquet"
        pq.write_table(events(rows, i * rows, users, days, rng), path)
        paths.append(path)
    return paths


def scan_files(table: Any, reverted: list[str]) -> dict[str, Any]:
    """Every live file of the current snapshot, read with PyArrow: rows, bytes, and which files
    hold a row of a reverted batch (tombstones ignored: what is physically there)."""
    from app.lake import visible

    wanted = pa.array(reverted, pa.string())
    out: dict[str, Any] = {"files": 0, "bytes": 0, "rows": 0}
    out |= {"holding_files": 0, "holding_bytes": 0, "tombstoned_rows": 0, "all_hidden_files": 0}
    batches_per_file = []
    for planned in visible.plan(table, table.current_snapshot()):
        data_file = planned.data_file
        column = pq.read_table(data_file.file_path.removeprefix("file://"), columns=["_batch_id"])
        ids = column["_batch_id"]
        hits = int(pc.sum(pc.is_in(ids, value_set=wanted)).as_py() or 0)
        out["files"] += 1
        out["bytes"] += data_file.file_size_in_bytes
        out["rows"] += len(ids)
        batches_per_file.append(len(pc.unique(ids)))
        if hits:
            out["holding_files"] += 1
            out["holding_bytes"] += data_file.file_size_in_bytes
            out["tombstoned_rows"] += hits
            out["all_hidden_files"] += hits == len(ids)
    out["batches_per_file"] = float(np.mean(batches_per_file)) if batches_per_file else 0.0
    return out


def build(args: argparse.Namespace, svc: embedded.Service, paths: list[Path]) -> dict[str, Any]:
    """Both datasets ingested, `unsorted` compacted; their pre-revert metadata and batches."""
    client = svc.client
    made = {
        name: embedded.create_dataset(client, {**DATASET, "name": f"events_{name}"})
        for name in LAYOUTS
    }
    batches: dict[str, list[dict[str, Any]]] = {name: [] for name in LAYOUTS}
    began = time.perf_counter()
    for i, path in enumerate(paths):
        for name in LAYOUTS:
            batches[name].append(embedded.ingest(client, made[name]["id"], path))
        if (i + 1) % 10 == 0 or i + 1 == len(paths):
            log(f"ingested batch {i + 1}/{len(paths)} into both datasets")
    ingest_s = time.perf_counter() - began
    body = {
        "strategy": "sort",
        "sort_by": ["payload"],
        "target_file_bytes": args.unsorted_file_mb * 1024 * 1024,
    }
    compact = embedded.run_job(client, f"/v1/datasets/{made['unsorted']['id']}/compact", body)
    log(
        f"unsorted: compacted by payload in {compact['duration_seconds']:.1f}s: "
        f"{compact['result'].get('files')} files -> {compact['result'].get('files_written')}"
    )
    return {"datasets": made, "batches": batches, "ingest_seconds": ingest_s, "compact": compact}


def vacuum_layout(
    svc: embedded.Service, dataset: dict[str, Any], reverted: list[str]
) -> dict[str, Any]:
    """The independent scan, the dry run and the full vacuum of one dataset, with checks."""
    client, did = svc.client, dataset["id"]
    table = embedded.load_table(svc.home, dataset["table"])
    before = scan_files(table, reverted)
    dry = embedded.run_job(client, f"/v1/datasets/{did}/vacuum", {"dry_run": True})
    full = embedded.run_job(client, f"/v1/datasets/{did}/vacuum", {"mode": "full"})
    after = scan_files(embedded.load_table(svc.home, dataset["table"]), reverted)
    result = full["result"]
    problems = []
    if after["tombstoned_rows"]:
        problems.append(f"{after['tombstoned_rows']} tombstoned rows still in live files")
    if after["rows"] != before["rows"] - before["tombstoned_rows"]:
        problems.append(f"live rows {after['rows']:,} != {before['rows']:,} - tombstoned")
    if result.get("rows_purged") != before["tombstoned_rows"]:
        problems.append(f"rows_purged {result.get('rows_purged')} != {before['tombstoned_rows']}")
    return {"before": before, "after": after, "dry": dry, "full": full, "problems": problems}


def run_service(args: argparse.Namespace, home: Path, paths: list[Path]) -> dict[str, Any]:
    with embedded.service(home) as svc:
        out = build(args, svc, paths)
        n = len(paths)
        picks = sorted({int((i + 0.5) * n / args.reverts) for i in range(args.reverts)})
        out["picks"] = picks
        out["metadata"], out["reverted"], out["revert_seconds"] = {}, {}, {}
        for name in LAYOUTS:
            dataset = out["datasets"][name]
            out["metadata"][name] = embedded.load_table(home, dataset["table"]).metadata_location
            ids = [out["batches"][name][i]["id"] for i in picks]
            out["reverted"][name] = ids
            out["revert_seconds"][name] = [
                embedded.revert(svc.client, b)["duration_seconds"] for b in ids
            ]
        out["vacuum"] = {}
        for name in LAYOUTS:
            log(f"{name}: independent scan, vacuum dry run, full vacuum")
            res = vacuum_layout(svc, out["datasets"][name], out["reverted"][name])
            out["vacuum"][name] = res
            full = res["full"]
            log(
                f"{name}: vacuum {full['duration_seconds']:.1f}s, "
                f"{full['result'].get('bytes_rewritten', 0) / 1e6:.1f} MB rewritten; "
                f"holding {res['before']['holding_bytes'] / 1e6:.1f} MB"
                + (f"; PROBLEMS {res['problems']}" if res["problems"] else "")
            )
        return out


def iceberg_purges(args: argparse.Namespace, home: Path, svc: dict[str, Any]) -> dict[str, Any]:
    """Twin tables on each dataset's pre-revert metadata: MOR DELETE, then the timed purge."""
    os.environ["ICEBATCH_HOME"] = str(home)
    from app.config import Settings
    from workers.spark.session import build_session

    settings = Settings(home=home)
    spark = build_session(settings)
    cat = settings.catalog_name
    out: dict[str, Any] = {}
    try:
        for run in range(args.runs):
            for layout in LAYOUTS:
                table = svc["datasets"][layout]["table"]
                namespace = table.split(".")[1]
                expected = (
                    svc["vacuum"][layout]["before"]["rows"]
                    - svc["vacuum"][layout]["before"]["tombstoned_rows"]
                )
                for v, (variant, (row_level, options)) in enumerate(VARIANTS.items()):
                    twin = f"{namespace}.twin_{layout}_{v}_{run}"
                    meta, reverted = svc["metadata"][layout], svc["reverted"][layout]
                    got = purge_twin(spark, cat, twin, meta, reverted, row_level, options)
                    if got["rows"] != expected:
                        raise RuntimeError(f"{twin}: {got['rows']:,} rows != {expected:,}")
                    out.setdefault(layout, {}).setdefault(variant, []).append(got)
                    log(
                        f"iceberg {layout} {variant} run {run + 1}: DELETE "
                        f"{got['delete_seconds']:.2f}s, purge {got['purge_seconds']:.2f}s, "
                        f"{got['rewritten_files']} files / {got['rewritten_bytes'] / 1e6:.1f} MB "
                        f"rewritten -> {got['added_files']} files"
                    )
        return out
    finally:
        spark.stop()


def purge_twin(
    spark: Any,
    cat: str,
    twin: str,
    metadata: str,
    reverted: list[str],
    row_level: bool,
    options: dict[str, str],
) -> dict[str, Any]:
    """Register `twin` on `metadata`, switch it to merge-on-read, DELETE the reverted batches,
    then time `rewrite_data_files`. `row_level` adds a condition Iceberg cannot evaluate on file
    metadata, so Spark writes position deletes even for files whose every row matches (as
    planned, Spark drops such files from the metadata in the DELETE itself)."""
    spark.sql(
        f"CALL {cat}.system.register_table(table => '{twin}', metadata_file => '{metadata}')"
    ).collect()
    props = {f"write.{op}.mode": "merge-on-read" for op in ("delete", "update", "merge")}
    props["write.metadata.delete-after-commit.enabled"] = "false"
    listed = ", ".join(f"'{k}'='{v}'" for k, v in props.items())
    spark.sql(f"ALTER TABLE {cat}.{twin} SET TBLPROPERTIES ({listed})")
    values = ", ".join(f"'{b}'" for b in reverted)
    where = f"_batch_id IN ({values})" + (" AND length(payload) >= 0" if row_level else "")
    began = time.perf_counter()
    spark.sql(f"DELETE FROM {cat}.{twin} WHERE {where}")
    delete_s = time.perf_counter() - began
    summary = spark.sql(
        f"SELECT summary FROM {cat}.{twin}.snapshots ORDER BY committed_at DESC LIMIT 1"
    ).collect()[0]["summary"]
    opts = ", ".join(f"'{k}', '{v}'" for k, v in options.items())
    began = time.perf_counter()
    row = spark.sql(
        f"CALL {cat}.system.rewrite_data_files(table => '{twin}', options => map({opts}))"
    ).collect()[0]
    purge_s = time.perf_counter() - began
    rows = spark.table(f"{cat}.{twin}").count()
    written = spark.sql(
        f"SELECT summary FROM {cat}.{twin}.snapshots ORDER BY committed_at DESC LIMIT 1"
    ).collect()[0]["summary"]
    return {
        "delete_seconds": delete_s,
        "purge_seconds": purge_s,
        "delete_files": int(summary.get("added-delete-files", 0)),
        "removed_files": int(summary.get("deleted-data-files", 0)),
        "position_deletes": int(summary.get("added-position-deletes", 0)),
        "rewritten_files": int(row["rewritten_data_files_count"]),
        "added_files": int(row["added_data_files_count"]),
        "rewritten_bytes": int(row["rewritten_bytes_count"]),
        "added_bytes": int(written.get("added-files-size", 0)),
        "added_rows": int(written.get("added-records", 0)),
        "rows": int(rows),
    }


def goal(ok: bool) -> str:
    return "met" if ok else "NOT met"


def report(args: argparse.Namespace, svc: dict[str, Any], ice: dict[str, Any]) -> None:
    rows = args.batches * args.rows_per_batch
    print(
        f"\nrun: {' '.join(sys.argv[1:]) or '(defaults)'}; {rows:,} rows in {args.batches} "
        f"batches over {args.days} days, ingested into both datasets in "
        f"{svc['ingest_seconds']:.0f}s; reverted batches #{svc['picks']} "
        f"({len(svc['picks'])} of {args.batches}); "
        f"total {time.perf_counter() - embedded.BEGAN:.0f}s"
    )
    print(
        f"unsorted layout: Icebatch compaction sort by payload, target "
        f"{args.unsorted_file_mb} MiB ({svc['compact']['duration_seconds']:.1f}s)"
    )
    print(
        "\n| layout   | live files | MB     | batches/file | holding files | holding MB | "
        "tombstoned rows | dry-run files | dry-run MB | vacuum files rewritten+deleted | "
        "MB rewritten | bytes ratio | goal <= 1.05"
    )
    print("|" + "|".join("-" * w for w in (10, 12, 8, 14, 15, 12, 17, 15, 12, 32, 14, 13, 14)))
    ratios = {}
    for layout in LAYOUTS:
        res = svc["vacuum"][layout]
        b, dry, full = res["before"], res["dry"]["result"], res["full"]["result"]
        rewritten = int(full.get("bytes_rewritten", 0))
        ratio = rewritten / b["holding_bytes"] if b["holding_bytes"] else float("nan")
        ratios[layout] = ratio
        touched = f"{full.get('files_rewritten', 0)}+{full.get('files_deleted', 0)}"
        print(
            f"| {layout:<8} | {b['files']:>10} | {b['bytes'] / 1e6:>6.1f} | "
            f"{b['batches_per_file']:>12.1f} | {b['holding_files']:>13} | "
            f"{b['holding_bytes'] / 1e6:>10.1f} | {b['tombstoned_rows']:>15,} | "
            f"{dry.get('files', 0):>13} | {dry.get('bytes', 0) / 1e6:>10.1f} | {touched:>30} | "
            f"{rewritten / 1e6:>12.1f} | {ratio:>11.3f} | {goal(ratio <= 1.05):>12}"
        )
    print("\nvacuum jobs (seconds; job duration = finished_at - started_at):")
    for layout in LAYOUTS:
        res = svc["vacuum"][layout]
        full = res["full"]
        result = full["result"]
        print(
            f"  {layout}: {full['duration_seconds']:.2f}s, timings {result.get('timings')}, "
            f"rows purged {result.get('rows_purged', 0):,}, tombstones purged "
            f"{result.get('tombstones_purged')}, operation {result.get('iceberg_operation')}; "
            f"dry run {res['dry']['duration_seconds']:.2f}s (rows_to_purge "
            f"{res['dry']['result'].get('rows_to_purge', 0):,}); checks: "
            + ("; ".join(res["problems"]) if res["problems"] else "ok")
        )
        reverts = " ".join(f"{s:.2f}" for s in svc["revert_seconds"][layout])
        print(f"  {layout}: revert jobs {reverts}s")
    print(
        "\nIceberg's purge on the twins (MOR DELETE, then rewrite_data_files; purge s is the "
        f"best of {args.runs}, all runs listed; row-level: a condition Iceberg cannot check on "
        "file metadata, so position deletes are written even for whole files; purge-only: "
        "min-file-size-bytes=0, only files with deletes are rewritten; issue opts: "
        "delete-file-threshold=1 alone):"
    )
    print(
        "| layout   | DELETE / purge options | DELETE s | files dropped | delete files | "
        "purge s (all runs)   | files rewritten -> added | MB rewritten | vacuum s / purge s"
    )
    print("|" + "|".join("-" * w for w in (10, 24, 10, 15, 14, 22, 26, 14, 20)))
    for layout in LAYOUTS:
        vacuum_s = svc["vacuum"][layout]["full"]["duration_seconds"]
        for variant, runs in ice.get(layout, {}).items():
            best = min(runs, key=lambda r: r["purge_seconds"])
            every = " ".join(f"{r['purge_seconds']:.2f}" for r in runs)
            files = f"{best['rewritten_files']} -> {best['added_files']}"
            print(
                f"| {layout:<8} | {variant:<22} | {best['delete_seconds']:>8.2f} | "
                f"{best['removed_files']:>13} | {best['delete_files']:>12} | "
                f"{best['purge_seconds']:>6.2f} ({every:<11}) | {files:>24} | "
                f"{best['rewritten_bytes'] / 1e6:>12.1f} | "
                f"{vacuum_s / best['purge_seconds']:>18.2f}"
            )
    print()
    for layout in LAYOUTS:
        print(
            f"bytes rewritten / bytes of files holding tombstoned rows, {layout}: "
            f"{ratios[layout]:.3f} (goal <= 1.05: {goal(ratios[layout] <= 1.05)})"
        )
    for layout in LAYOUTS:
        written_bytes_per_row(layout, svc["vacuum"][layout]["full"]["result"], ice)
    for layout in LAYOUTS:
        runs = ice.get(layout, {}).get(HEADLINE)
        if runs:
            best = min(runs, key=lambda r: r["purge_seconds"])
            vacuum_s = svc["vacuum"][layout]["full"]["duration_seconds"]
            whole = vacuum_s + sum(svc["revert_seconds"][layout])
            print(
                f"vacuum time / Iceberg purge time ({HEADLINE}), {layout}: "
                f"{vacuum_s / best['purge_seconds']:.2f} ({vacuum_s:.2f}s / "
                f"{best['purge_seconds']:.2f}s); reverts + vacuum / DELETE + purge: "
                f"{whole / (best['delete_seconds'] + best['purge_seconds']):.2f}"
            )


def written_bytes_per_row(layout: str, vacuum: dict[str, Any], ice: dict[str, Any]) -> None:
    """The files the vacuum wrote against those Iceberg's purge (Spark's Parquet writer) wrote
    for the same surviving rows: bytes per row (one line; nothing when the vacuum wrote none)."""
    runs = [r for r in ice.get(layout, {}).get(HEADLINE, []) if r["added_rows"]]
    if not vacuum.get("rows_written") or not runs:
        return
    ours = vacuum["bytes_written"] / vacuum["rows_written"]
    theirs = runs[0]["added_bytes"] / runs[0]["added_rows"]
    print(
        f"bytes written per row, vacuum / Iceberg purge ({HEADLINE}), {layout}: "
        f"{ours / theirs:.3f} ({ours:.1f} / {theirs:.1f} B per row, "
        f"{vacuum['rows_written']:,} / {runs[0]['added_rows']:,} rows)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.vacuum", description=__doc__)
    parser.add_argument("--batches", type=int, default=40)
    parser.add_argument("--rows-per-batch", type=int, default=75_000)
    parser.add_argument("--days", type=int, default=4)
    parser.add_argument("--reverts", type=int, default=3, help="batches reverted")
    parser.add_argument(
        "--unsorted-file-mb", type=int, default=16, help="compaction target of `unsorted`"
    )
    parser.add_argument("--runs", type=int, default=2, help="Iceberg purge runs per twin")
    parser.add_argument("--seed", type=int, default=20261122)
    parser.add_argument("--quick", action="store_true", help="a small smoke run")
    parser.add_argument("--keep", action="store_true", help="keep the temp dir")
    args = parser.parse_args()
    if args.quick:
        args.batches, args.rows_per_batch, args.reverts = 8, 20_000, 2
        args.unsorted_file_mb, args.runs = 1, 1
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    for key in ("ICEBATCH_DATABASE_URL", "ICEBATCH_BROKER_URL", "ICEBATCH_WAREHOUSE"):
        os.environ.pop(key, None)
    now = datetime.now(UTC)
    machine_line(os.environ.get("ICEBATCH_SPARK_MASTER", "local[*]"), f"; {now:%Y-%m-%d %H:%M} UTC")
    with work_dir("icebatch-bench-vacuum-", args.keep) as work:
        rows = args.batches * args.rows_per_batch
        log(f"generating {args.batches} batches x {args.rows_per_batch:,} rows = {rows:,} rows")
        paths = generate(work / "batches", args.batches, args.rows_per_batch, args.days, args.seed)
        svc = run_service(args, work / "home", paths)
        log("Iceberg twins: register, MOR DELETE, rewrite_data_files")
        ice = iceberg_purges(args, work / "home", svc)
        report(args, svc, ice)


if __name__ == "__main__":
    main()
