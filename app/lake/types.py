"""Dataset field specs (the HTTP schema language) to Iceberg schemas and back.

A field spec is `{"name", "type", "required"?, "doc"?}` where `type` is a primitive name
(`boolean, int, long, float, double, decimal(p,s), date, timestamp, timestamptz, string, binary`)
or `struct` (with `fields`), `list` (with `element`), `map` (with `key` and `value`); nested
specs are the same shape without `name`.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from typing import Any

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
    PrimitiveType,
    StringType,
    StructType,
    TimestampType,
    TimestamptzType,
)

from app.errors import InvalidInput

BATCH_COLUMN = "_batch_id"
RESERVED_PREFIX = "_"
NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,127}$")
DECIMAL_RE = re.compile(r"^decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)$")

PRIMITIVES: dict[str, PrimitiveType] = {
    "boolean": BooleanType(),
    "int": IntegerType(),
    "long": LongType(),
    "float": FloatType(),
    "double": DoubleType(),
    "date": DateType(),
    "timestamp": TimestampType(),
    "timestamptz": TimestamptzType(),
    "string": StringType(),
    "binary": BinaryType(),
}
TYPE_NAMES = ", ".join([*PRIMITIVES, "decimal(p,s)", "struct", "list", "map"])


class _Ids:
    def __init__(self) -> None:
        self._counter = itertools.count(1)

    def next(self) -> int:
        return next(self._counter)


def _type(spec: dict[str, Any], path: str, ids: _Ids) -> IcebergType:
    if not isinstance(spec, dict) or not isinstance(spec.get("type"), str):
        raise InvalidInput(f"{path}: give a 'type' ({TYPE_NAMES})")
    name = spec["type"].strip().lower()
    if name in PRIMITIVES:
        return PRIMITIVES[name]
    if match := DECIMAL_RE.match(name):
        precision, scale = int(match[1]), int(match[2])
        if not 1 <= precision <= 38 or scale > precision:
            raise InvalidInput(f"{path}: decimal needs 1 <= precision <= 38 and scale <= precision")
        return DecimalType(precision, scale)
    if name == "struct":
        fields = spec.get("fields")
        if not isinstance(fields, list) or not fields:
            raise InvalidInput(f"{path}: a struct needs a non-empty 'fields' list")
        return StructType(*_fields(fields, path, ids, allow_reserved=True))
    if name == "list":
        element = spec.get("element")
        if not isinstance(element, dict):
            raise InvalidInput(f"{path}: a list needs an 'element' type spec")
        element_id = ids.next()
        return ListType(
            element_id=element_id,
            element_type=_type(element, f"{path}[]", ids),
            element_required=bool(element.get("required", False)),
        )
    if name == "map":
        key, value = spec.get("key"), spec.get("value")
        if not isinstance(key, dict) or not isinstance(value, dict):
            raise InvalidInput(f"{path}: a map needs 'key' and 'value' type specs")
        key_id, value_id = ids.next(), ids.next()
        return MapType(
            key_id=key_id,
            key_type=_type(key, f"{path}.key", ids),
            value_id=value_id,
            value_type=_type(value, f"{path}.value", ids),
            value_required=bool(value.get("required", False)),
        )
    raise InvalidInput(f"{path}: unknown type {spec['type']!r}; use one of {TYPE_NAMES}")


def _fields(
    specs: list[dict[str, Any]], parent: str, ids: _Ids, allow_reserved: bool
) -> Iterator[NestedField]:
    seen: set[str] = set()
    for position, spec in enumerate(specs):
        name = spec.get("name") if isinstance(spec, dict) else None
        where = f"{parent}[{position}]" if parent else f"schema[{position}]"
        if not allow_reserved and isinstance(name, str) and name.startswith(RESERVED_PREFIX):
            raise InvalidInput(f"{where}: names starting with '_' are reserved for Icebatch")
        if not isinstance(name, str) or not NAME_RE.match(name):
            raise InvalidInput(
                f"{where}: field names start with a letter and hold letters, digits and '_'"
            )
        if name.lower() in seen:
            raise InvalidInput(f"{where}: duplicate field name {name!r}")
        seen.add(name.lower())
        field_id = ids.next()
        path = f"{parent}.{name}" if parent else name
        yield NestedField(
            field_id=field_id,
            name=name,
            field_type=_type(spec, path, ids),
            required=bool(spec.get("required", False)),
            doc=spec.get("doc"),
        )


def schema_from_specs(specs: list[dict[str, Any]]) -> Schema:
    """The Iceberg schema of a dataset: the client's fields, then the required `_batch_id`."""
    if not isinstance(specs, list) or not specs:
        raise InvalidInput("schema: give a non-empty list of fields")
    ids = _Ids()
    fields = list(_fields(specs, "", ids, allow_reserved=False))
    batch_field = NestedField(ids.next(), BATCH_COLUMN, StringType(), required=True)
    return Schema(*fields, batch_field)


def type_to_spec(field_type: IcebergType) -> dict[str, Any]:
    """The HTTP spec of an Iceberg type (inverse of `_type`)."""
    if isinstance(field_type, StructType):
        return {"type": "struct", "fields": [field_to_spec(f) for f in field_type.fields]}
    if isinstance(field_type, ListType):
        element = type_to_spec(field_type.element_type)
        element["required"] = field_type.element_required
        return {"type": "list", "element": element}
    if isinstance(field_type, MapType):
        value = type_to_spec(field_type.value_type)
        value["required"] = field_type.value_required
        return {"type": "map", "key": type_to_spec(field_type.key_type), "value": value}
    if isinstance(field_type, DecimalType):
        return {"type": f"decimal({field_type.precision},{field_type.scale})"}
    for name, primitive in PRIMITIVES.items():
        if field_type == primitive:
            return {"type": name}
    raise ValueError(f"unsupported Iceberg type {field_type}")


def field_to_spec(field: NestedField) -> dict[str, Any]:
    spec = {"name": field.name, **type_to_spec(field.field_type), "required": field.required}
    if field.doc:
        spec["doc"] = field.doc
    return spec


def user_schema(schema: Schema) -> Schema:
    """The schema without Icebatch's own columns (what input files must match)."""
    return Schema(*[f for f in schema.fields if not f.name.startswith(RESERVED_PREFIX)])
