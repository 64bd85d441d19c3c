from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.tombstone_out_meta import TombstoneOutMeta


T = TypeVar("T", bound="TombstoneOut")


@_attrs_define
class TombstoneOut:
    """
    Attributes:
        added_on (datetime.datetime):
        added_sequence_number (int):
        added_snapshot_id (int):
        evict_by (datetime.datetime | None):
        id (str):
        meta (TombstoneOutMeta):
        namespace (str): The column the tombstone matches
        namespace_field_id (int):
    """

    added_on: datetime.datetime
    added_sequence_number: int
    added_snapshot_id: int
    evict_by: datetime.datetime | None
    id: str
    meta: TombstoneOutMeta
    namespace: str
    namespace_field_id: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        added_on = self.added_on.isoformat()

        added_sequence_number = self.added_sequence_number

        added_snapshot_id = self.added_snapshot_id

        evict_by: None | str
        if isinstance(self.evict_by, datetime.datetime):
            evict_by = self.evict_by.isoformat()
        else:
            evict_by = self.evict_by

        id = self.id

        meta = self.meta.to_dict()

        namespace = self.namespace

        namespace_field_id = self.namespace_field_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "added_on": added_on,
                "added_sequence_number": added_sequence_number,
                "added_snapshot_id": added_snapshot_id,
                "evict_by": evict_by,
                "id": id,
                "meta": meta,
                "namespace": namespace,
                "namespace_field_id": namespace_field_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.tombstone_out_meta import TombstoneOutMeta  # noqa: PLC0415

        d = dict(src_dict)
        added_on = datetime.datetime.fromisoformat(d.pop("added_on"))

        added_sequence_number = d.pop("added_sequence_number")

        added_snapshot_id = d.pop("added_snapshot_id")

        def _parse_evict_by(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                evict_by_type_0 = datetime.datetime.fromisoformat(data)

                return evict_by_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        evict_by = _parse_evict_by(d.pop("evict_by"))

        id = d.pop("id")

        meta = TombstoneOutMeta.from_dict(d.pop("meta"))

        namespace = d.pop("namespace")

        namespace_field_id = d.pop("namespace_field_id")

        tombstone_out = cls(
            added_on=added_on,
            added_sequence_number=added_sequence_number,
            added_snapshot_id=added_snapshot_id,
            evict_by=evict_by,
            id=id,
            meta=meta,
            namespace=namespace,
            namespace_field_id=namespace_field_id,
        )

        tombstone_out.additional_properties = d
        return tombstone_out

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
