"""Shared test configuration: anyio on asyncio for every async test."""

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
