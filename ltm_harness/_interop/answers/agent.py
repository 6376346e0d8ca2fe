"""The agent that plays an imported answers file through the one engine: it hears the history like any agent and
answers each question with the file's response to it, so the event log, the results and the scoring are those of
every run. A question the file has no (usable) answer for is replied NOT_ANSWERED, which leaves it unscored.

Which conversation it is in comes from its session (the harness names each benchmark conversation's session
`<dataset>__<test id>`, and gives the agent its `state_dir` there before the first turn); which question, from the
question's text in the message, in order among equal texts. It keeps no memory, so it resumes and goes back trivially.
"""

from __future__ import annotations

from typing import Any

from ltm_harness._agents.base import Agent, AgentMessage, Reply
from ltm_harness._authoring.unanswered import NOT_ANSWERED

Table = dict[str, list[tuple[str, str | None]]]  # session name -> (question text, response or None) in asked order


class ImportedAnswersAgent(Agent):
    description = "answers each question with an imported file's response to it (import-answers)"

    def __init__(self, name: str, table: Table) -> None:
        super().__init__(name)
        self._table = table
        self._asked: dict[str, int] = {}

    async def reply(self, message: AgentMessage, oracle_hint: str | None = None) -> Reply:
        session = self.state_dir.name if self.state_dir is not None else ""
        questions = self._table.get(session, [])
        found = [(text, response) for text, response in questions if text.strip() and text.strip() in message.text]
        if not found:
            return Reply(text=NOT_ANSWERED)
        longest = max(len(text) for text, _ in found)  # "When did X go?" is in "When did X go? Answer..." too
        equal = [response for text, response in found if len(text) == longest]
        key = found[[len(t) for t, _ in found].index(longest)][0]
        n = self._asked.get(key, 0)
        self._asked[key] = n + 1
        response = equal[n] if n < len(equal) else None
        return Reply(text=NOT_ANSWERED if response is None else response)

    async def observe(self, message: AgentMessage) -> None:
        """History is heard: the answers were given elsewhere."""

    def snapshot(self) -> Any:
        """Going back (independent questions): there is no memory to go back in; the count of questions asked is
        kept on purpose, so that equal texts keep their order."""
        return None

    def rewind(self, snapshot: Any) -> None:
        """Nothing to forget: the answers come from the file."""

    async def restore(self, turns: list[tuple[AgentMessage, str]]) -> None:
        """Resuming: count the questions already answered, so equal texts keep their order."""
        for message, _ in turns:
            if not message.observe:
                await self.reply(message)
