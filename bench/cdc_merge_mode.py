"""CDC raw table: copy-on-write against merge-on-read MERGE, measured in one run.

Run: `.venv/bin/python -m bench.cdc_merge_mode [--rows 400000] [--runs 4] [--updates 0.05]
[--inserts 0.01] [--keep]`.

Two tables with the raw table's layout (bucket(4, cluster_id), sorted by cluster and entity,
a ~200-byte JSON document) are loaded with the same `--rows` entities; then `--runs` MERGEs of
the same source rows (updates of a random `--updates` share of the entities, inserts of
`--inserts` new ones, a few deletes) go into each, interleaved: one with
`write.merge.mode=copy-on-write`, one with `merge-on-read`. Printed: each mode's MERGE seconds
(median), the full scan and a filtered scan of the result (what every reader pays), and the
ratios. The raw table is read by `/rows` and `/changes`, which read data files only: a
merge-on-read table's position deletes would also need the readers to apply them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import warnings

from bench.common import machine_line, work_dir


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=400_000)
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument("--updates", type=float, default=0.05)
    parser.add_argument("--inserts", type=float, default=0.01)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    with work_dir("icebatch-bench-merge-", args.keep) as work:
        os.environ["ICEBATCH_HOME"] = str(work)
        os.environ.setdefault("ICEBATCH_SPARK_MASTER", "local[2]")
        os.environ.setdefault("ICEBATCH_SPARK_DRIVER_MEMORY", "4g")
        warnings.simplefilter("ignore", DeprecationWarning)
        from app.cli.server import migrate

        migrate()
        from pyspark.sql import functions as F

        from workers.spark.session import get_spark

        spark = get_spark()
        machine_line(os.environ["ICEBATCH_SPARK_MASTER"])
        spark.sql("CREATE NAMESPACE IF NOT EXISTS icebatch.bench")
        base = (
            spark.range(args.rows)
            .select(
                F.format_string("e%08d", "id").alias("entity_id"),
                F.format_string("e%08d", (F.col("id") / 3).cast("long") * 3).alias("cluster_id"),
                F.lit(1).cast("long").alias("sequence"),
                F.to_json(
                    F.struct(
                        F.col("id").alias("n"),
                        F.sha2(F.col("id").cast("string"), 256).alias("h"),
                        F.struct(F.lit("FR").alias("country"), F.lit("Lyon").alias("city")).alias(
                            "address"
                        ),
                        F.array(F.lit(1), F.lit(2), F.lit(3)).alias("tags"),
                    )
                ).alias("document"),
            )
            .cache()
        )
        base.count()
        modes = ("copy-on-write", "merge-on-read")
        for mode in modes:
            name = f"icebatch.bench.`{mode.replace('-', '_')}`"
            spark.sql(
                f"CREATE TABLE {name} (entity_id string, cluster_id string, sequence bigint, "
                "document string) USING iceberg PARTITIONED BY (bucket(4, cluster_id)) "
                f"TBLPROPERTIES ('format-version'='2', 'write.merge.mode'='{mode}', "
                f"'write.update.mode'='{mode}', 'write.delete.mode'='{mode}', "
                "'write.distribution-mode'='hash')"
            )
            spark.sql(f"ALTER TABLE {name} WRITE ORDERED BY cluster_id, entity_id")
            base.writeTo(name).append()
        merge_seconds: dict[str, list[float]] = {m: [] for m in modes}
        for run in range(args.runs):
            seed = 17 + run
            updates = (
                base.sample(fraction=args.updates, seed=seed)
                .withColumn("sequence", F.lit(run + 2).cast("long"))
                .withColumn("_action", F.when(F.rand(seed) < 0.05, "delete").otherwise("upsert"))
            )
            fresh = (
                spark.range(int(args.rows * args.inserts))
                .select(
                    F.format_string(f"n{run}_%08d", "id").alias("entity_id"),
                    F.format_string(f"n{run}_%08d", "id").alias("cluster_id"),
                    F.lit(run + 2).cast("long").alias("sequence"),
                    F.lit('{"new": true}').alias("document"),
                )
                .withColumn("_action", F.lit("upsert"))
            )
            # materialized: MERGE refuses a non-deterministic source (rand), and both modes
            # must get the same rows
            source = updates.unionByName(fresh).localCheckpoint()
            source.createOrReplaceTempView("source")
            for mode in modes:
                name = f"icebatch.bench.`{mode.replace('-', '_')}`"
                started = time.perf_counter()
                spark.sql(
                    f"MERGE INTO {name} t USING source s ON t.entity_id = s.entity_id "
                    "WHEN MATCHED AND s._action = 'delete' THEN DELETE "
                    "WHEN MATCHED THEN UPDATE SET t.sequence = s.sequence, t.document = s.document "
                    "WHEN NOT MATCHED AND s._action = 'upsert' THEN INSERT (entity_id, cluster_id, "
                    "sequence, document) VALUES (s.entity_id, s.cluster_id, s.sequence, s.document)"
                )
                merge_seconds[mode].append(time.perf_counter() - started)
            source.unpersist()
        print(
            f"rows {args.rows}, {args.runs} merges of {args.updates:.0%} updates + "
            f"{args.inserts:.0%} inserts each"
        )
        scans: dict[str, tuple[float, float, int]] = {}
        for mode in modes:
            name = f"icebatch.bench.`{mode.replace('-', '_')}`"
            started = time.perf_counter()
            count = spark.table(name).count()
            full = time.perf_counter() - started
            started = time.perf_counter()
            spark.table(name).where(F.get_json_object("document", "$.n") == "12345").collect()
            filtered = time.perf_counter() - started
            files = spark.sql(f"SELECT count(*) FROM {name}.files").first()[0]  # type: ignore[index]
            deletes = spark.sql(f"SELECT count(*) FROM {name}.delete_files").first()[0]  # type: ignore[index]
            scans[mode] = (full, filtered, count)
            print(
                f"{mode:>14}: MERGE median {statistics.median(merge_seconds[mode]):.2f} s "
                f"(runs {', '.join(f'{s:.2f}' for s in merge_seconds[mode])}); count(*) "
                f"{full:.2f} s, JSON filter scan {filtered:.2f} s; {count} rows, {files} data "
                f"files, {deletes} delete files"
            )
        cow, mor = (statistics.median(merge_seconds[m]) for m in modes)
        print(f"MERGE seconds, merge-on-read / copy-on-write: {mor / cow:.2f}")
        print(
            "filter scan seconds, merge-on-read / copy-on-write: "
            f"{scans['merge-on-read'][1] / scans['copy-on-write'][1]:.2f}"
        )
        assert scans["merge-on-read"][2] == scans["copy-on-write"][2], "the two tables differ"


if __name__ == "__main__":
    main()
