"""What an ingest reports of a batch it rejected: file-level problems, or the bad rows counted
per file and explained row by row. Shared by the Spark ingest (`rows`) and the small-batch
path (`small`), so both reject with the same words. Pure Python: no PySpark."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pyiceberg.schema import Schema

from workers.uploads.explain import RowError, check_csv_header, explain_file, parquet_file_errors
from workers.uploads.inputs import StagedFile

INVALID = "ICEBATCH_INVALID_ROW: a row does not match the dataset schema"


@dataclass
class IngestOutcome:
    row_count: int = 0
    errors: list[dict[str, Any]] = field(default_factory=list)


def file_level_errors(files: list[StagedFile], fmt: str, schema: Schema) -> list[RowError]:
    errors: list[RowError] = []
    for f in files:
        if fmt == "csv":
            errors.extend(check_csv_header(f.path, f.name, schema))
        elif fmt == "parquet":
            errors.extend(parquet_file_errors(f.path, f.name, schema))
    return errors


def explain_bad_files(
    files: list[StagedFile],
    fmt: str,
    schema: Schema,
    per_file: dict[str, tuple[int, int]],
    max_errors: int,
) -> IngestOutcome:
    """The outcome of a batch with bad rows: `per_file` maps a staged file's name to its
    (rows, bad rows); the files with bad rows are explained row by row, in batch order."""
    row_count = sum(rows for rows, _ in per_file.values())
    bad_files = [f for f in files if per_file.get(f.path.name, (0, 0))[1] > 0]
    errors: list[dict[str, Any]] = []
    for f in bad_files:
        room = max_errors - len(errors)
        if room <= 0:
            break
        found = explain_file(f.path, f.name, fmt, schema, limit=room)  # type: ignore[arg-type]
        if not found:
            bad = per_file[f.path.name][1]
            found = [
                RowError(
                    f.name,
                    None,
                    None,
                    None,
                    f"{bad} rows could not be converted to the dataset schema",
                )
            ]
        errors.extend(e.as_dict() for e in found)
    return IngestOutcome(
        row_count,
        errors or [{"file": None, "row": None, "field": None, "value": None, "reason": INVALID}],
    )
