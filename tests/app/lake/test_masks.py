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
