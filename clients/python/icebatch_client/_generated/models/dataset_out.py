from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.dataset_out_partition_item import DatasetOutPartitionItem
    from ..models.dataset_out_retention import DatasetOutRetention
    from ..models.dataset_out_schema_item import DatasetOutSchemaItem


T = TypeVar("T", bound="DatasetOut")


@_attrs_define
class DatasetOut:
    """
    Attributes:
        created_at (datetime.datetime):
        current_snapshot_id (int | None): The snapshot reads see now (null until the first commit)
        id (str):
        identity_columns (list[str]):
        name (str):
        partition (list[DatasetOutPartitionItem]):
        schema (list[DatasetOutSchemaItem]):
        sort_order (list[str]): The table's sort order: columns, in order
        table (str): The Iceberg table, as Spark names it: catalog.org.name
        retention (DatasetOutRetention | Unset): Snapshot retention in force: {min_snapshots, max_snapshot_age_seconds,
            orphan_age_seconds} (PUT /v1/datasets/{id}/retention; defaults from the settings)
    """

    created_at: datetime.datetime
    current_snapshot_id: int | None
    id: str
    identity_columns: list[str]
    name: str
    partition: list[DatasetOutPartitionItem]
    schema: list[DatasetOutSchemaItem]
    sort_order: list[str]
    table: str
    retention: DatasetOutRetention | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        created_at = self.created_at.isoformat()

        current_snapshot_id: int | None
        current_snapshot_id = self.current_snapshot_id

        id = self.id

        identity_columns = self.identity_columns

        name = self.name

        partition = []
        for partition_item_data in self.partition:
            partition_item = partition_item_data.to_dict()
            partition.append(partition_item)

        schema = []
        for schema_item_data in self.schema:
            schema_item = schema_item_data.to_dict()
            schema.append(schema_item)

        sort_order = self.sort_order

        table = self.table

        retention: dict[str, Any] | Unset = UNSET
        if not isinstance(self.retention, Unset):
            retention = self.retention.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "created_at": created_at,
                "current_snapshot_id": current_snapshot_id,
                "id": id,
                "identity_columns": identity_columns,
                "name": name,
                "partition": partition,
                "schema": schema,
                "sort_order": sort_order,
                "table": table,
            }
        )
        if retention is not UNSET:
            field_dict["retention"] = retention

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.dataset_out_partition_item import (
            DatasetOutPartitionItem,  # noqa: PLC0415
        )
        from ..models.dataset_out_retention import DatasetOutRetention  # noqa: PLC0415
        from ..models.dataset_out_schema_item import (
            DatasetOutSchemaItem,  # noqa: PLC0415
        )

        d = dict(src_dict)
        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        def _parse_current_snapshot_id(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        current_snapshot_id = _parse_current_snapshot_id(d.pop("current_snapshot_id"))

        id = d.pop("id")

        identity_columns = cast(list[str], d.pop("identity_columns"))

        name = d.pop("name")

        partition = []
        _partition = d.pop("partition")
        for partition_item_data in _partition:
            partition_item = DatasetOutPartitionItem.from_dict(partition_item_data)

            partition.append(partition_item)

        schema = []
        _schema = d.pop("schema")
        for schema_item_data in _schema:
            schema_item = DatasetOutSchemaItem.from_dict(schema_item_data)

            schema.append(schema_item)

        sort_order = cast(list[str], d.pop("sort_order"))

        table = d.pop("table")

        _retention = d.pop("retention", UNSET)
        retention: DatasetOutRetention | Unset
        if isinstance(_retention, Unset):
            retention = UNSET
        else:
            retention = DatasetOutRetention.from_dict(_retention)

        dataset_out = cls(
            created_at=created_at,
            current_snapshot_id=current_snapshot_id,
            id=id,
            identity_columns=identity_columns,
            name=name,
            partition=partition,
            schema=schema,
            sort_order=sort_order,
            table=table,
            retention=retention,
        )

        dataset_out.additional_properties = d
        return dataset_out

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
