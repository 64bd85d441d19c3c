"""Iceberg types to Spark types (Iceberg `timestamp` is Spark's TIMESTAMP_NTZ)."""

from __future__ import annotations

from pyiceberg.schema import Schema
from pyiceberg.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampType,
    TimestamptzType,
)
from pyspark.sql import types as T

_PRIMITIVES: list[tuple[type[IcebergType], T.DataType]] = [
    (BooleanType, T.BooleanType()),
    (IntegerType, T.IntegerType()),
    (LongType, T.LongType()),
    (FloatType, T.FloatType()),
    (DoubleType, T.DoubleType()),
    (DateType, T.DateType()),
    (TimestampType, T.TimestampNTZType()),
    (TimestamptzType, T.TimestampType()),
    (StringType, T.StringType()),
    (BinaryType, T.BinaryType()),
]


def spark_type(field_type: IcebergType, lenient: bool = False) -> T.DataType:
    """The Spark type; `lenient` makes every nested field nullable (what readers produce,
    so casts are allowed: Icebatch checks required values itself)."""
    if isinstance(field_type, DecimalType):
        return T.DecimalType(field_type.precision, field_type.scale)
    if isinstance(field_type, StructType):
        return T.StructType([spark_field(f, lenient) for f in field_type.fields])
    if isinstance(field_type, ListType):
        return T.ArrayType(
            spark_type(field_type.element_type, lenient),
            containsNull=lenient or not field_type.element_required,
        )
    if isinstance(field_type, MapType):
        return T.MapType(
            spark_type(field_type.key_type, lenient),
            spark_type(field_type.value_type, lenient),
            valueContainsNull=lenient or not field_type.value_required,
        )
    for iceberg_type, spark in _PRIMITIVES:
        if isinstance(field_type, iceberg_type):
            return spark
    raise ValueError(f"no Spark type for {field_type}")


def spark_field(field: NestedField, lenient: bool = False) -> T.StructField:
    return T.StructField(
        field.name, spark_type(field.field_type, lenient), nullable=lenient or not field.required
    )


def spark_schema(schema: Schema, lenient: bool = False) -> T.StructType:
    return T.StructType([spark_field(f, lenient) for f in schema.fields])
