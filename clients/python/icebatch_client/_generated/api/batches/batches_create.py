from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.batch_create import BatchCreate
from ...models.batch_out import BatchOut
from ...models.problem import Problem
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    body: BatchCreate,
    idempotency_key: None | str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(idempotency_key, Unset):
        headers["Idempotency-Key"] = idempotency_key

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/batches",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> BatchOut | Problem | None:
    if response.status_code == 201:
        response_201 = BatchOut.from_dict(response.json())

        return response_201

    if response.status_code == 400:
        response_400 = Problem.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = Problem.from_dict(response.json())

        return response_403

    if response.status_code == 404:
        response_404 = Problem.from_dict(response.json())

        return response_404

    if response.status_code == 409:
        response_409 = Problem.from_dict(response.json())

        return response_409

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
) -> Response[BatchOut | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: BatchCreate,
    idempotency_key: None | str | Unset = UNSET,
) -> Response[BatchOut | Problem]:
    """Open a batch; it accepts files while 'loading'.

     Upload its files (`PUT /v1/batches/{batch_id}/files/{name}`), then complete it. With
    `replay`, the batch replaces its predecessors: their tombstones and its rows commit as one
    snapshot.

    Args:
        idempotency_key (None | str | Unset): Any unique string; a retry with the same key gets
            the first response.
        body (BatchCreate):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[BatchOut | Problem]
    """

    kwargs = _get_kwargs(
        body=body,
        idempotency_key=idempotency_key,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
    body: BatchCreate,
    idempotency_key: None | str | Unset = UNSET,
) -> BatchOut | Problem | None:
    """Open a batch; it accepts files while 'loading'.

     Upload its files (`PUT /v1/batches/{batch_id}/files/{name}`), then complete it. With
    `replay`, the batch replaces its predecessors: their tombstones and its rows commit as one
    snapshot.

    Args:
        idempotency_key (None | str | Unset): Any unique string; a retry with the same key gets
            the first response.
        body (BatchCreate):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        BatchOut | Problem
    """

    return sync_detailed(
        client=client,
        body=body,
        idempotency_key=idempotency_key,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: BatchCreate,
    idempotency_key: None | str | Unset = UNSET,
) -> Response[BatchOut | Problem]:
    """Open a batch; it accepts files while 'loading'.

     Upload its files (`PUT /v1/batches/{batch_id}/files/{name}`), then complete it. With
    `replay`, the batch replaces its predecessors: their tombstones and its rows commit as one
    snapshot.

    Args:
        idempotency_key (None | str | Unset): Any unique string; a retry with the same key gets
            the first response.
        body (BatchCreate):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[BatchOut | Problem]
    """

    kwargs = _get_kwargs(
        body=body,
        idempotency_key=idempotency_key,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    body: BatchCreate,
    idempotency_key: None | str | Unset = UNSET,
) -> BatchOut | Problem | None:
    """Open a batch; it accepts files while 'loading'.

     Upload its files (`PUT /v1/batches/{batch_id}/files/{name}`), then complete it. With
    `replay`, the batch replaces its predecessors: their tombstones and its rows commit as one
    snapshot.

    Args:
        idempotency_key (None | str | Unset): Any unique string; a retry with the same key gets
            the first response.
        body (BatchCreate):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        BatchOut | Problem
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
            idempotency_key=idempotency_key,
        )
    ).parsed
