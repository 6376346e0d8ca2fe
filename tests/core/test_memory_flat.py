"""Memory flat in the number of conversations (issue 35): a benchmark's conversation of its own (a BEAM chat can be
10M tokens) is read from its definition once, when its session starts, and nothing of it is held once the session
ended: not the test (which the results builder held until the run's end; and which a cycle between a running test and
its context kept until the garbage collector next looked at old objects), nor its lines' text (which each finished
session kept in its table of line counts), nor read again for the results or the headline."""

from __future__ import annotations

import gc
import tracemalloc
from datetime import datetime, timezone
import weakref
from pathlib import Path

import pytest
import zstandard

from ltm_harness._authoring import definitions
from ltm_harness._authoring.dataset import DatasetInterface
from ltm_harness._authoring.example import LineTokens, TestExample, Wait
from ltm_harness._errors import DefinitionError
from ltm_harness._runner import run
from ltm_harness.testing import make_config, run_config

DATA = Path(__file__).resolve().parents[1] / "data" / "locomo" / "synthetic.json"


async def test_each_conversation_is_read_once_and_none_is_held_after_its_session(tmp_path, monkeypatch):
    reads: list[tuple[str, weakref.ref]] = []
    real_read = definitions.read_definition

    def read(folder, uid):
        example = real_read(folder, uid)
        reads.append((uid, weakref.ref(example)))
        return example

    at_the_end: list[object] = []
    real_summarize = run.summarize_sessions

    def summarize(spec, results, sessions, *args, **kwargs):
        at_the_end.append(sorted(uid for uid, ref in reads if ref() is not None))
        at_the_end.append(sum(len(s._shapes) for s in sessions))
        return real_summarize(spec, results, sessions, *args, **kwargs)

    monkeypatch.setattr(definitions, "read_definition", read)
    monkeypatch.setattr(run, "summarize_sessions", summarize)
    cfg = make_config([{"name": "locomo", "args": {"data_file": str(DATA)}}], span=4000, examples=2,
                      isolated_concurrency=1)
    gc.disable()  # freed as soon as its session lets it go, not by the collector (which may run late, or rarely)
    try:
        summary = await run_config(cfg, tmp_path, ["null"])
    finally:
        gc.enable()
    # once each for its session; the first once more for LoCoMo's own summary (the data file's quirks it carries)
    assert sorted(uid for uid, _ in reads) == ["locomo/synthetic-1", "locomo/synthetic-1", "locomo/synthetic-2"]
    assert at_the_end == [[], 0]  # no test, and no table of its lines, outlives its session
    headline = summary.agents[0].datasets[0]
    assert headline.tests == 11  # the results and the headline's counts came from the sessions, read once


class Chats(DatasetInterface):
    """Conversations of their own, each a long script (as a benchmark's chats): made one at a time."""

    name = "chats_memory"
    description = "long conversations of their own (tests)"
    conversation_per_example = True
    made: list[weakref.ref] = []  # the tests this dataset made
    saved: list[weakref.ref] = []  # the tests generation saved (read back from their JSON)

    def generate_examples(self, num_examples: int):  # type: ignore[override]
        for i in range(num_examples):
            gc.collect()
            alive = [k for k, ref in enumerate(self.made + self.saved) if ref() is not None]
            assert not alive, f"while test {i} is made, earlier tests are still held: {alive}"
            yield self._made(i)  # (not kept in this frame while generation saves it)

    def _made(self, i: int) -> TestExample:
        example = self.make_example(f"chat-{i}", [f"line {n} of chat {i}: " + "words " * 40 for n in range(300)]
                                    + ["What was said?"], [False] * 300 + [True], ["words"])
        self.made.append(weakref.ref(example))
        return example


def test_a_generated_conversation_is_held_once_and_let_go_before_the_next_is_made(tmp_path, monkeypatch):
    real_write = definitions.write_definition

    def write(folder, example, data=None):
        gc.collect()
        assert Chats.made[-1]() is None, "the dataset's own test is still held beside its copy read back from JSON"
        Chats.saved.append(weakref.ref(example))
        real_write(folder, example, data)

    monkeypatch.setattr(definitions, "write_definition", write)
    Chats.made, Chats.saved = [], []
    examples, reused = definitions.load_or_generate(tmp_path / "definitions", [(Chats(4000, 0), 3)])
    assert not reused and len(Chats.saved) == 3 and len(examples["chats_memory"]) == 3
    assert examples["chats_memory"][2].script[0].startswith("line 0 of chat 2")  # read back from its file


def test_a_big_definition_is_parsed_as_a_stream_never_held_whole_beside_its_test(tmp_path):
    folder = tmp_path / "definitions"
    example = TestExample(dataset_name="big", example_id="one", script=[f"{n}: " + "y" * 4000 for n in range(2000)]
                          + ["What?"], is_question=[False] * 2000 + [True], expected_responses=["y"])
    definitions.write_definition(folder, example)
    size = len(zstandard.ZstdDecompressor().decompress((folder / "big" / "one.def.json.zst").read_bytes()))
    del example
    gc.collect()
    tracemalloc.start()
    try:
        read = definitions.read_definition(folder, "big/one")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(read.script) == 2001
    # the test made from it (its strings, 1.25x the JSON's size here) and a chunk of the stream, nothing more: not its
    # JSON whole beside it (2.1x), nor its text as a str too, nor a buffer sized for the largest file allowed
    assert peak < 1.6 * size, f"reading a definition of {size:,} bytes of JSON peaked at {peak:,} bytes"


def test_a_compressed_definition_without_its_size_in_the_frame_is_read_and_bounded(tmp_path, monkeypatch):
    folder = tmp_path / "definitions"
    example = TestExample(dataset_name="big", example_id="one", script=["Remember: " + "z " * 200_000, "What?"],
                          is_question=[False, True], expected_responses=["z"])
    definitions.write_definition(folder, example)
    packed = folder / "big" / "one.def.json.zst"
    data = zstandard.ZstdDecompressor().decompress(packed.read_bytes())
    packed.write_bytes(zstandard.ZstdCompressor(write_content_size=False).compress(data))  # not as this harness writes
    assert definitions.read_definition(folder, "big/one") == example
    monkeypatch.setattr(definitions, "MAX_FILE_BYTES", 1000)
    with pytest.raises(DefinitionError, match=r"one\.def\.json\.zst: decompresses to more than 1,000 bytes"):
        definitions.read_definition(folder, "big/one")
    packed.write_bytes(zstandard.ZstdCompressor().compress(data))  # its size stated: refused before it is made
    with pytest.raises(DefinitionError, match=r"one\.def\.json\.zst: decompresses to more than 1,000 bytes"):
        definitions.read_definition(folder, "big/one")


def test_a_compressed_definition_that_is_not_utf8_is_one_line(tmp_path):
    packed = tmp_path / "definitions" / "big" / "one.def.json.zst"
    packed.parent.mkdir(parents=True)
    packed.write_bytes(zstandard.ZstdCompressor().compress(b'{"dataset_name": "big\xff"}'))
    with pytest.raises(DefinitionError, match=r"one\.def\.json\.zst: not a UTF-8 text file; fix the definition"):
        definitions.read_definition(tmp_path / "definitions", "big/one")


def test_a_compressed_definition_read_as_a_stream_is_the_test_its_json_says(tmp_path, monkeypatch):
    """Parsed from a stream of values (not by pydantic from the JSON text), a definition is the same test: dates,
    numbers, nested extras, roles and token counts alike; bad JSON, nesting past the bound or something after the
    object is one line."""
    folder = tmp_path / "definitions"
    example = TestExample(dataset_name="big", example_id="one", script=["Ünïcode \"quoted\"\n" + "w " * 150_000, "Q?"],
                          is_question=[False, True], expected_responses=["w"], observe=[True, False],
                          roles=["Caroline", "user"], waits=[Wait(tokens=3, time=1.5, until=datetime(2024, 3, 15,
                                                                                                  tzinfo=timezone.utc)), Wait()],
                          extra={"n": 1, "x": 0.1, "nested": {"a": [1, 2.5, None, True, "é"]}},
                          line_tokens=LineTokens(encoding="cl100k_base", counts=[150_005, 2]))
    definitions.write_definition(folder, example)
    packed = folder / "big" / "one.def.json.zst"
    data = zstandard.ZstdDecompressor().decompress(packed.read_bytes())
    whole = TestExample.model_validate_json(data)

    def not_whole(*args, **kwargs):
        raise AssertionError("parsed whole")

    with monkeypatch.context() as m:
        m.setattr(TestExample, "model_validate_json", not_whole)
        read = definitions.read_definition(folder, "big/one")
    assert read == example == whole
    assert read.model_dump_json(indent=2).encode() + b"\n" == data  # written again byte for byte
    huge = example.model_copy(update={"extra": {"big": 10**30}})  # past the stream parser's 64 bits: parsed whole
    definitions.write_definition(folder, huge)
    assert definitions.read_definition(folder, "big/one") == huge
    for bad, said in [(b'{"dataset_name": "big", ', "Invalid JSON"), (b'{"a": 1} [', "Invalid JSON"),
                      (b"[1]", r"\(top level\): Input should be an object"),
                      (b'{"a": ' + b"[" * 300 + b"]" * 300 + b"}", "recursion limit exceeded"),
                      (b'{"dataset_name": 3}', "dataset_name: Input should be a valid string")]:
        packed.write_bytes(zstandard.ZstdCompressor().compress(bad))
        with pytest.raises(DefinitionError, match=said):
            definitions.read_definition(folder, "big/one")


def test_whether_a_definition_is_compressed_is_decided_by_its_characters_as_before(tmp_path):
    """Made as bytes now, a definition is still compressed only past COMPRESS_ABOVE characters of JSON: one of fewer
    characters but more bytes (non-ASCII text) stays plain, as when it was made as a str."""
    folder = tmp_path / "definitions"
    text = "é" * (definitions.COMPRESS_ABOVE // 2)  # 2 bytes a character
    for name, line in [("plain", text), ("packed", text * 3)]:
        example = TestExample(dataset_name="d", example_id=name, script=[line, "Q?"], is_question=[False, True],
                              expected_responses=["é"])
        definitions.write_definition(folder, example)
        assert definitions.read_definition(folder, f"d/{name}") == example
    assert (folder / "d" / "plain.def.json").is_file() and (folder / "d" / "packed.def.json.zst").is_file()
    assert len((folder / "d" / "plain.def.json").read_bytes()) > definitions.COMPRESS_ABOVE
