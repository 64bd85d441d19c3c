"""The command line of the restatements benchmark: `python -m bench.restatements --help`."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import bench.restatements
from bench.common import local_run, work_dir
from bench.restatements.data import generate
from bench.restatements.infra import create_database, drop_database
from bench.restatements.parts import run_lake
from bench.restatements.report import report
from bench.restatements.service import run_service
from bench.restatements.shared import BEGAN, log


def parse_rates(text: str) -> list[tuple[float, int | None]]:
    out: list[tuple[float, int | None]] = []
    for item in text.split(","):
        rate, _, cap = item.partition(":")
        out.append((float(rate), int(cap) if cap else None))
    return out


def main() -> None:
    # the usage line names the module file as it did before the package (`restatements.py`)
    parser = argparse.ArgumentParser(
        prog="python -m bench.restatements", description=bench.restatements.__doc__
    )
    parser.add_argument("--batches", type=int, default=50)
    parser.add_argument("--rows-per-batch", type=int, default=100_000)
    parser.add_argument("--duration", type=float, default=60.0, help="(d) seconds of requests")
    parser.add_argument(
        "--rate",
        dest="rates",
        type=parse_rates,
        default=[(200.0, None)],
        help="(d) GDPR requests per second, RATE or RATE:IN_FLIGHT (a client-side cap on "
        "concurrent requests, default --in-flight); a comma list runs each in turn",
    )
    parser.add_argument("--runs", type=int, default=3, help="(a), (b) runs per side")
    parser.add_argument("--arrow-runs", type=int, default=2, help="(b) PyArrow runs; 0 skips")
    parser.add_argument("--commits", type=int, default=20, help="(c) commits per level")
    parser.add_argument("--small-commit", type=int, default=10, help="(c) tombstones a commit")
    parser.add_argument(
        "--build-chunk", type=int, default=2_000, help="tombstones per build commit"
    )
    parser.add_argument("--no-compacted", dest="compacted", action="store_false")
    parser.add_argument("--parts", default="abcd", help="which parts to run, e.g. 'abc' or 'd'")
    parser.add_argument("--api-processes", type=int, default=1)
    parser.add_argument("--worker-concurrency", type=int, default=1)
    parser.add_argument("--service-batches", type=int, default=5, help="(d) ingest batches")
    parser.add_argument("--service-files", type=int, default=0, help="(d) files (0: all)")
    parser.add_argument("--in-flight", type=int, default=128, help="(d) concurrent requests")
    parser.add_argument("--poll", type=float, default=0.05, help="(d) observer poll seconds")
    parser.add_argument("--drain-timeout", type=float, default=300.0)
    parser.add_argument(
        "--warmup",
        type=float,
        default=10.0,
        help="(d) seconds of requests at the first rate before the measured runs, not measured "
        "(a new worker builds its column indexes meanwhile); 0: none",
    )
    parser.add_argument("--seed", type=int, default=20261121)
    parser.add_argument("--quick", action="store_true", help="a small smoke run")
    parser.add_argument("--keep", action="store_true", help="keep the temp dir")
    args = parser.parse_args()
    if args.quick:
        args.batches, args.rows_per_batch, args.duration, args.rates = (
            6,
            20_000,
            8.0,
            [(40.0, None)],
        )
        args.runs, args.arrow_runs, args.commits, args.service_batches = 1, 1, 5, 2
    local_run()
    with work_dir("icebatch-bench-restate-", args.keep) as work:
        run(args, work)


def run(args: argparse.Namespace, work: Path) -> None:
    """Generate the data, run the parts asked for, print the report."""
    database = create_database("icebatch_bench") if set(args.parts) & set("abc") else None
    try:
        rows = args.batches * args.rows_per_batch
        log(f"generating {args.batches} batches x {args.rows_per_batch:,} rows = {rows:,} rows")
        data = generate(work / "batches", args.batches, args.rows_per_batch, args.seed)
        lake = run_lake(args, data, work, database) if database else {}
        svc = run_service(args, data, work) if "d" in args.parts else None
        print(
            f"\nrun: {' '.join(sys.argv[1:]) or '(defaults)'}; {rows:,} rows in {args.batches} "
            f"batches; total {time.perf_counter() - BEGAN:.0f}s"
        )
        report(args, lake, svc)
    finally:
        if database:
            drop_database(database)


if __name__ == "__main__":
    main()
