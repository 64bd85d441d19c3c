"""Creating and loading the Iceberg table behind a dataset."""

from __future__ import annotations

from typing import Any

from pyiceberg.catalog import Catalog
from pyiceberg.exceptions import NoSuchTableError
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.table.name_mapping import create_mapping_from_schema
from pyiceberg.table.sorting import SortField, SortOrder
from pyiceberg.transforms import (
    BucketTransform,
    DayTransform,
    HourTransform,
    IdentityTransform,
    MonthTransform,
    Transform,
    TruncateTransform,
    YearTransform,
)
from pyiceberg.types import DateType, PrimitiveType, TimestampType, TimestamptzType

from app.errors import InvalidInput
from app.lake.transaction import begin
from app.lake.types import BATCH_COLUMN

TABLE_PROPERTIES = {
    "format-version": "2",
    "commit.manifest-merge.enabled": "true",
    "write.distribution-mode": "hash",
    "write.parquet.compression-codec": "zstd",
    "write.metadata.delete-after-commit.enabled": "true",
    "write.metadata.previous-versions-max": "100",
    # exact (untruncated) bounds of the batch column: a file's [min, max] names real batches
    f"write.metadata.metrics.column.{BATCH_COLUMN}": "full",
}
NAME_MAPPING = "schema.name-mapping.default"
TIME_TRANSFORMS: dict[str, Transform[Any, Any]] = {
    "year": YearTransform(),
    "month": MonthTransform(),
    "day": DayTransform(),
    "hour": HourTransform(),
}


def _transform(spec: dict[str, Any], source_type: Any) -> Transform[Any, Any]:
    name = str(spec.get("transform", "identity")).lower()
    column = spec["column"]
    if name in TIME_TRANSFORMS:
        allowed: tuple[type, ...] = (TimestampType, TimestamptzType, DateType)
        if name == "hour":
            allowed = (TimestampType, TimestamptzType)
        if not isinstance(source_type, allowed):
            raise InvalidInput(f"partition on {column!r}: {name} needs a date or timestamp column")
        return TIME_TRANSFORMS[name]
    if name == "identity":
        return IdentityTransform()
    if name in ("bucket", "truncate"):
        width = spec.get("width")
        if not isinstance(width, int) or width < 1:
            raise InvalidInput(f"partition on {column!r}: {name} needs a positive integer 'width'")
        return BucketTransform(width) if name == "bucket" else TruncateTransform(width)
    raise InvalidInput(
        f"partition on {column!r}: unknown transform {name!r} "
        "(identity, year, month, day, hour, bucket, truncate)"
    )


def partition_spec(schema: Schema, partition: list[dict[str, Any]]) -> PartitionSpec:
    """A partition spec from `[{"column", "transform", "width"?}]` on top-level primitives."""
    fields = []
    for position, spec in enumerate(partition):
        column = spec.get("column") if isinstance(spec, dict) else None
        if not isinstance(column, str):
            raise InvalidInput(f"partition[{position}]: give the 'column' to partition by")
        try:
            source = schema.find_field(column)
        except ValueError:
            raise InvalidInput(
                f"partition[{position}]: no column {column!r} in the schema"
            ) from None
        if column not in {f.name for f in schema.fields} or not isinstance(
            source.field_type, PrimitiveType
        ):
            raise InvalidInput(f"partition[{position}]: {column!r} must be a top-level primitive")
        transform = _transform(spec, source.field_type)
        suffix = "" if isinstance(transform, IdentityTransform) else f"_{transform}".split("[")[0]
        fields.append(
            PartitionField(
                source_id=source.field_id,
                field_id=1000 + position,
                transform=transform,
                name=f"{column}{suffix}",
            )
        )
    return PartitionSpec(*fields)


def sort_order(schema: Schema, spec: PartitionSpec) -> SortOrder:
    """Sort by the partition, then by batch: narrow `_batch_id` bounds per file (seed 000)."""
    batch_field = schema.find_field(BATCH_COLUMN)
    fields = [SortField(source_id=p.source_id, transform=p.transform) for p in spec.fields]
    fields.append(SortField(source_id=batch_field.field_id, transform=IdentityTransform()))
    return SortOrder(*fields)


def derived_properties(table: Table) -> dict[str, str]:
    """Properties that depend on the created table's field ids.

    The name mapping lets Iceberg read Parquet files written without field ids (replays are
    staged by plain Spark writes); exact bounds on partition source columns let a staged file's
    partition be derived from its statistics.
    """
    schema = table.schema()
    wanted = {NAME_MAPPING: create_mapping_from_schema(schema).model_dump_json()}
    for field in table.spec().fields:
        wanted[f"write.metadata.metrics.column.{schema.find_column_name(field.source_id)}"] = "full"
    return wanted


def ensure_properties(table: Table) -> Table:
    """Set the derived properties a table lacks (tables created before they existed)."""
    missing = {k: v for k, v in derived_properties(table).items() if table.properties.get(k) != v}
    if missing:
        with begin(table) as transaction:
            transaction.set_properties(missing)
    return table


def create_table(
    catalog: Catalog, identifier: str, schema: Schema, partition: list[dict[str, Any]]
) -> Table:
    namespace = identifier.split(".")[0]
    catalog.create_namespace_if_not_exists(namespace)
    spec = partition_spec(schema, partition)
    table = catalog.create_table(
        identifier,
        schema=schema,
        partition_spec=spec,
        sort_order=sort_order(schema, spec),
        properties=TABLE_PROPERTIES,
    )
    return ensure_properties(table)


def load_table(catalog: Catalog, identifier: str) -> Table | None:
    try:
        return catalog.load_table(identifier)
    except NoSuchTableError:
        return None
