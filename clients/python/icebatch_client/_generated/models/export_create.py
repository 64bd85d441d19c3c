from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.export_create_kind import ExportCreateKind
from ..types import UNSET, Unset

T = TypeVar("T", bound="ExportCreate")


@_attrs_define
class ExportCreate:
    """
    Attributes:
        kind (ExportCreateKind):
        from_snapshot (int | None | Unset): Start after this snapshot
        since (None | str | Unset): ISO 8601: start after the snapshot then
        to_snapshot (int | None | Unset): End at this snapshot (current)
        until (None | str | Unset): ISO 8601: end at the snapshot then
    """

    kind: ExportCreateKind
    from_snapshot: int | None | Unset = UNSET
    since: None | str | Unset = UNSET
    to_snapshot: int | None | Unset = UNSET
    until: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        kind = self.kind.value

        from_snapshot: int | None | Unset
        if isinstance(self.from_snapshot, Unset):
            from_snapshot = UNSET
        else:
            from_snapshot = self.from_snapshot

        since: None | str | Unset
        if isinstance(self.since, Unset):
            since = UNSET
        else:
            since = self.since

        to_snapshot: int | None | Unset
        if isinstance(self.to_snapshot, Unset):
            to_snapshot = UNSET
        else:
            to_snapshot = self.to_snapshot

        until: None | str | Unset
        if isinstance(self.until, Unset):
            until = UNSET
        else:
            until = self.until

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "kind": kind,
            }
        )
        if from_snapshot is not UNSET:
            field_dict["from_snapshot"] = from_snapshot
        if since is not UNSET:
            field_dict["since"] = since
        if to_snapshot is not UNSET:
            field_dict["to_snapshot"] = to_snapshot
        if until is not UNSET:
            field_dict["until"] = until

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        kind = ExportCreateKind(d.pop("kind"))

        def _parse_from_snapshot(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        from_snapshot = _parse_from_snapshot(d.pop("from_snapshot", UNSET))

        def _parse_since(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        since = _parse_since(d.pop("since", UNSET))

        def _parse_to_snapshot(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        to_snapshot = _parse_to_snapshot(d.pop("to_snapshot", UNSET))

        def _parse_until(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        until = _parse_until(d.pop("until", UNSET))

        export_create = cls(
            kind=kind,
            from_snapshot=from_snapshot,
            since=since,
            to_snapshot=to_snapshot,
            until=until,
        )

        export_create.additional_properties = d
        return export_create

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
