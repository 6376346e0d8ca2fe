from __future__ import annotations

import pytest

from ltm_harness._llm.mock_server import MockLLMServer

SECRET = "sk-test-SECRET-4f9a2c7e1b"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
async def mock_llm():
    async with MockLLMServer() as server:
        yield server
