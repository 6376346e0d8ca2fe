"""Every file read from a path a user names goes through one check before it is opened (`_guard.files`): a FIFO
never blocks, a device is never read, a folder is named as one, with the real cause in one line. And
`--reference-prompts` is bounded in size, nesting and branch count, reads the last of two definitions as Python
does, and turns the parser's RecursionError/MemoryError into one line."""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path
from typing import Any, Callable

import pytest

from ltm_harness._authoring.definitions import _source_hash
from ltm_harness._errors import DefinitionError
from ltm_harness._guard.files import NotARegularFile, check_regular, hash_file, open_regular, problem, read_text
from ltm_harness._interop.locomo.fetch import load_locomo
from ltm_harness._interop.longmemeval.fetch import data_path
from ltm_harness._interop.longmemeval.reference_prompts import MAX_SOURCE_BYTES, load_reference_prompts
from tests.datasets.test_longmemeval_judge import SHAPED, checkout

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
DEVICE = Path("/dev/zero")
needs_device = pytest.mark.skipif(not DEVICE.exists(), reason="no /dev/zero")


def finishes(call: Callable[[], Any], seconds: float = 10.0) -> BaseException | None:
    """What `call()` raised (None if nothing), asserting it returned within `seconds` (a FIFO opened blocking would
    never return: the thread is left behind and the test fails instead of hanging)."""
    outcome: list[BaseException | None] = []

    def target() -> None:
        try:
            call()
            outcome.append(None)
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            outcome.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert outcome, f"still blocked after {seconds} s"
    return outcome[0]


@pytest.fixture
def specials(tmp_path: Path) -> dict[str, Path]:
    out = {"folder": tmp_path / "a-folder"}
    out["folder"].mkdir()
    if hasattr(os, "mkfifo"):
        out["fifo"] = tmp_path / "a-fifo"
        os.mkfifo(out["fifo"])
    if DEVICE.exists():
        out["device link"] = tmp_path / "a-link"
        out["device link"].symlink_to(DEVICE)
    return out


CAUSE = {"folder": "it is a folder, not a regular file", "fifo": "it is a FIFO (named pipe), not a regular file",
         "device link": "it is a symbolic link to a character device, not a regular file"}


def test_the_check_names_each_kind_and_never_opens(specials, tmp_path):
    for kind, path in specials.items():
        assert problem(path) == CAUSE[kind]
        error = finishes(lambda: open_regular(path))
        assert isinstance(error, NotARegularFile) and error.strerror == CAUSE[kind]
    assert problem(DEVICE) == "it is a character device, not a regular file" if DEVICE.exists() else True
    assert problem(tmp_path / "nope") == "it does not exist"
    big = tmp_path / "big"
    big.write_bytes(b"x" * 100)
    assert problem(big, 99) == "it is 100 bytes, more than the 99 read whole" and problem(big, None) is None
    with pytest.raises(NotARegularFile):
        read_text(big, 99)
    check_regular(big, 100)


def test_read_text_reads_line_ends_as_text_mode_does(tmp_path):
    path = tmp_path / "crlf.yml"
    path.write_bytes(b"a: 1\r\nb: 2\rc: 3\n")
    assert read_text(path) == path.read_text(encoding="utf-8") == "a: 1\nb: 2\nc: 3\n"


def test_hashing_streams_and_matches_the_whole(tmp_path):
    path = tmp_path / "data.json"
    path.write_bytes(os.urandom(3 * (1 << 20) + 17))
    digest = hashlib.sha256()
    hash_file(digest, path)
    assert digest.hexdigest() == hashlib.sha256(path.read_bytes()).hexdigest()


class _Dataset:
    """Only what _source_hash asks of a dataset."""

    name = "mine"

    def __init__(self, files: list[Path]) -> None:
        self.files = files

    def source_files(self) -> list[Path]:
        return self.files


def test_the_source_fingerprint_keeps_its_value_and_refuses_a_fifo(specials, tmp_path):
    data = tmp_path / "data.json"
    data.write_bytes(b"[1, 2, 3]")
    module = Path(__file__)
    expected = hashlib.sha256(module.read_bytes())
    expected.update(b"data.json\0[1, 2, 3]")
    expected.update(b"gone.json\0(missing)")
    assert _source_hash(_Dataset([data, tmp_path / "gone.json"])) == expected.hexdigest()[:16]  # type: ignore[arg-type]
    for kind, path in specials.items():
        error = finishes(lambda: _source_hash(_Dataset([path])))  # type: ignore[arg-type]
        assert isinstance(error, DefinitionError) and f"cannot be read ({CAUSE[kind]})" in str(error)


def test_a_locomo_data_file_names_the_real_cause(specials, tmp_path):
    for kind, path in specials.items():
        error = finishes(lambda: load_locomo(path, quiet=True))
        assert isinstance(error, DefinitionError)
        assert str(error).startswith(f"locomo: the data file {path} cannot be read ({CAUSE[kind]})")
        assert "missing" not in str(error) and "\n" not in str(error)


def test_a_longmemeval_data_file_names_the_real_cause(specials):
    for kind, path in specials.items():
        error = finishes(lambda: data_path("s", path))
        assert isinstance(error, DefinitionError) and f"cannot be read ({CAUSE[kind]})" in str(error)


# -- --reference-prompts ---------------------------------------------------------------------------------------------

def one_line(folder: Path) -> str:
    error = finishes(lambda: load_reference_prompts(folder), 60)
    assert isinstance(error, DefinitionError), error
    assert "\n" not in str(error)
    return str(error)


def test_reference_prompts_on_a_fifo_a_device_or_a_folder_is_one_line(specials, tmp_path):
    for kind in specials:
        script = tmp_path / kind / "src" / "evaluation" / "evaluate_qa.py"
        script.parent.mkdir(parents=True)
        {"folder": script.mkdir, "fifo": lambda: os.mkfifo(script), "device link": lambda: script.symlink_to(DEVICE)}[kind]()
        said = one_line(tmp_path / kind)
        assert said == (f"{script}: cannot be read ({CAUSE[kind]}); name a LongMemEval checkout")
        print(said)
    for kind in ("fifo", "device link"):  # named itself, not as a checkout's script
        if kind in specials:
            assert one_line(specials[kind]) == f"{specials[kind]}: cannot be read ({CAUSE[kind]}); name a LongMemEval checkout"


def test_reference_prompts_too_large_is_refused_before_reading(tmp_path):
    folder = checkout(tmp_path, SHAPED + "#" * MAX_SOURCE_BYTES)
    assert f"more than the {MAX_SOURCE_BYTES:,} read whole" in one_line(folder)


@pytest.mark.parametrize("hostile, said", [
    ("x = " + "-" * 200_000 + "1\n", "nested too deeply for Python's parser"),  # MemoryError in ast.parse
    ("x = " + "1+" * 200_000 + "1\n", "nested too deeply for Python's parser"),  # RecursionError in ast.parse
    ("x = " + "(" * 300 + "1" + ")" * 300 + "\n", "not Python this version can parse"),
])
def test_deep_expressions_are_one_line(tmp_path, hostile, said):
    assert said in one_line(checkout(tmp_path, hostile + SHAPED))


def chain(branches: int, word: str = "elif") -> str:
    """get_anscheck_prompt with an elif chain of `branches` branches (nested that deep in the syntax tree), or with
    `word="if"` as many branches one after the other."""
    arms = "".join(f"    {word} task == 't{i}':\n        template = 'T{i} {{}} {{}} {{}}'\n"
                   f"        prompt = template.format(question, answer, response)\n" for i in range(1, branches))
    return ("def get_anscheck_prompt(task, question, answer, response, abstention=False):\n"
            "    if task == 't0':\n        template = 'T0 {} {} {}'\n"
            "        prompt = template.format(question, answer, response)\n" + arms + "    return prompt\n")


@pytest.mark.parametrize("branches, word, said", [
    (3000, "elif", "nested too deeply for Python's parser"),  # beyond the parser's own limit
    (600, "elif", "if/elif branches nested more than 50 deep"),  # parses, would overflow a recursive reader
    (60, "elif", "if/elif branches nested more than 50 deep"),
    (600, "if", "has more than 200 if/elif branches"),
])
def test_long_branch_chains_are_one_line(tmp_path, branches, word, said):
    line = one_line(checkout(tmp_path, chain(branches, word)))
    assert said in line
    print(line)


def test_fifty_branches_are_read(tmp_path):
    prompts = finishes(lambda: load_reference_prompts(checkout(tmp_path, chain(50))))
    assert isinstance(prompts, DefinitionError)  # read to the end by the reader, which then finds it shaped otherwise
    assert "is not shaped as expected (line 3: a template outside the branch on the abstention flag)" in str(prompts)


def test_the_last_definition_wins_as_in_python(tmp_path):
    first = SHAPED.replace("TEMPORAL Q=", "FIRST-TEMPORAL Q=")
    twice = first + SHAPED.split("\n\nif __name__")[0].split("model_zoo")[1].split("\n", 1)[1]
    prompts = load_reference_prompts(checkout(tmp_path, twice))
    assert prompts["temporal-reasoning"].user.startswith("TEMPORAL Q=")
    flipped = load_reference_prompts(checkout(tmp_path / "b", SHAPED + first.split("model_zoo")[1].split("\n", 1)[1]
                                              .split("\n\nif __name__")[0]))
    assert flipped["temporal-reasoning"].user.startswith("FIRST-TEMPORAL Q=")
