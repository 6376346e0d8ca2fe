"""Error lines are cut at a word boundary with an ellipsis, never mid-word (issue 28, item 7)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ltm_harness._agents.frameworks.base import FrameworkAgent
from ltm_harness._engine.channel import _one_line
from ltm_harness._errors import AgentError
from ltm_harness._guard.limits import clip_text, cut_words, exception_line


def test_a_long_message_ends_on_a_whole_word_with_an_ellipsis() -> None:
    said = "the langgraph adapter requires the aiosqlite package; install it with pip install aiosqlite"
    cut = cut_words(said, 40)
    assert cut == "the langgraph adapter requires the..."
    assert clip_text(said, 40) == f"the langgraph adapter requires the... ({len(said)} characters)"
    assert cut_words(said, len(said)) == said


def test_one_long_token_is_cut_where_the_limit_falls() -> None:
    url = "https://example.org/" + "a" * 500
    assert cut_words(url, 100) == url[:97] + "..."


@given(st.lists(st.text(alphabet="abcdefghij", min_size=1, max_size=12), min_size=1, max_size=80),
       st.integers(min_value=40, max_value=200))
def test_cuts_never_split_a_short_word(words: list[str], limit: int) -> None:
    text = " ".join(words)
    cut = cut_words(text, limit)
    assert len(cut) <= limit
    if cut != text:
        assert cut.endswith("...")
        kept = cut[:-3].split(" ")
        assert kept == words[:len(kept)]  # every kept word whole (words of 12 characters at most: under a third of the limit)


@pytest.mark.parametrize("make", [
    lambda text: _one_line(AgentError(text)),
    lambda text: exception_line(ImportError(text)),
])
def test_error_lines_of_turns_end_on_a_word(make: object) -> None:
    text = "this adapter requires the aiosqlite package " * 12
    line = make(text)  # type: ignore[operator]
    head = line.partition("... (")[0]
    assert line != head and head.endswith(("package", "the", "requires", "adapter", "aiosqlite", "this"))


def test_a_framework_failure_is_cut_on_a_word() -> None:
    class Fake(FrameworkAgent):
        kind = "fake"

        async def _open(self) -> None: ...
        async def _answer(self, text: str, turn: int): ...  # type: ignore[no-untyped-def]
        async def _rollback(self, turns: int) -> None: ...

    agent = Fake("fake:x.py:y")
    error = agent._failure(ImportError("the store requires the aiosqlite package " * 20), "answering")
    head = str(error).partition("... (")[0]
    assert head.rsplit(" ", 1)[1] in {"the", "store", "requires", "aiosqlite", "package"}
    assert str(error).endswith(" characters))")
