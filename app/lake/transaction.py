"""Every snapshot commit and property change of the product opens its transaction here (`begin`).

PyIceberg 0.12's `Transaction.table_metadata` replays the staged updates on the table's metadata
and deep-copies the result on every read, and a snapshot producer reads it a dozen times per
commit (its schema, spec, branch head, summary, each manifest writer). The copy is of the whole
metadata, every retained snapshot and log entry included, so a commit's cost grew with the
table's history: in bench.scale's 0.9/0.05/0.05 mix at 10k restatements, 183 of the worker's
~300 busy seconds in five minutes went to those copies (py-spy; bench/RESULTS.md, seventh
session). Upstream knows it (apache/iceberg-python#2673, #3302, #3784), no release has it yet.

`Transaction` here reads the same thing once per staged state: its value is kept with the two
inputs it was computed from, the table's metadata object and the tuple of staged updates. Both
are replaced, never changed in place (`_updates += ...` binds a new tuple; a commit or a refresh
binds a new metadata), so a kept value is reused only while it is still what PyIceberg would
compute. With nothing staged it is the table's metadata itself, not a copy of it. PyIceberg's own
code only reads it (its models are frozen); the one difference is that `last_updated_ms` of an
unchanged state no longer moves between two reads.
"""

from __future__ import annotations

import pyarrow as pa
from pyiceberg.table import Table
from pyiceberg.table import Transaction as PyIcebergTransaction
from pyiceberg.table.metadata import TableMetadata
from pyiceberg.table.update import TableUpdate


class Transaction(PyIcebergTransaction):
    """PyIceberg's transaction with its staged metadata computed once per staged state."""

    _kept: tuple[TableMetadata, tuple[TableUpdate, ...], TableMetadata] | None = None

    @property
    def table_metadata(self) -> TableMetadata:
        base, updates = self._table.metadata, self._updates
        if not updates:  # PyIceberg would return a copy of the table's own (frozen) metadata
            return base
        kept = self._kept
        if kept is not None and kept[0] is base and kept[1] is updates:
            return kept[2]
        staged = super().table_metadata
        self._kept = (base, updates, staged)
        return staged


def begin(table: Table) -> Transaction:
    """A transaction on `table` (committed by `commit_transaction`, or on leaving a `with`)."""
    return Transaction(table)


def append(table: Table, rows: pa.Table, properties: dict[str, str]) -> None:
    """`table.append(rows)` through `begin`: one snapshot carrying `properties`, committed once
    (a lost compare-and-swap raises PyIceberg's `CommitFailedException`)."""
    with begin(table) as transaction:
        transaction.append(rows, snapshot_properties=properties)
