from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="DebeziumAccepted")


@_attrs_define
class DebeziumAccepted:
    """
    Attributes:
        accepted (int): Changes accepted (durable) by this request
        deleted_by_truncate (int): Rows deleted by the request's truncate events (counted in `accepted`)
        duplicates (int): Changes already accepted (redeliveries: same source, table, key, position)
        first_sequence (int | None): Sequence number of the request's first accepted change (null: none)
        last_sequence (int | None): Sequence number of the request's last accepted change (null: none)
        skipped (int): Values that change no row: Kafka tombstones (null), `m` messages, schema changes, transaction
            boundaries, heartbeats
        superseded (int): Changes older than what their row already holds (a late or reordered delivery, or one before
            the table's truncate): not applied, the newer state stands
        truncates (int): Truncate events accepted (each a table's rows deleted)
    """

    accepted: int
    deleted_by_truncate: int
    duplicates: int
    first_sequence: int | None
    last_sequence: int | None
    skipped: int
    superseded: int
    truncates: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        accepted = self.accepted

        deleted_by_truncate = self.deleted_by_truncate

        duplicates = self.duplicates

        first_sequence: int | None
        first_sequence = self.first_sequence

        last_sequence: int | None
        last_sequence = self.last_sequence

        skipped = self.skipped

        superseded = self.superseded

        truncates = self.truncates

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "accepted": accepted,
                "deleted_by_truncate": deleted_by_truncate,
                "duplicates": duplicates,
                "first_sequence": first_sequence,
                "last_sequence": last_sequence,
                "skipped": skipped,
                "superseded": superseded,
                "truncates": truncates,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        accepted = d.pop("accepted")

        deleted_by_truncate = d.pop("deleted_by_truncate")

        duplicates = d.pop("duplicates")

        def _parse_first_sequence(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        first_sequence = _parse_first_sequence(d.pop("first_sequence"))

        def _parse_last_sequence(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        last_sequence = _parse_last_sequence(d.pop("last_sequence"))

        skipped = d.pop("skipped")

        superseded = d.pop("superseded")

        truncates = d.pop("truncates")

        debezium_accepted = cls(
            accepted=accepted,
            deleted_by_truncate=deleted_by_truncate,
            duplicates=duplicates,
            first_sequence=first_sequence,
            last_sequence=last_sequence,
            skipped=skipped,
            superseded=superseded,
            truncates=truncates,
        )

        debezium_accepted.additional_properties = d
        return debezium_accepted

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
