import datetime
from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.batch_list import BatchList
from ...models.batch_status import BatchStatus
from ...models.problem import Problem
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    dataset_id: None | str | Unset = UNSET,
    status: BatchStatus | None | Unset = UNSET,
    updated_since: datetime.datetime | None | Unset = UNSET,
    limit: int | Unset = 100,
    cursor: None | str | Unset = UNSET,
) -> dict[str, Any]:
    params: dict[str, Any] = {}

    json_dataset_id: None | str | Unset
    if isinstance(dataset_id, Unset):
        json_dataset_id = UNSET
    else:
        json_dataset_id = dataset_id
    params["dataset_id"] = json_dataset_id

    json_status: None | str | Unset
    if isinstance(status, Unset):
        json_status = UNSET
    elif isinstance(status, BatchStatus):
        json_status = status.value
    else:
        json_status = status
    params["status"] = json_status

    json_updated_since: None | str | Unset
    if isinstance(updated_since, Unset):
        json_updated_since = UNSET
    elif isinstance(updated_since, datetime.datetime):
        json_updated_since = updated_since.isoformat()
    else:
        json_updated_since = updated_since
    params["updated_since"] = json_updated_since

    params["limit"] = limit

    json_cursor: None | str | Unset
    if isinstance(cursor, Unset):
        json_cursor = UNSET
    else:
        json_cursor = cursor
    params["cursor"] = json_cursor

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/batches",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> BatchList | Problem | None:
    if response.status_code == 200:
        response_200 = BatchList.from_dict(response.json())

        return response_200

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = Problem.from_dict(response.json())

        return response_403

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
) -> Response[BatchList | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    dataset_id: None | str | Unset = UNSET,
    status: BatchStatus | None | Unset = UNSET,
    updated_since: datetime.datetime | None | Unset = UNSET,
    limit: int | Unset = 100,
    cursor: None | str | Unset = UNSET,
) -> Response[BatchList | Problem]:
    """List batches, newest first, by dataset and status.

     A page at a time: pass a page's `next` as `cursor` (or follow its `Link` header). A poller
    passes `updated_since` (the time of its last poll) to get only what changed.

    Args:
        dataset_id (None | str | Unset): Only this dataset's batches: its id or its name
        status (BatchStatus | None | Unset):
        updated_since (datetime.datetime | None | Unset): Only items changed at or after this time
            (ISO 8601): what a poller needs
        limit (int | Unset): Items per page Default: 100.
        cursor (None | str | Unset): The `next` of the page before

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[BatchList | Problem]
    """

    kwargs = _get_kwargs(
        dataset_id=dataset_id,
        status=status,
        updated_since=updated_since,
        limit=limit,
        cursor=cursor,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
    dataset_id: None | str | Unset = UNSET,
    status: BatchStatus | None | Unset = UNSET,
    updated_since: datetime.datetime | None | Unset = UNSET,
    limit: int | Unset = 100,
    cursor: None | str | Unset = UNSET,
) -> BatchList | Problem | None:
    """List batches, newest first, by dataset and status.

     A page at a time: pass a page's `next` as `cursor` (or follow its `Link` header). A poller
    passes `updated_since` (the time of its last poll) to get only what changed.

    Args:
        dataset_id (None | str | Unset): Only this dataset's batches: its id or its name
        status (BatchStatus | None | Unset):
        updated_since (datetime.datetime | None | Unset): Only items changed at or after this time
            (ISO 8601): what a poller needs
        limit (int | Unset): Items per page Default: 100.
        cursor (None | str | Unset): The `next` of the page before

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        BatchList | Problem
    """

    return sync_detailed(
        client=client,
        dataset_id=dataset_id,
        status=status,
        updated_since=updated_since,
        limit=limit,
        cursor=cursor,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    dataset_id: None | str | Unset = UNSET,
    status: BatchStatus | None | Unset = UNSET,
    updated_since: datetime.datetime | None | Unset = UNSET,
    limit: int | Unset = 100,
    cursor: None | str | Unset = UNSET,
) -> Response[BatchList | Problem]:
    """List batches, newest first, by dataset and status.

     A page at a time: pass a page's `next` as `cursor` (or follow its `Link` header). A poller
    passes `updated_since` (the time of its last poll) to get only what changed.

    Args:
        dataset_id (None | str | Unset): Only this dataset's batches: its id or its name
        status (BatchStatus | None | Unset):
        updated_since (datetime.datetime | None | Unset): Only items changed at or after this time
            (ISO 8601): what a poller needs
        limit (int | Unset): Items per page Default: 100.
        cursor (None | str | Unset): The `next` of the page before

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[BatchList | Problem]
    """

    kwargs = _get_kwargs(
        dataset_id=dataset_id,
        status=status,
        updated_since=updated_since,
        limit=limit,
        cursor=cursor,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    dataset_id: None | str | Unset = UNSET,
    status: BatchStatus | None | Unset = UNSET,
    updated_since: datetime.datetime | None | Unset = UNSET,
    limit: int | Unset = 100,
    cursor: None | str | Unset = UNSET,
) -> BatchList | Problem | None:
    """List batches, newest first, by dataset and status.

     A page at a time: pass a page's `next` as `cursor` (or follow its `Link` header). A poller
    passes `updated_since` (the time of its last poll) to get only what changed.

    Args:
        dataset_id (None | str | Unset): Only this dataset's batches: its id or its name
        status (BatchStatus | None | Unset):
        updated_since (datetime.datetime | None | Unset): Only items changed at or after this time
            (ISO 8601): what a poller needs
        limit (int | Unset): Items per page Default: 100.
        cursor (None | str | Unset): The `next` of the page before

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        BatchList | Problem
    """

    return (
        await asyncio_detailed(
            client=client,
            dataset_id=dataset_id,
            status=status,
            updated_since=updated_since,
            limit=limit,
            cursor=cursor,
        )
    ).parsed
