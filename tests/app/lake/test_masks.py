"""Row masks: a batch without deleted positions, sliced or filtered, against a list model."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from hypothesis import given
from hypothesis import strategies as st

from app.lake import masks
from app.lake.masks import _without
from tests.fixtures.profile import budget


@budget(300)
@given(data=st.data(), size=st.integers(min_value=0, max_value=400), sliced=st.booleans())
def test_a_batch_without_positions_keeps_every_other_row_in_order(
    data: st.DataObject, size: int, sliced: bool
) -> None:
    """Both ways: slices around the positions (few of them) and a filter (many)."""
    deleted = sorted(data.draw(st.sets(st.integers(0, max(0, size - 1)), max_size=size)))
    deleted = [p for p in deleted if p < size]
    batch = pa.record_batch(
        {"n": pa.array(range(size)), "s": pa.array([f"r{i}" for i in range(size)])}
    )
    saved, masks.SPARSE = masks.SPARSE, (1.0 if sliced else 0.0)
    try:
        pieces = _without(batch, np.array(deleted, dtype=np.int64))
    finally:
        masks.SPARSE = saved
    if sliced:
        assert len(pieces) <= len(deleted) + 1
    kept = [n for piece in pieces for n in piece.column("n").to_pylist()]
    assert kept == [n for n in range(size) if n not in set(deleted)]
    assert all(piece.num_rows for piece in pieces)
    assert [s for piece in pieces for s in piece.column("s").to_pylist()] == [f"r{n}" for n in kept]


@budget(200)
@given(
    data=st.data(),
    sizes=st.lists(st.integers(min_value=0, max_value=60), max_size=4),
    hidden_users=st.sets(st.sampled_from(["a", "b", "c", "d"]), max_size=2),
)
def test_a_file_keeps_the_rows_neither_deleted_nor_hidden_in_order(
    data: st.DataObject, sizes: list[int], hidden_users: set[str]
) -> None:
    """`kept`: one file's batches without its deleted positions and its hidden ids (a null id
    is never hidden), against a list model, with and without each of the two."""
    total = sum(sizes)
    users = data.draw(
        st.lists(st.sampled_from(["a", "b", "c", "d", None]), min_size=total, max_size=total)
    )
    deleted = sorted(data.draw(st.sets(st.integers(0, max(0, total - 1)), max_size=total)))
    deleted = [p for p in deleted if p < total]
    batches, start = [], 0
    for size in sizes:
        batches.append(
            pa.record_batch(
                {
                    "n": pa.array(range(start, start + size), pa.int64()),
                    "user": pa.array(users[start : start + size], pa.string()),
                }
            )
        )
        start += size
    hidden = {"user": pa.array(sorted(hidden_users), pa.string())} if hidden_users else {}
    positions = np.array(deleted, dtype=np.int64) if deleted else None
    kept = [n for b in masks.kept(batches, hidden, positions) for n in b.column("n").to_pylist()]
    gone = set(deleted)
    assert kept == [n for n in range(total) if n not in gone and users[n] not in hidden_users]
