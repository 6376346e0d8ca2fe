import hashlib

import pytest

from ltm_harness import _tokens as tokens
from ltm_harness._errors import LTMError


def test_cl100k_counts_like_tiktoken_reference():
    tok = tokens.get_tokenizer()
    # Known cl100k_base encodings.
    assert tok.encode("hello world") == [15339, 1917]
    assert tok.count("") == 0
    assert tok.count("<|endoftext|>") > 1  # special tokens are counted as plain text


def test_o200k_loads_offline():
    enc = tokens.get_encoding("o200k_base")
    assert enc.encode_ordinary("hello world") == [24912, 2375]


def test_rank_file_hash_is_verified(monkeypatch):
    with pytest.raises(LTMError, match="sha256"):
        tokens.load_verified_ranks("cl100k_base", "0" * 64)
    good = hashlib.sha256(tokens._shipped_rank_bytes("cl100k_base")).hexdigest()
    assert good == "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"


def test_no_download_is_attempted(monkeypatch):
    import tiktoken.load

    def refuse(*a, **k):
        raise AssertionError("tiktoken tried to fetch a file")

    monkeypatch.setattr(tiktoken.load, "read_file_cached", refuse)
    monkeypatch.setattr(tiktoken.load, "read_file", refuse)
    tokens.get_encoding.cache_clear()
    try:
        assert tokens.get_encoding("cl100k_base").encode_ordinary("hello world") == [15339, 1917]
    finally:
        tokens.get_encoding.cache_clear()


def test_unknown_encoding_is_a_clear_error():
    with pytest.raises(LTMError, match="cl100k_base"):
        tokens.get_encoding("p50k_base")


def test_the_encoding_is_loaded_at_the_first_text_counted_and_once(monkeypatch):
    from ltm_harness import _tokens

    loads: list[str] = []
    real = _tokens.get_encoding

    def counted(name: str = _tokens.DEFAULT_ENCODING):
        loads.append(name)
        return real(name)

    monkeypatch.setattr(_tokens, "get_encoding", counted)
    tokenizer = _tokens.Tokenizer("o200k_base")
    assert loads == [] and tokenizer.count("") == 0 and loads == []  # made, nothing counted: nothing loaded
    assert tokenizer.count("hello there") == 2 and tokenizer.count("again") == 1
    assert loads == ["o200k_base"]
