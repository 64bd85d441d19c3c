"""Snapshot ranges of incremental reads (app/lake/changes.py)."""

from __future__ import annotations

from typing import Any

import pytest


def test_a_broken_chain_is_missing_snapshot() -> None:
    from types import SimpleNamespace

    from app.lake import changes as lake_changes

    def snap(sid: int, parent: int | None, seq: int) -> Any:
        return SimpleNamespace(snapshot_id=sid, parent_snapshot_id=parent, sequence_number=seq)

    kept = {3: snap(3, 2, 3), 4: snap(4, 3, 4)}
    table: Any = SimpleNamespace(snapshot_by_id=kept.get)
    with pytest.raises(lake_changes.MissingSnapshot) as missing:
        lake_changes.snapshot_range(table, None, kept[4])
    assert missing.value.snapshot_id == 2
    assert [s.snapshot_id for s in lake_changes.snapshot_range(table, kept[3], kept[4]).chain] == [
        4
    ]
    with pytest.raises(lake_changes.NotAncestor):
        lake_changes.snapshot_range(table, kept[4], kept[3])
