"""The scale run's report: a row of figures per level, the goals (last level against the first,
and every level), the JSON of everything measured and a PNG of each cost against the number of
restatements."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.restatements.shared import pct
from bench.scale.checkpoint import median

# (key, header, format) of the printed table, in order
COLUMNS = [
    ("restatements", "restated", "{:,.0f}"),
    ("accepted_per_s", "acc/s", "{:.0f}"),
    ("active_tombstones", "active", "{:,.0f}"),
    ("probe_commit", "tomb s", "{:.2f}"),
    ("burst_p50", "burst p50", "{:.2f}"),
    ("burst_p99", "burst p99", "{:.2f}"),
    ("append", "append s", "{:.2f}"),
    ("metadata_kb", "meta KB", "{:,.0f}"),
    ("snapshots", "snaps", "{:.0f}"),
    ("data_manifests", "data mf", "{:.0f}"),
    ("delete_manifests", "del mf", "{:.0f}"),
    ("slice", "1% slice s", "{:.2f}"),
    ("spark_icebatch", "spark ice", "{:.2f}"),
    ("spark_plain", "spark SQL", "{:.2f}"),
    ("spark_absent", "absent", "{:.2f}"),
    ("arrow_icebatch", "arrow ice", "{:.2f}"),
    ("arrow_absent", "absent", "{:.2f}"),
    ("vacuums", "vacuums", "{:.0f}"),
    ("vacuum_max", "vacuum max s", "{:.1f}"),
    ("store_rows", "store rows", "{:,.0f}"),
    ("lag_p50", "lag p50", "{:.1f}"),
    ("lag_p99", "lag p99", "{:.1f}"),
    ("delete_files", "del files", "{:.0f}"),
    ("data_files", "data files", "{:.0f}"),
]


def flat(level: dict[str, Any]) -> dict[str, float]:
    """The level's headline figures (seconds unless named otherwise)."""
    visible = waited(level)
    accepted = sum(b["accepted"] for b in level["bursts"])
    window = sum(b["window"] for b in level["bursts"])
    best, shape, jobs = level["scans"]["best"], level["shape"], level["maintenance"]
    vacuums = jobs["vacuum"]["seconds"]
    return {
        "restatements": level["restatements"],
        "accepted_per_s": accepted / window if window else math.nan,
        "active_tombstones": shape["active_tombstones"],
        "probe_commit": median(level["probe_commit"]),
        "burst_p50": pct(visible, 0.5),
        "burst_p99": pct(visible, 0.99),
        "gdpr_p99": by_kind(level)["gdpr"]["p99"],
        "append": median(level["probe_append"]),
        "metadata_kb": shape["metadata_json_bytes"] / 1024,
        "snapshots": shape["snapshots"],
        "data_manifests": shape["data_manifests"],
        "delete_manifests": shape["delete_manifests"],
        "slice": median(level["slice"]["seconds"]),
        "spark_icebatch": best["icebatch spark"],
        "spark_plain": best["plain spark sql"],
        "spark_absent": best["absent spark"],
        "arrow_icebatch": best["icebatch arrow"],
        "arrow_absent": best["absent arrow"],
        "vacuums": jobs["vacuum"]["count"],
        "vacuum_max": max(vacuums, default=math.nan),  # nan: none ran
        "store_rows": sum(level["store"].values()),
        "lag_p50": pct(level["lag"]["lags"], 0.5),
        "lag_p99": pct(level["lag"]["lags"], 0.99),
        "delete_files": shape["delete_files"],
        "data_files": shape["data_files"],
    }


def waited(level: dict[str, Any]) -> list[float]:
    """Every restatement's 202 -> visible over the level's bursts."""
    return [v for b in level["bursts"] for k in b["kinds"].values() for v in k["visible"]]


def scan_ratio(
    level: dict[str, Any], side: str, base: str, pick: Callable[[list[float]], float]
) -> float:
    """A reader's full scan seconds ÷ the twin's, each side's runs reduced by `pick`."""
    times = level["scans"]["times"]
    return pick(times[side]) / pick(times[base])


def by_kind(level: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Per restatement kind, over the level's bursts: accepted, and 202 -> visible p50, p99."""
    out = {}
    for kind in ("gdpr", "revert", "replay"):
        values = [v for b in level["bursts"] for v in b["kinds"][kind]["visible"]]
        accepted = sum(b["kinds"][kind]["accepted"] for b in level["bursts"])
        out[kind] = {"accepted": accepted, "p50": pct(values, 0.5), "p99": pct(values, 0.99)}
    return out


def print_level(level: dict[str, Any]) -> None:
    row = flat(level)
    print("  " + ", ".join(f"{h} {f.format(row[k])}" for k, h, f in COLUMNS), flush=True)
    kinds = by_kind(level)
    print(
        "  202 -> visible: "
        + ", ".join(
            f"{k} {v['accepted']} p50 {v['p50']:.2f}s p99 {v['p99']:.2f}s" for k, v in kinds.items()
        )
        + f"; broker backlog {level['broker_backlog']} messages",
        flush=True,
    )


def goals(rows: list[dict[str, float]], levels: list[dict[str, Any]]) -> list[tuple[str, bool]]:
    """Each goal's line and whether it is met."""
    first, last = rows[0], rows[-1]
    out = []

    def ratio(key: str) -> float:
        return last[key] / first[key] if first[key] else math.nan

    for side, base, what in (
        ("icebatch spark", "absent spark", "Icebatch read_dataset (Spark)"),
        ("plain spark sql", "absent spark", "plain Spark SQL"),
        ("icebatch arrow", "absent arrow", "Icebatch row_batches (PyArrow)"),
    ):
        ratios = [scan_ratio(level, side, base, min) for level in levels]
        medians = [scan_ratio(level, side, base, median) for level in levels]
        text = " ".join(f"{x:.2f}x" for x in ratios)
        out.append(
            (
                f"full scan / absent, {what}, per level: {text} (goal <= 1.1 at every level; "
                f"medians {' '.join(f'{x:.2f}x' for x in medians)})",
                all(x <= 1.1 for x in ratios),
            )
        )
    waits = [max(waited(level), default=0.0) for level in levels]
    out.append(
        (
            f"longest 202 -> visible of a restatement per level: "
            f"{' '.join(f'{x:.1f}s' for x in waits)} (goal: none over 30 s)",
            all(x <= 30 for x in waits),
        )
    )
    lags = [r["lag_p99"] for r in rows]
    never = sum(level["lag"]["never"] for level in levels)
    out.append(
        (
            f"materialization lag p99 per level: {' '.join(f'{x:.1f}s' for x in lags)}, "
            f"{never} commits never materialized (goal <= 30 s throughout)",
            all(x <= 30 for x in lags) and not never,
        )
    )
    # the commit latencies' goal, and what "bounded by retention and maintenance" is taken as
    for key, what, goal in (
        ("probe_commit", "tombstone commit (202 -> visible, quiet probes) s", "goal"),
        ("burst_p50", "tombstone commit under load (202 -> visible p50) s", "goal"),
        ("burst_p99", "tombstone commit under load (202 -> visible p99) s", "goal"),
        ("append", "snapshot commit (small ingest, open -> success) s", "goal"),
        ("metadata_kb", "metadata.json KB", "bounded:"),
        ("delete_files", "position delete files", "bounded:"),
        ("data_manifests", "data manifests", "bounded:"),
    ):
        value = ratio(key)
        out.append(
            (
                f"{what} at {last['restatements']:,.0f} / at {first['restatements']:,.0f}: "
                f"{value:.2f}x ({first[key]:,.2f} -> {last[key]:,.2f}; {goal} <= 1.5x)",
                value <= 1.5,
            )
        )
    return out


def report(levels: list[dict[str, Any]], meta: dict[str, Any], out: Path) -> bool:
    """Print the table and the goals, write scale.json and scale.png to `out`; all goals met."""
    rows = [flat(level) for level in levels]
    print("\nper level (seconds unless named; tomb s: median of quiet GDPR probes 202 -> visible;")
    print(
        "  burst: 202 -> visible of the bursts' restatements; append: small ingest open -> success;"
    )
    print(
        "  scans: best of runs at the current snapshot; vacuums: automatic, since the level before)"
    )
    widths = [max(len(h), 9) for _, h, _ in COLUMNS]
    print(
        "| " + " | ".join(h.rjust(w) for (_, h, _), w in zip(COLUMNS, widths, strict=True)) + " |"
    )
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in rows:
        cells = [f.format(row[k]).rjust(w) for (k, _, f), w in zip(COLUMNS, widths, strict=True)]
        print("| " + " | ".join(cells) + " |")
    print("\n202 -> visible per kind over the bursts since the level before (p50 / p99 s), and")
    print("  the broker's queue (messages) when the level was measured:")
    for level in levels:
        kinds = by_kind(level)
        text = ", ".join(
            f"{k} {v['accepted']:,}: {v['p50']:.2f} / {v['p99']:.2f}" for k, v in kinds.items()
        )
        print(f"  {level['restatements']:>8,}: {text}; broker {level['broker_backlog']:,}")
    print("\nmetadata store rows per table (not a goal):")
    for name in levels[-1]["store"]:
        counts = " -> ".join(f"{lv['store'].get(name, 0):,}" for lv in levels)
        print(f"  {name}: {counts}")
    print("\ngoals:")
    checked = goals(rows, levels)
    for line, met in checked:
        print(f"  {'met    ' if met else 'NOT met'}  {line}")
    out.mkdir(parents=True, exist_ok=True)
    (out / "scale.json").write_text(
        json.dumps({"meta": meta, "levels": levels, "rows": rows}, indent=1, default=str)
    )
    plot(rows, out / "scale.png", meta["title"])
    print(f"\nwrote {out / 'scale.json'} and {out / 'scale.png'}")
    return all(met for _, met in checked)


# (title, y label, [(key, label)], goal line or None) of each subplot
PANELS: list[tuple[str, str, list[tuple[str, str]], float | None]] = [
    (
        "tombstone commit: 202 -> visible",
        "s",
        [
            ("probe_commit", "quiet probe"),
            ("burst_p50", "burst p50"),
            ("gdpr_p99", "burst p99, GDPR"),
            ("burst_p99", "burst p99, all (replays)"),
        ],
        None,
    ),
    ("snapshot commit: small ingest", "s", [("append", "open -> success")], None),
    ("metadata.json", "KB", [("metadata_kb", "size")], None),
    (
        "manifests of the current snapshot",
        "count",
        [("data_manifests", "data"), ("delete_manifests", "delete")],
        None,
    ),
    ("API read of a 1% slice", "s", [("slice", "GET /rows")], None),
    (
        "full scan, Spark",
        "s",
        [
            ("spark_icebatch", "read_dataset"),
            ("spark_plain", "plain SQL"),
            ("spark_absent", "absent"),
        ],
        None,
    ),
    (
        "full scan, PyArrow",
        "s",
        [("arrow_icebatch", "row_batches"), ("arrow_absent", "absent")],
        None,
    ),
    (
        "full scan / absent",
        "ratio",
        [
            ("ratio_spark", "read_dataset"),
            ("ratio_plain", "plain SQL"),
            ("ratio_arrow", "row_batches"),
        ],
        1.1,
    ),
    ("automatic vacuum (since the level before)", "s", [("vacuum_max", "longest job")], None),
    ("metadata store", "rows", [("store_rows", "all tables")], None),
    ("materialization lag", "s", [("lag_p50", "p50"), ("lag_p99", "p99")], 30.0),
    (
        "files of the current snapshot",
        "count",
        [("data_files", "data"), ("delete_files", "position delete")],
        None,
    ),
]


def plot(rows: list[dict[str, float]], path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    for row in rows:
        row["ratio_spark"] = row["spark_icebatch"] / row["spark_absent"]
        row["ratio_plain"] = row["spark_plain"] / row["spark_absent"]
        row["ratio_arrow"] = row["arrow_icebatch"] / row["arrow_absent"]
    x = [row["restatements"] for row in rows]
    figure, axes = plt.subplots(4, 3, figsize=(15, 16))
    for ax, (name, unit, series, goal) in zip(axes.flat, PANELS, strict=True):
        for key, label in series:
            ax.plot(x, [row[key] for row in rows], marker="o", label=label)
        if goal is not None:
            ax.axhline(goal, color="red", linestyle="--", linewidth=1, label=f"goal {goal:g}")
        ax.set_xscale("log")
        ax.set_xlim(min(x) / 1.5, max(x) * 1.5)  # the same on every panel, nan points or not
        ax.set_title(name, fontsize=10)
        ax.set_ylabel(unit)
        ax.set_xlabel("restatements")
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    figure.suptitle(title, fontsize=11)
    figure.tight_layout(rect=(0, 0, 1, 0.98))
    figure.savefig(path, dpi=90)
    plt.close(figure)
