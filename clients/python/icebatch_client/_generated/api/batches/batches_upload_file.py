from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.batch_file_out import BatchFileOut
from ...models.http_validation_error import HTTPValidationError
from ...types import Response


def _get_kwargs(
    batch_id: str,
    name: str,
) -> dict[str, Any]:
    _kwargs: dict[str, Any] = {
        "method": "put",
        "url": "/v1/batches/{batch_id}/files/{name}".format(
            batch_id=quote(str(batch_id), safe=""),
            name=quote(str(name), safe=""),
        ),
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Any | BatchFileOut | HTTPValidationError | None:
    if response.status_code == 201:
        response_201 = BatchFileOut.from_dict(response.json())

        return response_201

    if response.status_code == 413:
        response_413 = cast(Any, None)
        return response_413

    if response.status_code == 422:
        response_422 = HTTPValidationError.from_dict(response.json())

        return response_422

    if response.status_code == 507:
        response_507 = cast(Any, None)
        return response_507

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[Any | BatchFileOut | HTTPValidationError]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    batch_id: str,
    name: str,
    *,
    client: AuthenticatedClient,
) -> Response[Any | BatchFileOut | HTTPValidationError]:
    """Upload one file of the batch (the raw file as the request body).

    Args:
        batch_id (str):
        name (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | BatchFileOut | HTTPValidationError]
    """

    kwargs = _get_kwargs(
        batch_id=batch_id,
        name=name,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    batch_id: str,
    name: str,
    *,
    client: AuthenticatedClient,
) -> Any | BatchFileOut | HTTPValidationError | None:
    """Upload one file of the batch (the raw file as the request body).

    Args:
        batch_id (str):
        name (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | BatchFileOut | HTTPValidationError
    """

    return sync_detailed(
        batch_id=batch_id,
        name=name,
        client=client,
    ).parsed


async def asyncio_detailed(
    batch_id: str,
    name: str,
    *,
    client: AuthenticatedClient,
) -> Response[Any | BatchFileOut | HTTPValidationError]:
    """Upload one file of the batch (the raw file as the request body).

    Args:
        batch_id (str):
        name (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | BatchFileOut | HTTPValidationError]
    """

    kwargs = _get_kwargs(
        batch_id=batch_id,
        name=name,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    batch_id: str,
    name: str,
    *,
    client: AuthenticatedClient,
) -> Any | BatchFileOut | HTTPValidationError | None:
    """Upload one file of the batch (the raw file as the request body).

    Args:
        batch_id (str):
        name (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | BatchFileOut | HTTPValidationError
    """

    return (
        await asyncio_detailed(
            batch_id=batch_id,
            name=name,
            client=client,
        )
    ).parsed
