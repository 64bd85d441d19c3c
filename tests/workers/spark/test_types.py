"""Field specs <-> Iceberg schemas <-> Spark types, checked on random nested schemas: the Spark
schema of workers/spark/types.py against one built here from the specs alone."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from pyspark.sql import types as T

from app.lake.types import BATCH_COLUMN, PRIMITIVES, field_to_spec, schema_from_specs
from tests.fixtures.profile import budget
from workers.spark.types import spark_schema, spark_type

names = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True)
primitive = st.sampled_from([*PRIMITIVES, "decimal(10,2)", "decimal(38,0)"]).map(
    lambda t: {"type": t}
)


def nested(children: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    fields = st.lists(
        st.tuples(names, children, st.booleans()),
        min_size=1,
        max_size=4,
        unique_by=lambda t: t[0],
    ).map(lambda fs: [{"name": n, **c, "required": r} for n, c, r in fs])
    return st.one_of(
        fields.map(lambda fs: {"type": "struct", "fields": fs}),
        st.tuples(children, st.booleans()).map(
            lambda t: {"type": "list", "element": {**t[0], "required": t[1]}}
        ),
        st.tuples(children, st.booleans()).map(
            lambda t: {
                "type": "map",
                "key": {"type": "string"},
                "value": {**t[0], "required": t[1]},
            }
        ),
    )


type_specs = st.recursive(primitive, nested, max_leaves=8)
schemas = st.lists(
    st.tuples(names, type_specs, st.booleans()), min_size=1, max_size=5, unique_by=lambda t: t[0]
)


def normalized(spec: dict[str, Any]) -> dict[str, Any]:
    """The spec as the API returns it: every nested spec with an explicit `required`."""
    out = {k: v for k, v in spec.items() if k in ("name", "type")}
    if "required" in spec or "name" in spec:
        out["required"] = spec.get("required", False)
    if spec["type"] == "struct":
        out["fields"] = [normalized(f) for f in spec["fields"]]
    if spec["type"] == "list":
        out["element"] = normalized(spec["element"])
    if spec["type"] == "map":
        out["key"] = {"type": spec["key"]["type"]}
        out["value"] = normalized(spec["value"])
    return out


SPARK: dict[str, T.DataType] = {
    "boolean": T.BooleanType(),
    "int": T.IntegerType(),
    "long": T.LongType(),
    "float": T.FloatType(),
    "double": T.DoubleType(),
    "date": T.DateType(),
    "timestamp": T.TimestampNTZType(),  # Iceberg's timestamp has no zone: Spark's TIMESTAMP_NTZ
    "timestamptz": T.TimestampType(),
    "string": T.StringType(),
    "binary": T.BinaryType(),
}


def nullable(spec: dict[str, Any], lenient: bool) -> bool:
    return lenient or not spec.get("required", False)


def expected_spark(spec: dict[str, Any], lenient: bool) -> T.DataType:
    """The Spark type of a spec; `lenient`: every nested field nullable (what readers produce)."""
    name = spec["type"]
    if name.startswith("decimal("):
        precision, scale = name.removeprefix("decimal(").removesuffix(")").split(",")
        return T.DecimalType(int(precision), int(scale))
    if name == "struct":
        return T.StructType(
            [
                T.StructField(f["name"], expected_spark(f, lenient), nullable(f, lenient))
                for f in spec["fields"]
            ]
        )
    if name == "list":
        element = spec["element"]
        return T.ArrayType(expected_spark(element, lenient), nullable(element, lenient))
    if name == "map":
        key, value = spec["key"], spec["value"]
        return T.MapType(
            expected_spark(key, lenient), expected_spark(value, lenient), nullable(value, lenient)
        )
    return SPARK[name]


@budget(150)
@given(schemas)
def test_specs_round_trip_through_iceberg_and_spark(fields: list[tuple[str, Any, bool]]) -> None:
    specs = [{"name": n, **t, "required": r} for n, t, r in fields]
    schema = schema_from_specs(specs)
    assert schema.fields[-1].name == BATCH_COLUMN
    back = [field_to_spec(f) for f in schema.fields[:-1]]
    assert back == [normalized(s) for s in specs]
    ids = [f.field_id for f in schema.fields] + [
        fid for f in schema.fields for fid in _nested_ids(f.field_type)
    ]
    assert len(ids) == len(set(ids))
    for lenient in (False, True):
        expected = T.StructType(
            [
                T.StructField(s["name"], expected_spark(s, lenient), nullable(s, lenient))
                for s in specs
            ]
            + [T.StructField(BATCH_COLUMN, T.StringType(), nullable=lenient)]
        )
        assert spark_schema(schema, lenient) == expected
        for field, spark_field in zip(schema.fields, expected.fields, strict=True):
            assert spark_type(field.field_type, lenient) == spark_field.dataType


def _nested_ids(field_type: Any) -> list[int]:
    from pyiceberg.types import ListType, MapType, StructType

    if isinstance(field_type, StructType):
        return [i for f in field_type.fields for i in [f.field_id, *_nested_ids(f.field_type)]]
    if isinstance(field_type, ListType):
        return [field_type.element_id, *_nested_ids(field_type.element_type)]
    if isinstance(field_type, MapType):
        return [field_type.key_id, field_type.value_id, *_nested_ids(field_type.value_type)]
    return []
