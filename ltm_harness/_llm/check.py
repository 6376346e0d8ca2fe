"""The check before the first turn of a model on an OpenAI-compatible endpoint (an `openai:` agent's, the judge's):
the key is there, the endpoint answers, and it serves the model. Makes no record: nothing is written."""

from __future__ import annotations

from ltm_harness._errors import LLMError
from ltm_harness._llm.client import LLMClient

PROBE = [{"role": "user", "content": "Reply with OK."}]  # the one-token call, when GET /models cannot say


def unlisted(base_url: str, model: str, listed: list[str]) -> str:
    """Why `model` cannot be used: the endpoint at `base_url` does not list it (and what it lists instead)."""
    shown = ", ".join(sorted(listed)[:5]) + (", ..." if len(listed) > 5 else "")
    return f"{base_url} does not list the model {model!r} (it lists {len(listed)}: {shown or 'none'})"


async def check_model(client: LLMClient, model: str, who: str, fix: str, probe: bool) -> str | None:
    """Raise an LLMError (`who`: ...; one line, fatal) when `client`'s endpoint cannot serve `model`: it cannot be
    reached or refuses the key, or its `GET /models` does not list the model (`fix` says what to do then). An
    endpoint with no such list: with `probe`, one call of one token asks the model itself; else a note that the first
    call will. Returns that note, or None."""
    try:
        listed = await client.listed_models()
    except LLMError as exc:
        raise LLMError(f"{who}: {exc}", fatal=True) from None
    if listed is None:
        if not probe:
            return (f"{who}: {client.endpoint.display} lists no models (GET /models answered 404), so the model "
                    f"{model!r} is checked by the first turn")
        try:
            await client.chat("judge", model, PROBE, max_tokens=1)
        except LLMError as exc:
            raise LLMError(f"{who}: {exc}", fatal=True) from None
        return None
    if model not in listed:
        raise LLMError(f"{who}: {unlisted(client.endpoint.display, model, listed)}; {fix}", fatal=True)
    return None
