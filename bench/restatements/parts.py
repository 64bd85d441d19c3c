"""Parts (a)-(c), in this process: one lake (SparkSession + catalog), its tables written once,
the tombstone levels built (with part (c)'s commits), then parts (a) and (b)."""

from __future__ import annotations

import argparse
import contextlib
import statistics
from pathlib import Path
from typing import Any

from bench.restatements.commits import build_levels
from bench.restatements.data import Data
from bench.restatements.lake import Lake, open_lake, write_tables
from bench.restatements.reads import part_b
from bench.restatements.revert import part_a
from bench.restatements.shared import LEVELS, log


def run_lake(args: argparse.Namespace, data: Data, work: Path, database: str) -> dict[str, Any]:
    lake = open_lake(work / "home", database)
    try:
        return lake_parts(args, data, work, lake)
    finally:
        lake.spark.stop()
        with contextlib.suppress(Exception):
            lake.catalog.engine.dispose()


def lake_parts(args: argparse.Namespace, data: Data, work: Path, lake: Lake) -> dict[str, Any]:
    parts = args.parts
    out, twins = write_tables(lake, data, work, parts, args.compacted)
    levels = build_levels(lake, data, args.build_chunk, args.small_commit, args.commits)
    out["levels"] = levels
    log(
        f"(c) commits of {args.small_commit} at 1k: median "
        f"{statistics.median(levels.commit_small[LEVELS[1]]):.3f}s, at 100k: median "
        f"{statistics.median(levels.commit_small[LEVELS[-1]]):.3f}s "
        f"(levels built in {levels.build_seconds:.1f}s)"
    )
    if "a" in parts:
        log("(a) revert one batch: Icebatch tombstone vs Spark DELETE on the twins")
        out["a"] = part_a(lake, data, args.runs, twins)
    if "b" in parts:
        log("(b) full scans: tombstones vs rows physically absent")
        out["b"] = part_b(lake, levels, args.runs, args.arrow_runs)
    return out
