"""The printed report: the tables of parts (a)-(d) and their ratios against the goals."""

from __future__ import annotations

import argparse
import os
import statistics
from typing import Any

from bench.restatements.commits import Levels
from bench.restatements.shared import DIAG, LEVELS, MODES, pct


def ratio_line(name: str, ice: float, base: float, goal: float | None) -> str:
    ratio = ice / base if base else float("nan")
    verdict = ""
    if goal is not None:
        verdict = f" (goal <= {goal}: {'met' if ratio <= goal else 'NOT met'})"
    return f"{name}: {ratio:.3f}x{verdict}"


def report(args: argparse.Namespace, lake: dict[str, Any], svc: dict[str, Any] | None) -> None:
    print()
    if "levels" in lake:
        levels: Levels = lake["levels"]
        print(f"setup (not measured): {lake['setup_seconds']:.0f}s of appends; layouts:")
        for name, stats in lake["layout"].items():
            print(f"  {name:<14} {stats}")
    if "a" in lake:
        times = lake["a"]["times"]
        best = {k: min(v) for k, v in times.items()}
        print("\n(a) revert one batch (seconds, best of runs; all runs listed)")
        print(f"| {'method':<32} | {'best':>6} | {'median':>6} | all runs | what it did")
        print(f"|{'-' * 34}|{'-' * 8}|{'-' * 8}|{'-' * 10}|{'-' * 40}")
        labels = {
            "icebatch": "Icebatch tombstone commit",
            "batch_cow": "DELETE copy-on-write (ingest)",
            "batch_mor": "DELETE merge-on-read (ingest)",
            "compact_cow": "DELETE copy-on-write (compacted)",
            "compact_mor": "DELETE merge-on-read (compacted)",
        }
        for key, values in times.items():
            what = lake["a"]["effects"].get(key, "1 tombstone, no data file touched")
            runs = " ".join(f"{x:.2f}" for x in values)
            print(
                f"| {labels[key]:<32} | {best[key]:>6.3f} | {statistics.median(values):>6.3f} "
                f"| {runs} | {what}"
            )
        for key, goal in (("cow", 0.1), ("mor", 0.5)):
            for layout in ("batch", "compact"):
                if f"{layout}_{key}" in best:
                    print(
                        ratio_line(
                            f"ratio Icebatch / DELETE {MODES[key]} ({layout} layout)",
                            best["icebatch"],
                            best[f"{layout}_{key}"],
                            goal,
                        )
                    )
    if "b" in lake:
        for engine, result in lake["b"].items():
            times = result["times"]
            what = "read_dataset(...).agg(count, sum(xxhash64(*)))"
            if engine == "arrow":
                what = "visible.row_batches(...), every column materialized"
            print(f"\n(b) full scan, {engine}: {what} (seconds, best of runs)")
            print(
                "  icebatch: at the materializer's snapshot (tombstones in position deletes); "
                "not mat.: at the level's own snapshot, before it"
                + (
                    "; plain SQL: spark.sql('SELECT * ... VERSION AS OF'), no Icebatch code"
                    if engine == "spark"
                    else ""
                )
            )
            spark_engine = engine == "spark"
            extra = " plain SQL |  ratio | planning |" if spark_engine else ""
            print(
                f"| {'tombstones':>10} | {'rows read':>10} | {'icebatch':>8} | {'absent':>8} "
                f"| {'ratio':>6} | not mat. |  ratio |{extra} all runs icebatch / absent"
            )
            print(
                f"|{'-' * 12}|{'-' * 12}|{'-' * 10}|{'-' * 10}|{'-' * 8}|{'-' * 10}|{'-' * 8}|"
                f"{'-' * 11 + '|' + '-' * 8 + '|' + '-' * 10 + '|' if spark_engine else ''}"
                f"{'-' * 28}"
            )
            for level in LEVELS:
                ice, twin = min(times[(level, "icebatch")]), min(times[(level, "absent")])
                runs = " ".join(f"{x:.2f}" for x in times[(level, "icebatch")])
                runs += " / " + " ".join(f"{x:.2f}" for x in times[(level, "absent")])
                before = min(times.get((level, "not materialized"), [ice]))
                cells = f" {before:>8.2f} | {before / twin:>5.2f}x |"
                if spark_engine:
                    plain = min(times[(level, "plain SQL")])
                    cells += (
                        f" {plain:>9.2f} | {plain / twin:>5.2f}x |"
                        f" {min(times[(level, 'planning')]):>8.2f} |"
                    )
                print(
                    f"| {level:>10,} | {result['rows'][level]:>10,} | {ice:>8.2f} | {twin:>8.2f} "
                    f"| {ice / twin:>5.2f}x |{cells} {runs}"
                )
            for name in ("scan + _file", "anti join only"):
                if (DIAG, name) in times:
                    values = times[(DIAG, name)]
                    print(
                        f"  diagnostic at {DIAG:,}: {name:<14} best {min(values):.2f}s "
                        f"(runs {' '.join(f'{x:.2f}' for x in values)})"
                    )
            for level in (10_000, 100_000):
                twin = min(times[(level, "absent")])
                sides = ["icebatch", "plain SQL"] if spark_engine else ["icebatch"]
                for side in sides:
                    label = engine if side == "icebatch" else "plain Spark SQL"
                    ice = min(times[(level, side)])
                    print(
                        ratio_line(
                            f"ratio at {level // 1000}k tombstones ({label})", ice, twin, 1.1
                        )
                    )
    if "levels" in lake and lake["levels"].materialize:
        levels = lake["levels"]
        print("\n(b) the materializer at each level (resolve: read the tombstoned column of the")
        print("  files that may hold an id and write delete files; commit: the ROW DELTA)")
        print(
            f"| {'level':>8} | {'new tombstones':>14} | {'files read':>10} | {'delete files':>12} "
            f"| {'replaced':>8} | {'positions':>9} | {'resolve s':>9} | {'commit s':>8} |"
        )
        print("|" + "|".join("-" * n for n in (10, 16, 12, 14, 10, 11, 11, 10)) + "|")
        for level, cost in levels.materialize.items():
            print(
                f"| {level:>8,} | {cost['tombstones']:>14,.0f} | {cost['files_read']:>10,.0f} "
                f"| {cost['delete_files']:>12,.0f} | {cost['replaced']:>8,.0f} "
                f"| {cost['positions']:>9,.0f} | {cost['resolve']:>9.2f} | {cost['commit']:>8.2f} |"
            )
    if "levels" in lake:
        levels = lake["levels"]
        low, high = LEVELS[1], LEVELS[-1]
        print(f"\n(c) tombstone commit of {args.small_commit} ids, {args.commits} commits each")
        print(
            "  (seconds: load + commit; 'commit only' leaves out the catalog load; 'no tombstone' "
            "is a control commit that adds a snapshot only)"
        )
        print(
            f"| {'active':>8} | {'snapshots':>9} | {'median':>6} | {'p90':>6} | {'max':>6} "
            f"| commit only, median | no tombstone, median |"
        )
        print(f"|{'-' * 10}|{'-' * 11}|{'-' * 8}|{'-' * 8}|{'-' * 8}|{'-' * 21}|{'-' * 22}|")
        for level in (low, high):
            values = levels.commit_small[level]
            print(
                f"| {level:>8,} | {levels.history:>9} | {statistics.median(values):>6.3f} "
                f"| {pct(values, 0.9):>6.3f} | {max(values):>6.3f} "
                f"| {statistics.median(levels.commit_only[level]):>19.3f} "
                f"| {statistics.median(levels.commit_empty[level]):>20.3f} |"
            )
        print(
            ratio_line(
                "ratio median at 100k / at 1k (load + commit)",
                statistics.median(levels.commit_small[high]),
                statistics.median(levels.commit_small[low]),
                1.5,
            )
        )
    if svc is not None:
        report_service(svc)


def report_service(svc: dict[str, Any]) -> None:
    print(
        f"\n(d) service: a {svc['table_rows']:,}-row table ({svc['files']} files ingested through "
        f"the API as {svc['batches']} batches in {svc['ingest_seconds']:.0f}s); GDPR requests of "
        f"1-3 user ids each"
    )
    for run in svc["runs"]:
        visible_after, post, jobs = run["visible"], run["post_latency"], run["jobs"]
        print(
            f"- offered {run['rate']:.0f}/s, at most {run['in_flight']} in flight, for "
            f"{run['window']:.1f}s ({run['offered']} requests): {run['statuses']}"
        )
        print(
            f"  accepted (202) {run['accepted']} = {run['accepted_per_s']:.1f}/s; POST latency "
            f"p50 {pct(post, 0.5):.3f}s p99 {pct(post, 0.99):.3f}s"
        )
        print(
            f"  202 -> tombstones in the current snapshot: p50 {pct(visible_after, 0.5):.2f}s, "
            f"p99 {pct(visible_after, 0.99):.2f}s, max {max(visible_after, default=0):.2f}s "
            f"({run['missing']} never seen)"
        )
        print(
            f"  job created -> job succeeded (server clock): p50 {pct(jobs['seconds'], 0.5):.2f}s, "
            f"p99 {pct(jobs['seconds'], 0.99):.2f}s; states {jobs['states']}; backlog drained "
            f"{run['drain_seconds']:.1f}s after the window"
        )
        sizes, work = run["group_sizes"], run["worker"]
        print(
            f"  {len(sizes)} group commits, requests per commit median "
            f"{statistics.median(sizes) if sizes else 0:.0f}, max {max(sizes, default=0)}; worker: "
            f"{work['tasks']} tasks in {work['task_seconds']:.1f}s, {work['long_tasks']} over "
            f"20 ms ({work['long_seconds']:.1f}s), {work['skipped']} found their job done"
        )
        cpu = ", ".join(f"{k} {v:.1f}" for k, v in run["cpu"].items())
        print(
            f"  CPU seconds in the window: {cpu}; machine busy {run['machine_busy'] * 100:.0f}% "
            f"of {len(os.sched_getaffinity(0))} cores"
        )
        mat = run["materialization"]
        lags = mat["lags"]
        print(
            f"  tombstone commit -> materialized (position deletes committed): p50 "
            f"{pct(lags, 0.5):.2f}s, p90 {pct(lags, 0.9):.2f}s, p99 {pct(lags, 0.99):.2f}s, max "
            f"{max(lags, default=0):.2f}s over {mat['commits']} commits ({mat['never']} not "
            f"materialized), {mat['runs']} materializer commits; goal p99 <= 30 s: "
            f"{'met' if lags and pct(lags, 0.99) <= 30 and not mat['never'] else 'NOT met'}"
        )
        p99 = pct(visible_after, 0.99)
        print(
            f"  goal accepted >= 200/s: {'met' if run['accepted_per_s'] >= 200 else 'NOT met'}; "
            f"goal p99 visible <= 2 s: {'met' if p99 <= 2 and not run['missing'] else 'NOT met'}"
        )
    print(
        f"  check: {svc['check_values']} deleted user ids, {svc['leftover_rows']} of their rows "
        f"still visible (count_by_value, {svc['check_seconds']:.1f}s), {svc['plain_leftover']} "
        f"in PyIceberg's plain scan; {svc['snapshots']} snapshots, {svc['delete_files']} live "
        f"delete files for {svc['data_files']} data files"
    )
    print(
        f"  the committer's rows-hidden count for a group of 10 ids (visible.count_by_value on "
        f"this table, best of 3, column indexes built first in "
        f"{svc.get('index_seconds', float('nan')):.1f}s): {svc['probe_seconds']:.3f}s"
    )
