from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.profile_record_document import ProfileRecordDocument


T = TypeVar("T", bound="ProfileRecord")


@_attrs_define
class ProfileRecord:
    """
    Attributes:
        document (ProfileRecordDocument):
        entity_id (str):
        record_type (None | str):
        related_ids (list[str]):
        timestamp (datetime.datetime | None):
    """

    document: ProfileRecordDocument
    entity_id: str
    record_type: None | str
    related_ids: list[str]
    timestamp: datetime.datetime | None
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        document = self.document.to_dict()

        entity_id = self.entity_id

        record_type: None | str
        record_type = self.record_type

        related_ids = self.related_ids

        timestamp: None | str
        if isinstance(self.timestamp, datetime.datetime):
            timestamp = self.timestamp.isoformat()
        else:
            timestamp = self.timestamp

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "document": document,
                "entity_id": entity_id,
                "record_type": record_type,
                "related_ids": related_ids,
                "timestamp": timestamp,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.profile_record_document import (
            ProfileRecordDocument,  # noqa: PLC0415
        )

        d = dict(src_dict)
        document = ProfileRecordDocument.from_dict(d.pop("document"))

        entity_id = d.pop("entity_id")

        def _parse_record_type(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        record_type = _parse_record_type(d.pop("record_type"))

        related_ids = cast(list[str], d.pop("related_ids"))

        def _parse_timestamp(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                timestamp_type_0 = datetime.datetime.fromisoformat(data)

                return timestamp_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        timestamp = _parse_timestamp(d.pop("timestamp"))

        profile_record = cls(
            document=document,
            entity_id=entity_id,
            record_type=record_type,
            related_ids=related_ids,
            timestamp=timestamp,
        )

        profile_record.additional_properties = d
        return profile_record

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
