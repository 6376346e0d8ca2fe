"""What a run shares between all its LLM calls: settings, concurrency pools and rate gates, prices, cache, the
ledger of spend, clients."""

from __future__ import annotations

from pathlib import Path

from ltm_harness._llm.cache import LLMCache
from ltm_harness._llm.client import Limits, LLMClient, LLMSettings
from ltm_harness._llm.contexts import ContextTable
from ltm_harness._llm.endpoint import Endpoint
from ltm_harness._llm.ledger import Ledger
from ltm_harness._llm.pricing import PriceTable
from ltm_harness._tokens import DEFAULT_ENCODING


class LLMRuntime:
    def __init__(self, settings: LLMSettings | None = None, cache_dir: Path | None = None,
                 tokenizer: str = DEFAULT_ENCODING, ledger: Ledger | None = None) -> None:
        self.settings = settings or LLMSettings()
        self.limits = Limits(self.settings)
        self.prices = PriceTable(self.settings.prices)
        # the run's spend, one ledger for all its clients (the run folder's, when the run made one)
        self.ledger = ledger if ledger is not None else Ledger(self.prices, contexts=ContextTable(self.settings.contexts))
        self.cache = LLMCache(cache_dir) if cache_dir is not None and self.settings.cache else None
        self.tokenizer = tokenizer
        self._clients: dict[tuple[str, str, int], LLMClient] = {}

    def client(self, endpoint: Endpoint, settings: LLMSettings | None = None) -> LLMClient:
        """A client for `endpoint` sharing this run's pools, prices and cache (one per endpoint and settings)."""
        settings = settings or self.settings
        key = (endpoint.base_url, endpoint.key.value, id(settings))
        if key not in self._clients:
            self._clients[key] = LLMClient(endpoint, settings, self.limits, self.prices, self.tokenizer, self.cache,
                                           self.ledger)
        return self._clients[key]

    async def close(self) -> None:
        clients, self._clients = list(self._clients.values()), {}
        for c in clients:
            await c.close()
        self.ledger.close()
