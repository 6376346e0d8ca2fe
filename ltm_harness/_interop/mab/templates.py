"""What the agent is told, per source family: each chunk's wrapper and each question's query template. Our own words,
with the gist of the reference's (utils/templates.py, the long-context agent's variant; `reference_prompts` reads
the reference's own texts from a checkout instead):

* a chunk is a short exchange that needs no reply: the user hands over the chunk as "<what it is>" to remember
  (documents, a conversation, a book excerpt, examples, recommender dialogues, a book, facts), the assistant
  answers that it has taken it in and will answer questions about it. The reference also writes the wall-clock time
  into each wrapper (not LongMemEval's); we do not: a run must be reproducible byte for byte (ARCHITECTURE.md
  invariant 1), and no question depends on it;
* a question is the source's template filled with the row's question: answer only (ruler QA, ending "Answer:"), one
  short phrase about chats with the user (LongMemEval), the next event of a book (EventQA), a numeric label as
  "label: N" (the ICL sets), 20 numbered movies for a new conversation (recommendation), a summary of the book
  (InfBench), the question's own output format (DetectiveQA), the newest of conflicting numbered facts with a
  one-shot example (fact consolidation)."""

from __future__ import annotations

from dataclasses import dataclass

from ltm_harness._interop.mab.sources import Family

_ANSWER_LATER = "I have taken it in and will answer the questions you ask about it."


@dataclass(frozen=True)
class Templates:
    """One family's texts: `memorize` (the user's line with {context}; `ack`, the assistant's reply, "" when the
    whole wrapper is the one line) and `query` (with {question})."""

    memorize: str
    ack: str
    query: str

    def wrap(self, chunk: str) -> list[tuple[str, str]]:
        """The chunk as history turns: (role, text)."""
        user = self.memorize.replace("{context}", chunk).replace("{time_stamp}", "")
        return [("user", user)] + ([("assistant", self.ack)] if self.ack else [])

    def ask(self, question: str) -> str:
        return self.query.replace("{question}", question).replace("{{label}}", "{label}")


def _memorize(what: str) -> str:
    return f"Here is {what}; keep it in memory, I will ask you about it later.\n\n{{context}}"


OURS: dict[Family, Templates] = {
    "ruler_qa": Templates(_memorize("a set of documents I have read"), _ANSWER_LATER,
                          "Answer the question from the documents you have memorized. Reply with the answer alone, "
                          "no other words.\n\nQuestion: {question}\n\nAnswer:"),
    "longmemeval": Templates(_memorize("an earlier conversation between the user and you, the assistant"),
                             _ANSWER_LATER,
                             "Those chats were between you and a user. From the parts that matter, answer the "
                             "question below as briefly as you can, in a single phrase if you can.\n\n{question}"
                             "\n\nAnswer:"),
    "eventqa": Templates(_memorize("an excerpt of a book"), _ANSWER_LATER,
                         "Using the book you have memorized, do the task below.\n\n{question}\n\nWhat happens next:"),
    "in_context_learning": Templates(
        _memorize("a set of labelled examples"), _ANSWER_LATER,
        "The examples you have memorized map texts to numeric labels. Give the text below its label that way. "
        "Reply with only \"label: {{label}}\".\n\n{question}\n\nlabel:"),
    "recsys_redial": Templates(
        _memorize("a set of dialogues between users and a movie recommender"), _ANSWER_LATER,
        "Act as a movie recommender. Using the dialogues you have memorized, read the new conversation below "
        "between a user and you (the recommender) and reply with 20 recommended movies as a numbered list "
        "(1. ..., 2. ...), with no other sentences.\n\nThe conversation: {question}\n\nYour recommendations:\n"),
    "infbench_sum": Templates(_memorize("a book I have read"), _ANSWER_LATER,
                              "Write a summary of the book you were given.\n\n{question}\n\nNow write the summary."),
    "detective_qa": Templates(_memorize("a book I have read"), _ANSWER_LATER,
                              "Using the book you have memorized, answer the question below, in exactly the output "
                              "format it asks for.\n\n{question}\n"),
    "factconsolidation": Templates(
        _memorize("a pool of facts I have learned"), _ANSWER_LATER,
        "Act as a knowledge base. Every fact in the pool you memorized starts with a serial number, and a larger "
        "number means a newer fact. Where facts conflict, the newest one holds. Answer very briefly, with no other "
        "words, only from the pool of facts, not from what you know of the real world.\n\nExample:\n\nQuestion: "
        "According to the pool of facts, who is the current president of Russia?\nAnswer: Donald Trump\n\n"
        "Question: According to the pool of facts, {question}\nAnswer:"),
}
