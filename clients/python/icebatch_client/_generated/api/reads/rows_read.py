from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.problem import Problem
from ...models.rows_read_format import RowsReadFormat
from ...types import UNSET, Response, Unset


def _get_kwargs(
    dataset_id: str,
    *,
    format_: RowsReadFormat | Unset = RowsReadFormat.JSONL,
    as_of: None | str | Unset = UNSET,
    offset: int | Unset = 0,
    limit: int | None | Unset = UNSET,
) -> dict[str, Any]:
    params: dict[str, Any] = {}

    json_format_: str | Unset = UNSET
    if not isinstance(format_, Unset):
        json_format_ = format_.value

    params["format"] = json_format_

    json_as_of: None | str | Unset
    if isinstance(as_of, Unset):
        json_as_of = UNSET
    else:
        json_as_of = as_of
    params["as_of"] = json_as_of

    params["offset"] = offset

    json_limit: int | None | Unset
    if isinstance(limit, Unset):
        json_limit = UNSET
    else:
        json_limit = limit
    params["limit"] = json_limit

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/datasets/{dataset_id}/rows".format(
            dataset_id=quote(str(dataset_id), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Problem | None:
    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = Problem.from_dict(response.json())

        return response_403

    if response.status_code == 404:
        response_404 = Problem.from_dict(response.json())

        return response_404

    if response.status_code == 422:
        response_422 = Problem.from_dict(response.json())

        return response_422

    if response.status_code == 429:
        response_429 = Problem.from_dict(response.json())

        return response_429

    if response.status_code == 503:
        response_503 = Problem.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    dataset_id: str,
    *,
    client: AuthenticatedClient,
    format_: RowsReadFormat | Unset = RowsReadFormat.JSONL,
    as_of: None | str | Unset = UNSET,
    offset: int | Unset = 0,
    limit: int | None | Unset = UNSET,
) -> Response[Problem]:
    """Stream the rows visible now, or at `as_of`.

     Tombstoned rows are hidden, and so are the rows of a GDPR-deleted identity at every snapshot.
    `offset` and `limit` slice the rows (in file order); the snapshot read is in
    `X-Icebatch-Snapshot-Id`, so the next pages can ask for the same one with `as_of`.

    Args:
        dataset_id (str): The dataset's id, or its name (names are unique in your organization; an
            exact id is tried first)
        format_ (RowsReadFormat | Unset):  Default: RowsReadFormat.JSONL.
        as_of (None | str | Unset): A snapshot id or an ISO 8601 time
        offset (int | Unset): Items to skip Default: 0.
        limit (int | None | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem]
    """

    kwargs = _get_kwargs(
        dataset_id=dataset_id,
        format_=format_,
        as_of=as_of,
        offset=offset,
        limit=limit,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    dataset_id: str,
    *,
    client: AuthenticatedClient,
    format_: RowsReadFormat | Unset = RowsReadFormat.JSONL,
    as_of: None | str | Unset = UNSET,
    offset: int | Unset = 0,
    limit: int | None | Unset = UNSET,
) -> Problem | None:
    """Stream the rows visible now, or at `as_of`.

     Tombstoned rows are hidden, and so are the rows of a GDPR-deleted identity at every snapshot.
    `offset` and `limit` slice the rows (in file order); the snapshot read is in
    `X-Icebatch-Snapshot-Id`, so the next pages can ask for the same one with `as_of`.

    Args:
        dataset_id (str): The dataset's id, or its name (names are unique in your organization; an
            exact id is tried first)
        format_ (RowsReadFormat | Unset):  Default: RowsReadFormat.JSONL.
        as_of (None | str | Unset): A snapshot id or an ISO 8601 time
        offset (int | Unset): Items to skip Default: 0.
        limit (int | None | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem
    """

    return sync_detailed(
        dataset_id=dataset_id,
        client=client,
        format_=format_,
        as_of=as_of,
        offset=offset,
        limit=limit,
    ).parsed


async def asyncio_detailed(
    dataset_id: str,
    *,
    client: AuthenticatedClient,
    format_: RowsReadFormat | Unset = RowsReadFormat.JSONL,
    as_of: None | str | Unset = UNSET,
    offset: int | Unset = 0,
    limit: int | None | Unset = UNSET,
) -> Response[Problem]:
    """Stream the rows visible now, or at `as_of`.

     Tombstoned rows are hidden, and so are the rows of a GDPR-deleted identity at every snapshot.
    `offset` and `limit` slice the rows (in file order); the snapshot read is in
    `X-Icebatch-Snapshot-Id`, so the next pages can ask for the same one with `as_of`.

    Args:
        dataset_id (str): The dataset's id, or its name (names are unique in your organization; an
            exact id is tried first)
        format_ (RowsReadFormat | Unset):  Default: RowsReadFormat.JSONL.
        as_of (None | str | Unset): A snapshot id or an ISO 8601 time
        offset (int | Unset): Items to skip Default: 0.
        limit (int | None | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem]
    """

    kwargs = _get_kwargs(
        dataset_id=dataset_id,
        format_=format_,
        as_of=as_of,
        offset=offset,
        limit=limit,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    dataset_id: str,
    *,
    client: AuthenticatedClient,
    format_: RowsReadFormat | Unset = RowsReadFormat.JSONL,
    as_of: None | str | Unset = UNSET,
    offset: int | Unset = 0,
    limit: int | None | Unset = UNSET,
) -> Problem | None:
    """Stream the rows visible now, or at `as_of`.

     Tombstoned rows are hidden, and so are the rows of a GDPR-deleted identity at every snapshot.
    `offset` and `limit` slice the rows (in file order); the snapshot read is in
    `X-Icebatch-Snapshot-Id`, so the next pages can ask for the same one with `as_of`.

    Args:
        dataset_id (str): The dataset's id, or its name (names are unique in your organization; an
            exact id is tried first)
        format_ (RowsReadFormat | Unset):  Default: RowsReadFormat.JSONL.
        as_of (None | str | Unset): A snapshot id or an ISO 8601 time
        offset (int | Unset): Items to skip Default: 0.
        limit (int | None | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem
    """

    return (
        await asyncio_detailed(
            dataset_id=dataset_id,
            client=client,
            format_=format_,
            as_of=as_of,
            offset=offset,
            limit=limit,
        )
    ).parsed
