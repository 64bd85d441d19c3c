from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

T = TypeVar("T", bound="PrivacyJobCreate")


@_attrs_define
class PrivacyJobCreate:
    """
    Attributes:
        column (str): A declared identity column of every dataset, e.g. user_id
        dataset_ids (list[str]): The datasets to delete from
        values (list[int | str]): The identities whose rows are deleted (strings, or integers for an int or long column)
    """

    column: str
    dataset_ids: list[str]
    values: list[int | str]

    def to_dict(self) -> dict[str, Any]:
        column = self.column

        dataset_ids = self.dataset_ids

        values = []
        for values_item_data in self.values:
            values_item: int | str
            values_item = values_item_data
            values.append(values_item)

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "column": column,
                "dataset_ids": dataset_ids,
                "values": values,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        column = d.pop("column")

        dataset_ids = cast(list[str], d.pop("dataset_ids"))

        values = []
        _values = d.pop("values")
        for values_item_data in _values:

            def _parse_values_item(data: object) -> int | str:
                return cast(int | str, data)

            values_item = _parse_values_item(values_item_data)

            values.append(values_item)

        privacy_job_create = cls(
            column=column,
            dataset_ids=dataset_ids,
            values=values,
        )

        return privacy_job_create
