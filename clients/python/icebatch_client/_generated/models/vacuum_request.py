from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.vacuum_mode import VacuumMode
from ..types import UNSET, Unset

T = TypeVar("T", bound="VacuumRequest")


@_attrs_define
class VacuumRequest:
    """A vacuum: `full` purges every active tombstone; `partial` stays within its budgets.

    Attributes:
        dry_run (bool | Unset): Plan only: files, bytes, rows to purge. Default: False.
        max_bytes (int | None | Unset): Partial: bytes per run.
        max_files (int | None | Unset): Partial: files per run.
        mode (VacuumMode | Unset):
        tombstones (int | None | Unset): Partial: the oldest N tombstones (by commit) only.
    """

    dry_run: bool | Unset = False
    max_bytes: int | None | Unset = UNSET
    max_files: int | None | Unset = UNSET
    mode: VacuumMode | Unset = UNSET
    tombstones: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        dry_run = self.dry_run

        max_bytes: int | None | Unset
        if isinstance(self.max_bytes, Unset):
            max_bytes = UNSET
        else:
            max_bytes = self.max_bytes

        max_files: int | None | Unset
        if isinstance(self.max_files, Unset):
            max_files = UNSET
        else:
            max_files = self.max_files

        mode: str | Unset = UNSET
        if not isinstance(self.mode, Unset):
            mode = self.mode.value

        tombstones: int | None | Unset
        if isinstance(self.tombstones, Unset):
            tombstones = UNSET
        else:
            tombstones = self.tombstones

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if dry_run is not UNSET:
            field_dict["dry_run"] = dry_run
        if max_bytes is not UNSET:
            field_dict["max_bytes"] = max_bytes
        if max_files is not UNSET:
            field_dict["max_files"] = max_files
        if mode is not UNSET:
            field_dict["mode"] = mode
        if tombstones is not UNSET:
            field_dict["tombstones"] = tombstones

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        dry_run = d.pop("dry_run", UNSET)

        def _parse_max_bytes(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        max_bytes = _parse_max_bytes(d.pop("max_bytes", UNSET))

        def _parse_max_files(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        max_files = _parse_max_files(d.pop("max_files", UNSET))

        _mode = d.pop("mode", UNSET)
        mode: VacuumMode | Unset
        if isinstance(_mode, Unset):
            mode = UNSET
        else:
            mode = VacuumMode(_mode)

        def _parse_tombstones(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        tombstones = _parse_tombstones(d.pop("tombstones", UNSET))

        vacuum_request = cls(
            dry_run=dry_run,
            max_bytes=max_bytes,
            max_files=max_files,
            mode=mode,
            tombstones=tombstones,
        )

        vacuum_request.additional_properties = d
        return vacuum_request

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
