import datetime
from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.audit_page import AuditPage
from ...models.problem import Problem
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    action: None | str | Unset = UNSET,
    since: datetime.datetime | None | Unset = UNSET,
    limit: int | Unset = 100,
    cursor: None | str | Unset = UNSET,
) -> dict[str, Any]:
    params: dict[str, Any] = {}

    json_action: None | str | Unset
    if isinstance(action, Unset):
        json_action = UNSET
    else:
        json_action = action
    params["action"] = json_action

    json_since: None | str | Unset
    if isinstance(since, Unset):
        json_since = UNSET
    elif isinstance(since, datetime.datetime):
        json_since = since.isoformat()
    else:
        json_since = since
    params["since"] = json_since

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
        "url": "/v1/audit",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> AuditPage | Problem | None:
    if response.status_code == 200:
        response_200 = AuditPage.from_dict(response.json())

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
) -> Response[AuditPage | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    action: None | str | Unset = UNSET,
    since: datetime.datetime | None | Unset = UNSET,
    limit: int | Unset = 100,
    cursor: None | str | Unset = UNSET,
) -> Response[AuditPage | Problem]:
    """Your organization's audit trail, newest first, a page at a time.

     Every mutating call and every denied one: who (key id), what (`action`), on what (`target`)
    and how it ended. Filter by `action` (`batches.*` for a prefix) and `since`. Events older
    than the audit retention are read from your organization's Iceberg table `<org>._audit`, in
    the same order and pages.

    Args:
        action (None | str | Unset): Only this action (`batches.*`: every batches action)
        since (datetime.datetime | None | Unset): Only events at or after (ISO 8601)
        limit (int | Unset): Items per page Default: 100.
        cursor (None | str | Unset): The `next` of the page before

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[AuditPage | Problem]
    """

    kwargs = _get_kwargs(
        action=action,
        since=since,
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
    action: None | str | Unset = UNSET,
    since: datetime.datetime | None | Unset = UNSET,
    limit: int | Unset = 100,
    cursor: None | str | Unset = UNSET,
) -> AuditPage | Problem | None:
    """Your organization's audit trail, newest first, a page at a time.

     Every mutating call and every denied one: who (key id), what (`action`), on what (`target`)
    and how it ended. Filter by `action` (`batches.*` for a prefix) and `since`. Events older
    than the audit retention are read from your organization's Iceberg table `<org>._audit`, in
    the same order and pages.

    Args:
        action (None | str | Unset): Only this action (`batches.*`: every batches action)
        since (datetime.datetime | None | Unset): Only events at or after (ISO 8601)
        limit (int | Unset): Items per page Default: 100.
        cursor (None | str | Unset): The `next` of the page before

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        AuditPage | Problem
    """

    return sync_detailed(
        client=client,
        action=action,
        since=since,
        limit=limit,
        cursor=cursor,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    action: None | str | Unset = UNSET,
    since: datetime.datetime | None | Unset = UNSET,
    limit: int | Unset = 100,
    cursor: None | str | Unset = UNSET,
) -> Response[AuditPage | Problem]:
    """Your organization's audit trail, newest first, a page at a time.

     Every mutating call and every denied one: who (key id), what (`action`), on what (`target`)
    and how it ended. Filter by `action` (`batches.*` for a prefix) and `since`. Events older
    than the audit retention are read from your organization's Iceberg table `<org>._audit`, in
    the same order and pages.

    Args:
        action (None | str | Unset): Only this action (`batches.*`: every batches action)
        since (datetime.datetime | None | Unset): Only events at or after (ISO 8601)
        limit (int | Unset): Items per page Default: 100.
        cursor (None | str | Unset): The `next` of the page before

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[AuditPage | Problem]
    """

    kwargs = _get_kwargs(
        action=action,
        since=since,
        limit=limit,
        cursor=cursor,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    action: None | str | Unset = UNSET,
    since: datetime.datetime | None | Unset = UNSET,
    limit: int | Unset = 100,
    cursor: None | str | Unset = UNSET,
) -> AuditPage | Problem | None:
    """Your organization's audit trail, newest first, a page at a time.

     Every mutating call and every denied one: who (key id), what (`action`), on what (`target`)
    and how it ended. Filter by `action` (`batches.*` for a prefix) and `since`. Events older
    than the audit retention are read from your organization's Iceberg table `<org>._audit`, in
    the same order and pages.

    Args:
        action (None | str | Unset): Only this action (`batches.*`: every batches action)
        since (datetime.datetime | None | Unset): Only events at or after (ISO 8601)
        limit (int | Unset): Items per page Default: 100.
        cursor (None | str | Unset): The `next` of the page before

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        AuditPage | Problem
    """

    return (
        await asyncio_detailed(
            client=client,
            action=action,
            since=since,
            limit=limit,
            cursor=cursor,
        )
    ).parsed
