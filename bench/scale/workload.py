"""The scale run's rows and its model of what the dataset shows.

Base rows: `rows` events of `users` identities (5 events each at the defaults), in files of
`rows_per_file`, ingested as a few large batches. GDPR deletes take those identities in a random
order, one a request. Side batches: small batches (one day of events) of other identities, never
GDPR-deleted, that the reverts and replays restate: a revert removes one; a replay replaces one
with corrected rows (the same events with new payloads) under a new batch id, which can be
restated in turn. The model (deleted identities, live side batches and their rows) gives the
rows of the twin that holds exactly the visible rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from bench.common import events
from bench.restatements.data import make_identities
from bench.restatements.shared import DAYS, UNIVERSE

SIDE_FIRST_ID = 10**12  # event ids of side batches: above every base event id


@dataclass
class Workload:
    """The generated files and the model of the dataset's visible rows."""

    folder: Path
    base_groups: list[list[Path]]  # the files of each base batch, in ingest order
    gdpr_order: list[str]  # identities with rows, in the order their deletes are requested
    side_rows: int
    rng: np.random.Generator
    base_batches: list[str] = field(default_factory=list)  # each base group's batch id
    deleted: list[str] = field(default_factory=list)  # identities whose delete was accepted
    next_gdpr: int = 0  # the next identity of gdpr_order to request
    live: dict[str, Path] = field(default_factory=dict)  # live side batch -> its rows' file
    pool: list[str] = field(default_factory=list)  # live side batches free to restate
    side_files: int = 0

    def take_gdpr(self) -> str:
        """The next identity to delete."""
        if self.next_gdpr >= len(self.gdpr_order):
            raise RuntimeError("every identity with rows has been requested: use more --users")
        self.next_gdpr += 1
        return self.gdpr_order[self.next_gdpr - 1]

    def new_side_file(self) -> Path:
        """The rows of a new side batch: `side_rows` events of new identities, one day."""
        first = SIDE_FIRST_ID + self.side_files * self.side_rows
        users = pa.array([f"s{x:015x}" for x in self.rng.integers(0, 2**60, 8).tolist()])
        return self._write(events(self.side_rows, first, users, 1, self.rng))

    def corrected(self, path: Path) -> Path:
        """A replay's rows: the events of `path` with new payloads."""
        old = pq.read_table(path)
        fresh = events(old.num_rows, 0, old["user_id"].unique(), 1, self.rng)["payload"]
        return self._write(old.set_column(old.schema.get_field_index("payload"), "payload", fresh))

    def _write(self, table: pa.Table) -> Path:
        path = self.folder / "side" / f"side-{self.side_files:06d}.parquet"
        self.side_files += 1
        pq.write_table(table, path)
        return path

    def twin_files(self, folder: Path) -> list[Path]:
        """The visible rows, with their `_batch_id`: a file per base batch (the base rows less
        the deleted identities) and one of every live side batch's rows."""
        folder.mkdir(parents=True)
        drop = pa.array(self.deleted, pa.string())
        out = []
        for i, (files, batch_id) in enumerate(
            zip(self.base_groups, self.base_batches, strict=True)
        ):
            table = pa.concat_tables(pq.read_table(p) for p in files)
            table = table.filter(pc.invert(pc.is_in(table["user_id"], value_set=drop)))
            out.append(folder / f"base-{i:03d}.parquet")
            pq.write_table(with_batch(table, batch_id), out[-1])
        if self.live:
            side = [with_batch(pq.read_table(p), b) for b, p in self.live.items()]
            out.append(folder / "side.parquet")
            pq.write_table(pa.concat_tables(side), out[-1])
        return out


def with_batch(table: pa.Table, batch_id: str) -> pa.Table:
    return table.append_column("_batch_id", pa.array([batch_id] * table.num_rows, pa.string()))


def generate(
    folder: Path, rows: int, rows_per_file: int, users: int, groups: int, side_rows: int, seed: int
) -> Workload:
    """Write the base files (grouped into `groups` batches) and draw the GDPR order."""
    if users > UNIVERSE:
        raise ValueError(f"at most {UNIVERSE:,} users")
    (folder / "side").mkdir(parents=True)
    identities = pa.array(make_identities(seed)[:users])
    rng = np.random.default_rng(seed + 1)
    files = []
    for i, first in enumerate(range(0, rows, rows_per_file)):
        path = folder / f"base-{i:04d}.parquet"
        pq.write_table(events(min(rows_per_file, rows - first), first, identities, DAYS, rng), path)
        files.append(path)
    size = -(-len(files) // groups)
    base_groups = [files[i : i + size] for i in range(0, len(files), size)]
    order = identities.take(pa.array(rng.permutation(users))).to_pylist()
    return Workload(folder, base_groups, order, side_rows, rng)
