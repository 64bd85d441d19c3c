"""The command line of the scale benchmark: `python -m bench.scale --help`."""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import traceback
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import bench.scale
from bench.common import local_run, work_dir
from bench.restatements.lake import Lake, open_lake
from bench.restatements.shared import BEGAN, log
from bench.scale import checkpoint
from bench.scale.bursts import burst
from bench.scale.report import print_level, report
from bench.scale.scans import full_scans
from bench.scale.service import Service, running
from bench.scale.workload import Workload, generate

QUICK: dict[str, Any] = {
    "rows": 200_000,
    "rows_per_file": 50_000,
    "levels": [100, 500, 1_000],
    "burst": 150,
    "rate": 40.0,
    "vacuum_at": 300,
    "retention_seconds": 60.0,
    "probes": 3,
    "runs": 2,
    "slice_runs": 2,
    "ingest_batches": 2,
}


def numbers(text: str) -> list[int]:
    return [int(x) for x in text.split(",")]


def shares(text: str) -> tuple[float, float, float]:
    gdpr, revert, replay = (float(x) for x in text.split(","))
    total = gdpr + revert + replay
    return gdpr / total, revert / total, replay / total


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.scale",
        description=bench.scale.__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add = parser.add_argument
    add("--rows", type=int, default=5_000_000, help="base rows of the dataset")
    add("--rows-per-file", type=int, default=100_000)
    add("--users", type=int, default=0, help="identities with rows (0: rows / 5)")
    add("--ingest-batches", type=int, default=5, help="batches the base rows are ingested as")
    add("--side-rows", type=int, default=100, help="rows of a side batch (reverts, replays)")
    add("--levels", type=numbers, default=[1_000, 10_000, 50_000, 100_000])
    add("--burst", type=int, default=2_000, help="restatements per burst")
    add("--rate", type=float, default=100.0, help="requests per second within a burst")
    add("--in-flight", type=int, default=32, help="requests open at once within a burst")
    add("--pause", type=float, default=5.0, help="seconds between bursts")
    add("--mix", type=shares, default=(0.9, 0.05, 0.05), help="GDPR,revert,replay shares")
    add("--ingest-rate", type=float, default=20.0, help="side batch ingests per second")
    add("--ingest-in-flight", type=int, default=4)
    add("--probes", type=int, default=5, help="GDPR probes and small ingests at each level")
    add(
        "--runs",
        type=int,
        default=7,
        help="full scans per reader at each level, interleaved (best of; medians printed too)",
    )
    add("--slice-runs", type=int, default=3)
    add("--scheduler-seconds", type=float, default=10.0)
    add("--vacuum-at", type=int, default=20_000, help="ICEBATCH_AUTO_VACUUM_TOMBSTONES")
    add("--retention-seconds", type=float, default=600.0, help="max snapshot age")
    add("--min-snapshots", type=int, default=5)
    add("--set", action="append", default=[], metavar="KEY=VALUE", help="a service setting")
    add(
        "--beat",
        choices=("worker", "process"),
        default="worker",
        help="the maintenance scheduler in the worker (`icebatch worker --beat`) or apart",
    )
    add("--api-processes", type=int, default=1)
    # 1 (Celery's solo pool) is what `icebatch up` and `icebatch worker` run; above 1 the worker
    # runs a thread pool, which took a job message about every 2 s in this bench's runs
    add("--worker-concurrency", type=int, default=1)
    add("--poll", type=float, default=0.05, help="observer poll seconds")
    add("--drain-timeout", type=float, default=1800.0)
    add("--seed", type=int, default=20261201)
    add("--out", type=Path, default=None, help="folder of scale.json and scale.png")
    add("--quick", action="store_true", help="a small smoke run")
    add("--keep", action="store_true", help="keep the temp dir")
    args = parser.parse_args()
    if args.quick:  # smaller defaults; options given on the command line still win
        parser.set_defaults(**QUICK)
        args = parser.parse_args()
    args.users = args.users or args.rows // 5
    args.levels = sorted(args.levels)
    if args.out is None:
        stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
        args.out = Path(tempfile.gettempdir()) / f"icebatch-bench-scale-{stamp}"
    return args


def main() -> None:
    args = parse()
    local_run()
    command = " ".join(["python -m bench.scale", *sys.argv[1:]])
    print(f"command: {command}", flush=True)
    try:
        with work_dir("icebatch-bench-scale-", args.keep) as work:
            met = run(args, work, command)
    except Exception as exc:  # a wrong read, a failed job, a process that died: no figures
        traceback.print_exc()
        print(f"\nFAILED: {exc}", flush=True)
        sys.exit(2)
    sys.exit(0 if met else 1)


def run(args: argparse.Namespace, work: Path, command: str) -> bool:
    log(f"generating {args.rows:,} rows of {args.users:,} identities")
    workload = generate(
        work / "rows",
        args.rows,
        args.rows_per_file,
        args.users,
        args.ingest_batches,
        args.side_rows,
        args.seed,
    )
    with running(args, work / "service", workload) as svc:
        log(f"dataset ready: {args.rows:,} rows ingested in {svc.ingest_seconds:.1f}s")
        lake = open_lake(svc.home, svc.database_url.rsplit("/", 1)[1])
        try:
            levels = climb(args, svc, lake, workload, work)
        finally:
            lake.spark.stop()
    mix = "/".join(f"{share:g}" for share in args.mix)
    meta = {
        "command": command,
        "title": f"bench.scale: {args.rows:,} rows, {levels[-1]['restatements']:,} restatements "
        f"(mix {mix}), bursts of {args.burst} at {args.rate:g}/s",
        "args": {k: str(v) for k, v in vars(args).items()},
        "ingest_seconds": svc.ingest_seconds,
        "total_seconds": time.perf_counter() - BEGAN,
    }
    print(f"\ncommand: {command}; total {meta['total_seconds']:.0f}s")
    return report(levels, meta, args.out)


def climb(
    args: argparse.Namespace, svc: Service, lake: Lake, workload: Workload, work: Path
) -> list[dict[str, Any]]:
    """Bursts up to each level, then the level's measurements."""
    done, levels = 0, []
    since, since_ms = datetime.now(UTC), int(time.time() * 1000)
    for level in args.levels:
        bursts: list[dict[str, Any]] = []
        while done < level - args.probes:
            if bursts and args.pause:
                time.sleep(args.pause)
            bursts.append(burst(svc, workload, min(args.burst, level - args.probes - done), args))
            done += bursts[-1]["accepted"]
        log(f"level {level:,}: {done:,} restatements accepted; settling")
        settled = checkpoint.settle(svc, args.drain_timeout)
        probes = checkpoint.probe_restatements(svc, workload, args.probes, args.drain_timeout)
        done += len(probes)
        appends = checkpoint.probe_appends(svc, workload, args.probes)
        settled += checkpoint.settle(svc, args.drain_timeout)
        shape = checkpoint.table_shape(svc.table())
        scans = full_scans(lake, svc, workload, level, work, args.runs)
        result = {
            "level": level,
            "restatements": done,
            "bursts": bursts,
            "settle_seconds": settled,
            "probe_commit": probes,
            "probe_append": appends,
            "shape": shape,
            "scans": scans,
            "slice": checkpoint.slice_reads(svc, scans["rows"], args.slice_runs),
            "maintenance": checkpoint.maintenance_jobs(svc, since),
            "store": checkpoint.store_rows(svc.database_url),
            "lag": checkpoint.lag(svc, since_ms),
            "broker_backlog": checkpoint.broker_backlog(svc.broker_url),
            "deleted_identities": len(workload.deleted),
            "live_side_batches": len(workload.live),
        }
        levels.append(result)
        print_level(result)
        since, since_ms = datetime.now(UTC), int(time.time() * 1000)
    return levels


if __name__ == "__main__":
    main()
