from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.dataset_create_partition_item import DatasetCreatePartitionItem
    from ..models.dataset_create_schema_item import DatasetCreateSchemaItem


T = TypeVar("T", bound="DatasetCreate")


@_attrs_define
class DatasetCreate:
    """
    Attributes:
        name (str): Lowercase letters, digits and '_'.
        schema (list[DatasetCreateSchemaItem]): Fields: {name, type, required?, doc?}; nested struct/list/map allowed.
        identity_columns (list[str] | Unset): Top-level columns naming a person or entity: what GDPR deletes match
        partition (list[DatasetCreatePartitionItem] | Unset): Partition fields: {column, transform} with transform
            identity, year, month, day, hour, bucket (with `width`) or truncate (with `width`)
    """

    name: str
    schema: list[DatasetCreateSchemaItem]
    identity_columns: list[str] | Unset = UNSET
    partition: list[DatasetCreatePartitionItem] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        schema = []
        for schema_item_data in self.schema:
            schema_item = schema_item_data.to_dict()
            schema.append(schema_item)

        identity_columns: list[str] | Unset = UNSET
        if not isinstance(self.identity_columns, Unset):
            identity_columns = self.identity_columns

        partition: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.partition, Unset):
            partition = []
            for partition_item_data in self.partition:
                partition_item = partition_item_data.to_dict()
                partition.append(partition_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "name": name,
                "schema": schema,
            }
        )
        if identity_columns is not UNSET:
            field_dict["identity_columns"] = identity_columns
        if partition is not UNSET:
            field_dict["partition"] = partition

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.dataset_create_partition_item import (
            DatasetCreatePartitionItem,  # noqa: PLC0415
        )
        from ..models.dataset_create_schema_item import (
            DatasetCreateSchemaItem,  # noqa: PLC0415
        )

        d = dict(src_dict)
        name = d.pop("name")

        schema = []
        _schema = d.pop("schema")
        for schema_item_data in _schema:
            schema_item = DatasetCreateSchemaItem.from_dict(schema_item_data)

            schema.append(schema_item)

        identity_columns = cast(list[str], d.pop("identity_columns", UNSET))

        _partition = d.pop("partition", UNSET)
        partition: list[DatasetCreatePartitionItem] | Unset = UNSET
        if _partition is not UNSET:
            partition = []
            for partition_item_data in _partition:
                partition_item = DatasetCreatePartitionItem.from_dict(
                    partition_item_data
                )

                partition.append(partition_item)

        dataset_create = cls(
            name=name,
            schema=schema,
            identity_columns=identity_columns,
            partition=partition,
        )

        dataset_create.additional_properties = d
        return dataset_create

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
