"""A row's context cut into chunks as the reference cuts it (`chunk_text_into_sentences` of its
utils/eval_other_utils.py): sentences (NLTK), each counted with the GPT-4o-mini tokenizer (o200k_base, through
ltm_harness/_tokens.py, offline), packed greedily while the sum of the sentences' counts stays within the chunk size,
joined by one space; a sentence longer than the size is a chunk of its own.

Sentences: NLTK's `sent_tokenize` with its trained English punkt model where NLTK finds it installed
(`punkt_tab`, NLTK 3.9+; the reference downloads `punkt` at run time, which NLTK 3.9+ no longer reads). The harness
never downloads it: without it, NLTK's untrained `PunktSentenceTokenizer` (it ships with NLTK, no data) splits the
text; it knows no English abbreviations, so "Mr. Smith" is two sentences where the trained model keeps one: chunk
boundaries may then fall a sentence earlier, never mid-sentence. Which splitter cut a row is kept in its test
(`splitter`). Install the model with `python -m nltk.downloader punkt_tab` for the reference's splits.

Differences kept on purpose: the reference starts with an empty chunk when the first sentence alone exceeds the size
(it finalises the empty current chunk); we do not (an empty history turn tells the agent nothing).

`<|endoftext|>` in a sentence is packed as the reference counts it, one token (it encodes with
`allowed_special={'<|endoftext|>'}`), so the chunks are the reference's; `Chunk.tokens` still counts it as the
project's tokenizer does (ordinary text, several tokens), since the session plans with that count. Other special
tokens (`<|endofprompt|>`) are ordinary text here, where the reference stops with an error.

Each sentence is tokenized once (twice when it holds `<|endoftext|>`); a chunk's token count is the sum of its
sentences' (`Chunk.tokens`)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

from ltm_harness._tokens import get_encoding

ENCODING = "o200k_base"  # tiktoken's encoding for gpt-4o-mini
_EOT = "<|endoftext|>"  # the one special token the reference's chunker counts as a single token


@dataclass(frozen=True)
class Chunk:
    text: str
    tokens: int  # the sum of its sentences' token counts (ordinary text: what the session's tokenizer counts)


@lru_cache(maxsize=1)
def splitter() -> tuple[str, Callable[[str], list[str]]]:
    """(name, split) of the sentence splitter used (module docstring)."""
    import nltk
    from nltk.tokenize.punkt import PunktSentenceTokenizer

    try:
        nltk.data.find("tokenizers/punkt_tab/english/")
    except LookupError:
        untrained = PunktSentenceTokenizer()
        return "nltk punkt, untrained (the English model is not installed)", untrained.tokenize
    return "nltk sent_tokenize (punkt_tab english)", nltk.sent_tokenize


def split_sentences(text: str) -> list[str]:
    return splitter()[1](text)


def chunk_text(text: str, chunk_size: int) -> list[Chunk]:
    """The context's chunks (module docstring)."""
    sentences = split_sentences(text)
    encoding = get_encoding(ENCODING)
    counts = [len(encoding.encode_ordinary(s)) for s in sentences]  # one call each: a pool would cost more
    chunks: list[Chunk] = []
    current: list[str] = []
    total = packed = 0
    for sentence, n in zip(sentences, counts):
        weight = n if _EOT not in sentence else len(encoding.encode(sentence, allowed_special={_EOT},
                                                                     disallowed_special=()))
        if current and packed + weight > chunk_size:
            chunks.append(Chunk(" ".join(current), total))
            current, total, packed = [], 0, 0
        current.append(sentence)
        total += n
        packed += weight
    if current:
        chunks.append(Chunk(" ".join(current), total))
    return chunks
