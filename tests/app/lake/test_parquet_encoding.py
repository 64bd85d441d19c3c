"""Dictionaries only where values repeat: files Icebatch writes stay the size Spark's are."""

from __future__ import annotations

import io
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import given, settings
from hypothesis import strategies as st

from app.lake.parquet_encoding import dictionary_columns
from app.lake.rewrite_files import RewriteInput, RewriteTask, run


def _events(rows: int) -> pa.Table:
    """Rows like the README's `events`: a distinct id and text, 1,000 users, two days."""
    pick = random.Random(7)
    return pa.table(
        {
            "event_id": pa.array(range(rows), pa.int64()),
            "user_id": [f"u{pick.randrange(1000)}" for _ in range(rows)],
            "day": pa.array([i % 2 for i in range(rows)], pa.int32()),
            "payload": [f"p{i}" for i in range(rows)],
            "customer": [f"customer-{pick.randrange(20_000):08d}" for _ in range(rows)],
            "tags": pa.array([[f"t{i % 3}"] for i in range(rows)], pa.list_(pa.string())),
            "where": pa.array(
                [{"country": "FR", "zip": str(i)} for i in range(rows)],
                pa.struct([("country", pa.string()), ("zip", pa.string())]),
            ),
        }
    )


def _chunks(data: bytes) -> dict[str, tuple[bool, int]]:
    """Each column path: whether it has a dictionary, and its compressed bytes."""
    meta = pq.ParquetFile(pa.BufferReader(data)).metadata
    out = {}
    for c in range(meta.num_columns):
        chunks = [meta.row_group(g).column(c) for g in range(meta.num_row_groups)]
        out[chunks[0].path_in_schema] = (
            any(ch.has_dictionary_page for ch in chunks),
            sum(ch.total_compressed_size for ch in chunks),
        )
    return out


def _written(table: pa.Table, **options: object) -> bytes:
    buffer = io.BytesIO()
    pq.write_table(table, buffer, compression="zstd", **options)
    return buffer.getvalue()


def test_columns_of_distinct_values_are_written_plain_and_the_rest_keep_a_dictionary() -> None:
    table = _events(150_000)

    chosen = dictionary_columns(table)

    assert sorted(chosen) == [
        "customer",
        "day",
        "tags.list.element",
        "user_id",
        "where.country",
        "where.zip",
    ]
    ours, default = _chunks(_written(table, use_dictionary=chosen)), _chunks(_written(table))
    assert not ours["event_id"][0]
    assert ours["user_id"][0]
    # plain beats a dictionary of every value (less than half its bytes here), and the
    # columns that keep one are written as PyArrow's default writes them
    for column in ("event_id", "payload"):
        assert ours[column][1] < default[column][1] / 2, (column, ours, default)
    for column in ("user_id", "customer", "day", "where.country"):
        assert ours[column] == default[column]


def test_a_rewrite_writes_no_dictionary_of_distinct_ids(tmp_path: Path) -> None:
    table = _events(40_000).select(["event_id", "user_id", "payload"])
    source = tmp_path / "in.parquet"
    pq.write_table(table, source, compression="zstd")  # PyArrow's default: every column
    task = RewriteInput(str(source), {"user_id": ["u3"]}, table.num_rows, source.stat().st_size)
    output = tmp_path / "out.parquet"

    done = run(RewriteTask(0, [task], str(output), table.schema.serialize().to_pybytes()))

    kept = [u != "u3" for u in table.column("user_id").to_pylist()]
    assert pq.read_table(output).equals(table.filter(pa.array(kept)))  # the model: a filter
    assert done.bytes_out < done.bytes_in * 0.7  # the input wrote a dictionary of every id
    chunks = _chunks(output.read_bytes())
    assert {path: has for path, (has, _) in chunks.items()} == {
        "event_id": False,
        "user_id": True,
        "payload": False,
    }


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(-(2**63), 2**63 - 1),
            st.one_of(st.none(), st.text(max_size=4)),
            st.lists(st.sampled_from(["a", "b"]), max_size=3),
        ),
        max_size=60,
    )
)
def test_any_table_reads_back_as_written(rows: list[tuple[int, str | None, list[str]]]) -> None:
    table = pa.table(
        {
            "n": pa.array([r[0] for r in rows], pa.int64()),
            "s": pa.array([r[1] for r in rows], pa.string()),
            "l": pa.array([r[2] for r in rows], pa.list_(pa.string())),
        }
    )

    data = _written(table, use_dictionary=dictionary_columns(table))

    assert pq.read_table(pa.BufferReader(data)).equals(table)
