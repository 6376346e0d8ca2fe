import random
import re

import pytest

from ltm_harness._engine.filler import FillerGenerator
from ltm_harness._tokens import get_tokenizer

tok = get_tokenizer()


@pytest.mark.parametrize("encoding", ["cl100k_base", "o200k_base"])
def test_counted_parts_equal_a_full_count(encoding):
    t = get_tokenizer(encoding)
    filler = FillerGenerator(t, seed=3)
    rng = random.Random(1)
    for _ in range(300):
        message = filler.make(rng.randint(1, 5000))
        assert message.tokens == t.count(message.text)


def test_size_is_what_was_asked_within_bounds():
    filler = FillerGenerator(tok, seed=0, max_tokens=4096)
    for target in range(filler.min_tokens, 3000, 13):
        assert abs(filler.make(target).tokens - target) <= 1
    assert filler.make(10**6).tokens <= 4096
    assert filler.make(0).tokens == filler.min_tokens


def test_same_seed_same_filler_other_seed_other_filler():
    a = [FillerGenerator(tok, seed=5).make(500).text for _ in range(1)]
    b = [FillerGenerator(tok, seed=5).make(500).text for _ in range(1)]
    c = [FillerGenerator(tok, seed=6).make(500).text for _ in range(1)]
    assert a == b != c


def test_filler_is_neutral():
    """Filler has only arithmetic: no capitalised words beyond the fixed phrasing, no colours, names or places."""
    filler = FillerGenerator(tok, seed=11)
    text = " ".join(filler.make(size).text for size in [4000] * 20 + list(range(17, 120)))
    words = set(re.findall(r"[A-Za-z]+", text))
    allowed = set(
        "Arithmetic practice Read the worked examples then answer the last question as JSON like Please Answer this one to "
        "Q A What is plus minus times divided by remainder when a prime number squared How many sides has polygon If doubled result was what do you get add product sum counting each once "
        "whose interior angles add up degrees percent of greatest common divisor and sum digits yes no Is".split()
    )
    assert words <= allowed, words - allowed


def test_expected_reply_answers_the_last_question():
    filler = FillerGenerator(tok, seed=2)
    for _ in range(50):
        m = filler.make(300)
        last = m.text.rsplit("\n", 1)[1]
        q = re.match(r"Q: What is (\d+) plus (\d+)\?$", last)
        if q:
            assert m.expected_reply == f'{{"answer": "{int(q[1]) + int(q[2])}"}}'
