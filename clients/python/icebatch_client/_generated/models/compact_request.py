from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.compact_strategy import CompactStrategy
from ..types import UNSET, Unset

T = TypeVar("T", bound="CompactRequest")


@_attrs_define
class CompactRequest:
    """Compaction: `binpack` merges a partition's small files; `sort` rewrites each partition's
    files sorted (by `sort_by`, default the table's sort order within the partition).

        Attributes:
            dry_run (bool | Unset): Plan only: the files it would rewrite Default: False.
            min_input_files (int | Unset): A partition with fewer small files is left alone Default: 2.
            sort_by (list[str] | None | Unset): Sort: the columns to sort by
            strategy (CompactStrategy | Unset):
            target_file_bytes (int | None | Unset): The size files are packed to (default: the table's)
    """

    dry_run: bool | Unset = False
    min_input_files: int | Unset = 2
    sort_by: list[str] | None | Unset = UNSET
    strategy: CompactStrategy | Unset = UNSET
    target_file_bytes: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        dry_run = self.dry_run

        min_input_files = self.min_input_files

        sort_by: list[str] | None | Unset
        if isinstance(self.sort_by, Unset):
            sort_by = UNSET
        elif isinstance(self.sort_by, list):
            sort_by = self.sort_by

        else:
            sort_by = self.sort_by

        strategy: str | Unset = UNSET
        if not isinstance(self.strategy, Unset):
            strategy = self.strategy.value

        target_file_bytes: int | None | Unset
        if isinstance(self.target_file_bytes, Unset):
            target_file_bytes = UNSET
        else:
            target_file_bytes = self.target_file_bytes

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if dry_run is not UNSET:
            field_dict["dry_run"] = dry_run
        if min_input_files is not UNSET:
            field_dict["min_input_files"] = min_input_files
        if sort_by is not UNSET:
            field_dict["sort_by"] = sort_by
        if strategy is not UNSET:
            field_dict["strategy"] = strategy
        if target_file_bytes is not UNSET:
            field_dict["target_file_bytes"] = target_file_bytes

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        dry_run = d.pop("dry_run", UNSET)

        min_input_files = d.pop("min_input_files", UNSET)

        def _parse_sort_by(data: object) -> list[str] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                sort_by_type_0 = cast(list[str], data)

                return sort_by_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | Unset, data)

        sort_by = _parse_sort_by(d.pop("sort_by", UNSET))

        _strategy = d.pop("strategy", UNSET)
        strategy: CompactStrategy | Unset
        if isinstance(_strategy, Unset):
            strategy = UNSET
        else:
            strategy = CompactStrategy(_strategy)

        def _parse_target_file_bytes(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        target_file_bytes = _parse_target_file_bytes(d.pop("target_file_bytes", UNSET))

        compact_request = cls(
            dry_run=dry_run,
            min_input_files=min_input_files,
            sort_by=sort_by,
            strategy=strategy,
            target_file_bytes=target_file_bytes,
        )

        compact_request.additional_properties = d
        return compact_request

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
