from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..models.pushdown_type import PushdownType

T = TypeVar("T", bound="Pushdown")


@_attrs_define
class Pushdown:
    """
    Attributes:
        name (str): Column of the raw table (lowercase letters, digits, '_')
        path (str): Dotted path into the document (`address.country` or `$.address.country`)
        type_ (PushdownType): The column's type; a value that does not fit is null
    """

    name: str
    path: str
    type_: PushdownType

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        path = self.path

        type_ = self.type_.value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
                "path": path,
                "type": type_,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        name = d.pop("name")

        path = d.pop("path")

        type_ = PushdownType(d.pop("type"))

        pushdown = cls(
            name=name,
            path=path,
            type_=type_,
        )

        return pushdown
