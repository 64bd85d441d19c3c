from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="Source")


@_attrs_define
class Source:
    """A source table of Debezium's change events (`POST /v1/cdc/debezium`).

    Attributes:
        table (str): The table as its connector names it: `<schema>.<table>` (PostgreSQL, SQL Server), `<db>.<table>`
            (MySQL, MariaDB), `<db>.<collection>` (MongoDB)
        entity_prefix (str | Unset): Put before the entity id: the raw table has one row per entity id, so two tables
            whose keys share values need different prefixes (e.g. `customer:`) Default: ''.
        key (list[str] | Unset): The key columns: their values make the entity id (one column: its value; several: the
            JSON array of their values)
        record_type (None | str | Unset): The raw rows' record_type (default: the table's name)
    """

    table: str
    entity_prefix: str | Unset = ""
    key: list[str] | Unset = UNSET
    record_type: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        table = self.table

        entity_prefix = self.entity_prefix

        key: list[str] | Unset = UNSET
        if not isinstance(self.key, Unset):
            key = self.key

        record_type: None | str | Unset
        if isinstance(self.record_type, Unset):
            record_type = UNSET
        else:
            record_type = self.record_type

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "table": table,
            }
        )
        if entity_prefix is not UNSET:
            field_dict["entity_prefix"] = entity_prefix
        if key is not UNSET:
            field_dict["key"] = key
        if record_type is not UNSET:
            field_dict["record_type"] = record_type

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        table = d.pop("table")

        entity_prefix = d.pop("entity_prefix", UNSET)

        key = cast(list[str], d.pop("key", UNSET))

        def _parse_record_type(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        record_type = _parse_record_type(d.pop("record_type", UNSET))

        source = cls(
            table=table,
            entity_prefix=entity_prefix,
            key=key,
            record_type=record_type,
        )

        return source
