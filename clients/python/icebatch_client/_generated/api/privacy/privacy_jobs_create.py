from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.http_validation_error import HTTPValidationError
from ...models.privacy_job_create import PrivacyJobCreate
from ...models.privacy_job_out import PrivacyJobOut
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    body: PrivacyJobCreate,
    idempotency_key: None | str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(idempotency_key, Unset):
        headers["Idempotency-Key"] = idempotency_key

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/privacy/jobs",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> HTTPValidationError | PrivacyJobOut | None:
    if response.status_code == 202:
        response_202 = PrivacyJobOut.from_dict(response.json())

        return response_202

    if response.status_code == 422:
        response_422 = HTTPValidationError.from_dict(response.json())

        return response_422

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[HTTPValidationError | PrivacyJobOut]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: PrivacyJobCreate,
    idempotency_key: None | str | Unset = UNSET,
) -> Response[HTTPValidationError | PrivacyJobOut]:
    """GDPR delete: tombstone every row whose identity column holds one of `values`.

    Args:
        idempotency_key (None | str | Unset): Any unique string; a retry with the same key gets
            the first response.
        body (PrivacyJobCreate):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[HTTPValidationError | PrivacyJobOut]
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
    body: PrivacyJobCreate,
    idempotency_key: None | str | Unset = UNSET,
) -> HTTPValidationError | PrivacyJobOut | None:
    """GDPR delete: tombstone every row whose identity column holds one of `values`.

    Args:
        idempotency_key (None | str | Unset): Any unique string; a retry with the same key gets
            the first response.
        body (PrivacyJobCreate):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        HTTPValidationError | PrivacyJobOut
    """

    return sync_detailed(
        client=client,
        body=body,
        idempotency_key=idempotency_key,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: PrivacyJobCreate,
    idempotency_key: None | str | Unset = UNSET,
) -> Response[HTTPValidationError | PrivacyJobOut]:
    """GDPR delete: tombstone every row whose identity column holds one of `values`.

    Args:
        idempotency_key (None | str | Unset): Any unique string; a retry with the same key gets
            the first response.
        body (PrivacyJobCreate):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[HTTPValidationError | PrivacyJobOut]
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
    body: PrivacyJobCreate,
    idempotency_key: None | str | Unset = UNSET,
) -> HTTPValidationError | PrivacyJobOut | None:
    """GDPR delete: tombstone every row whose identity column holds one of `values`.

    Args:
        idempotency_key (None | str | Unset): Any unique string; a retry with the same key gets
            the first response.
        body (PrivacyJobCreate):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        HTTPValidationError | PrivacyJobOut
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
            idempotency_key=idempotency_key,
        )
    ).parsed
