"""`documents.from_json` and `to_json`: orjson where it takes the value, the standard library's
result and errors everywhere (an integer past 64 bits, NaN, a lone surrogate escape)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.cdc.documents import from_json, to_json

# orjson reads -2**63 .. 2**64 - 1 exactly: the integers about its bounds, and 19 and 20 digits
EDGE_INTEGERS = st.one_of(
    st.integers(min_value=-(2**63) - 10**4, max_value=-(2**63) + 10**4),
    st.integers(min_value=2**64 - 10**4, max_value=2**64 + 10**4),
    st.integers(min_value=-(10**20), max_value=-(10**18)),
    st.integers(min_value=10**18, max_value=10**20),
)
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)  # past orjson's 64 bits, both ways
    | EDGE_INTEGERS
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


def refuse(name: str) -> Any:
    raise ValueError(f"{name} refused")


@given(JSON_VALUES, st.booleans())
def test_from_json_reads_what_the_standard_library_reads(value: Any, ascii_only: bool) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only)
    assert from_json(text) == json.loads(text)
    assert [type(v) for v in _leaves(from_json(text))] == [
        type(v) for v in _leaves(json.loads(text))
    ]


@given(JSON_VALUES)
def test_to_json_writes_what_the_standard_library_reads_back(value: Any) -> None:
    assert json.loads(to_json(value)) == value


@pytest.mark.parametrize(
    "text",
    [
        "NaN",
        "[1, Infinity]",
        '{"a": -Infinity}',
    ],
)
def test_non_json_constants_go_to_parse_constant(text: str) -> None:
    with pytest.raises(ValueError, match="refused"):
        from_json(text, parse_constant=refuse)


@pytest.mark.parametrize("text", ['{"op": "c",', "[1,]", "{'a': 1}", ""])
def test_bad_json_raises_the_standard_librarys_error(text: str) -> None:
    with pytest.raises(json.JSONDecodeError) as ours:
        from_json(text)
    with pytest.raises(json.JSONDecodeError) as theirs:
        json.loads(text)
    assert (ours.value.msg, ours.value.lineno, ours.value.colno) == (
        theirs.value.msg,
        theirs.value.lineno,
        theirs.value.colno,
    )


@pytest.mark.parametrize(
    "text",
    [
        "9223372036854775807",
        "9223372036854775808",
        "-9223372036854775809",  # orjson alone: -9.223372036854776e+18
        "-9223372036854775808",
        "-9999999999999999999",  # 19 digits and a minus: orjson alone reads a float
        "9999999999999999999",
        "18446744073709551615",
        "99999999999999999999",
        "18446744073709551616",
        '{"id": "12345678901234567890123", "n": 1}',
        "[0.12345678901234567890123, 1e400]",
    ],
)
def test_long_numbers_read_as_the_standard_library_reads_them(text: str) -> None:
    assert from_json(text) == json.loads(text)
    assert [type(v) for v in _leaves(from_json(text))] == [
        type(v) for v in _leaves(json.loads(text))
    ]


def test_a_debezium_value_with_nanosecond_times_is_read_by_orjson(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Debezium 2.6 and later put `ts_ns` (19 digits) in every change event value: such a text
    stays off the standard library's parser (2-3x orjson's time on a sink's batch)."""
    text = json.dumps(
        [
            {
                "op": "u",
                "after": {"id": 7},
                "source": {"ts_ms": 1764950400123, "ts_ns": 1764950400123456789, "lsn": 2**40},
                "ts_ms": 1764950400126,
                "ts_us": 1764950400126001,
                "ts_ns": 1764950400126001002,
            }
        ]
    )
    expected = json.loads(text)

    def slow(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the standard library's parser was called")

    monkeypatch.setattr(json, "loads", slow)
    assert from_json(text) == expected


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _leaves(v)]
    if isinstance(value, list):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value]


def test_a_lone_surrogate_escape_is_read_as_the_standard_library_reads_it() -> None:
    text = '{"name": "\\ud800", "n": 18446744073709551616}'
    assert from_json(text) == {"name": "\ud800", "n": 2**64}


def test_a_text_holding_a_lone_surrogate_is_read_as_the_standard_library_reads_it() -> None:
    text = '{"name": "\ud800"}'  # a MongoDB image is JSON text inside a JSON string
    assert from_json(text) == json.loads(text) == {"name": "\ud800"}
