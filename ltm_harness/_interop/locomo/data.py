"""LoCoMo's data file (snap-research/locomo, `data/locomo10.json`) read into typed models, its quirks counted.

The file is a list of samples, each `{sample_id, conversation, qa, event_summary, observation, session_summary}`.
`conversation` holds `speaker_a`, `speaker_b`, and for each N `session_N` (a list of turns `{speaker, dia_id, text}`,
some with a photo: `img_url`, `blip_caption`, `query`) and `session_N_date_time` ("1:56 pm on 8 May, 2023"). A
question is `{question, answer, evidence, category}`; category 5 (adversarial) has `adversarial_answer` instead of
`answer`. Only what a memory test needs is kept (summaries, observations and events are not read).

What does not fit LoCoMo's shape is one `DefinitionError` line naming the file and the first bad field. Known
slips of the published file are mended or left out, and counted in `LocomoQuirks`: answers written as numbers,
malformed evidence ids ("D:11:26", "D8:6; D9:17", "D9:1 D4:4"), evidence naming no turn, sessions that have a date
but no turns, captions of photos whose URL is gone.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, NoReturn

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, StrictFloat, StrictInt, StrictStr, ValidationError

from ltm_harness._errors import DefinitionError

MULTI_HOP, TEMPORAL, OPEN_DOMAIN, SINGLE_HOP, ADVERSARIAL = 1, 2, 3, 4, 5  # as the reference's evaluation code has them
CATEGORY_NAMES: dict[int, str] = {MULTI_HOP: "multi-hop", TEMPORAL: "temporal", OPEN_DOMAIN: "open-domain",
                                  SINGLE_HOP: "single-hop", ADVERSARIAL: "adversarial"}
EXAMPLES_PER_KIND = 3  # quirk examples kept for the report
NOT_LOCOMO = ("this is not the LoCoMo file (data/locomo10.json of snap-research/locomo: a list of samples, each with "
              "sample_id, conversation and qa)")


class LocomoTurn(BaseModel):
    """One line of the conversation; a photo is known by its caption (`blip_caption`, what the photo shows) and
    the words it was searched for (`query`)."""

    model_config = ConfigDict(frozen=True)

    dia_id: str  # "D3:7": session 3, turn 7
    speaker: str
    text: str
    img_url: str | None = None
    blip_caption: str | None = None
    query: str | None = None


class LocomoSession(BaseModel):
    index: int  # N of `session_N`, from 1
    date_time: datetime | None  # None: the file gives no date, or one this reader cannot read (see date_text)
    date_text: str  # as the file writes it ("1:56 pm on 8 May, 2023"), "" when missing
    turns: list[LocomoTurn]


class LocomoQuestion(BaseModel):
    index: int  # its place in the sample's `qa` list, from 0
    question: str
    answer: str | None  # always text (the file writes a few as numbers); None for most adversarial questions
    adversarial_answer: str | None  # category 5: the tempting wrong answer
    evidence: list[str]  # the turns ("D3:7") that hold the answer, every one a turn of the sample
    category: int = Field(ge=1, le=5)  # see CATEGORY_NAMES

    @property
    def category_name(self) -> str:
        return CATEGORY_NAMES[self.category]


class LocomoSample(BaseModel):
    sample_id: str
    speaker_a: str
    speaker_b: str
    sessions: list[LocomoSession]  # in session order, those with no turns included
    questions: list[LocomoQuestion]
    _by_id: dict[str, LocomoTurn] = PrivateAttr(default_factory=dict)

    def model_post_init(self, context: Any) -> None:
        self._by_id = {t.dia_id: t for t in self.turns()}

    def turn(self, dia_id: str) -> LocomoTurn | None:
        return self._by_id.get(dia_id)

    def turns(self) -> list[LocomoTurn]:
        """Every turn, in the order they were said."""
        return [t for s in self.sessions for t in s.turns]


class LocomoQuirks(BaseModel):
    """How often each known slip of the file was met (and mended or left out), with a few examples."""

    int_answers: int = 0  # an answer written as a number, read as text
    evidence_fixed: int = 0  # an evidence entry rewritten to turn ids ("D:11:26" -> "D11:26", "D8:6; D9:17" -> two)
    evidence_dropped: int = 0  # an evidence id still malformed, or naming no turn of the sample: left out
    questions_without_evidence: int = 0  # no evidence left (or none given)
    questions_without_answer: int = 0  # categories 1-4 with no answer: left out, they cannot be scored
    sessions_without_turns: int = 0  # a `session_N_date_time` with no turns: kept, with no turns
    sessions_without_date: int = 0  # turns with no `session_N_date_time`
    dates_unread: int = 0  # a session date in a form this reader does not know: date_time None
    captions_without_url: int = 0  # a photo's caption whose `img_url` is missing (the caption is still said)
    adversarial_without_answer: int = 0  # category 5 with no `answer`: normal, not a slip
    examples: list[str] = Field(default_factory=list)  # the first few of each kind

    def note(self, kind: str, example: str | None = None) -> None:
        count = getattr(self, kind) + 1
        setattr(self, kind, count)
        if example is not None and count <= EXAMPLES_PER_KIND:
            self.examples.append(example)

    def summary(self) -> str:
        """The counts that are not zero, in one line ("6 int answers, 16 sessions without turns, ...")."""
        counts = self.model_dump(exclude={"examples"})
        return ", ".join(f"{n} {kind.replace('_', ' ')}" for kind, n in counts.items() if n) or "none"


class LocomoData(BaseModel):
    samples: list[LocomoSample]
    quirks: LocomoQuirks


# -- the file's own shapes (unknown keys such as "re-download" are ignored) ---------------------------------------
class _RawTurn(BaseModel):
    dia_id: StrictStr
    speaker: StrictStr
    text: StrictStr
    img_url: StrictStr | list[StrictStr] | None = None  # the published file gives a list of one URL
    blip_caption: StrictStr | None = None
    query: StrictStr | None = None


class _RawQuestion(BaseModel):
    question: StrictStr
    answer: StrictStr | StrictInt | StrictFloat | None = None
    adversarial_answer: StrictStr | StrictInt | StrictFloat | None = None
    evidence: list[StrictStr] = Field(default_factory=list)
    category: StrictInt = Field(ge=1, le=5)


_SESSION = re.compile(r"session_(\d+)")
_SESSION_DATE = re.compile(r"session_(\d+)_date_time")
_DATE = re.compile(r"\s*(\d{1,2}):(\d{2})\s*([ap])\.?m\.?\s+on\s+(\d{1,2})\s+([a-z]+)\.?,?\s+(\d{4})\s*", re.I)
_MONTHS = {m: i for i, m in enumerate(("january", "february", "march", "april", "may", "june", "july", "august",
                                          "september", "october", "november", "december"), start=1)}
_EVIDENCE_ID = re.compile(r"D:?(\d+):(\d+)")
_EVIDENCE_SEP = re.compile(r"[;,\s]+")


def parse_date(text: str) -> datetime | None:
    """A session date as the file writes it ("1:56 pm on 8 May, 2023"), or None. Read without the locale."""
    m = _DATE.fullmatch(text)
    if m is None:
        return None
    hour, minute, half, day, month_name, year = m.groups()
    month = _MONTHS.get(month_name.lower()) or next(
        (n for name, n in _MONTHS.items() if len(month_name) >= 3 and name.startswith(month_name.lower())), None)
    if month is None or not 1 <= int(hour) <= 12:
        return None
    try:
        return datetime(int(year), month, int(day), int(hour) % 12 + (12 if half.lower() == "p" else 0), int(minute))
    except ValueError:
        return None


def parse_locomo(raw: Any, source: str) -> LocomoData:
    """The samples of a LoCoMo file (`raw` its parsed JSON, `source` its name in messages), quirks counted.
    Anything not LoCoMo-shaped is a DefinitionError naming `source` and the first bad field."""
    if not isinstance(raw, list):
        _fail(source, "", f"the file holds {_kind(raw)}, not a list of samples")
    if not raw:
        _fail(source, "", "the file holds no samples")
    quirks = LocomoQuirks()
    samples = [_sample(item, f"[{i}]", source, quirks) for i, item in enumerate(raw)]
    seen: set[str] = set()
    for i, sample in enumerate(samples):
        if sample.sample_id in seen:
            _fail(source, f"[{i}].sample_id", f"{sample.sample_id!r} is given to two samples")
        seen.add(sample.sample_id)
    return LocomoData(samples=samples, quirks=quirks)


def _sample(item: Any, where: str, source: str, quirks: LocomoQuirks) -> LocomoSample:
    if not isinstance(item, dict):
        _fail(source, where, f"a sample must be an object, not {_kind(item)}")
    sample_id = _field(item, "sample_id", str, where, source)
    conversation = _field(item, "conversation", dict, where, source)
    qa = _field(item, "qa", list, where, source)
    at = f"{where}.conversation"
    speakers = [_field(conversation, key, str, at, source) for key in ("speaker_a", "speaker_b")]
    sessions = _sessions(conversation, at, source, sample_id, quirks)
    if not any(s.turns for s in sessions):
        _fail(source, at, "has no session_N list of turns")
    turn_ids = {t.dia_id for s in sessions for t in s.turns}
    questions = [q for i, entry in enumerate(qa)
                 if (q := _question(entry, i, f"{where}.qa[{i}]", source, sample_id, turn_ids, quirks)) is not None]
    return LocomoSample(sample_id=sample_id, speaker_a=speakers[0], speaker_b=speakers[1], sessions=sessions,
                        questions=questions)


def _sessions(conversation: dict[str, Any], where: str, source: str, sample_id: str,
              quirks: LocomoQuirks) -> list[LocomoSession]:
    turn_lists: dict[int, Any] = {}
    dates: dict[int, Any] = {}
    for key, value in conversation.items():
        if m := _SESSION.fullmatch(key):
            turn_lists[int(m.group(1))] = value
        elif m := _SESSION_DATE.fullmatch(key):
            dates[int(m.group(1))] = value
    sessions = []
    for n in sorted(turn_lists.keys() | dates.keys()):
        key = f"session_{n}"
        date_text = dates.get(n, "")
        if not isinstance(date_text, str):
            _fail(source, f"{where}.{key}_date_time", f"must be text, not {_kind(date_text)}")
        turns_raw = turn_lists.get(n, [])
        if not isinstance(turns_raw, list):
            _fail(source, f"{where}.{key}", f"must be a list of turns, not {_kind(turns_raw)}")
        turns = [_turn(t, f"{where}.{key}[{i}]", source, quirks) for i, t in enumerate(turns_raw)]
        date_time = parse_date(date_text) if date_text else None
        if not turns:
            quirks.note("sessions_without_turns", f"{sample_id} {key}: a date ({date_text or 'none'}) and no turns")
        if n not in dates:
            quirks.note("sessions_without_date", f"{sample_id} {key}: turns and no date")
        elif date_time is None:
            quirks.note("dates_unread", f"{sample_id} {key}: date {date_text!r} not understood")
        sessions.append(LocomoSession(index=n, date_time=date_time, date_text=date_text, turns=turns))
    return sessions


def _turn(item: Any, where: str, source: str, quirks: LocomoQuirks) -> LocomoTurn:
    raw = _validate(_RawTurn, item, where, source)
    urls = raw.img_url if isinstance(raw.img_url, list) else [raw.img_url]
    url = next((u for u in urls if u), None)
    if raw.blip_caption and url is None:
        quirks.note("captions_without_url")
    return LocomoTurn(dia_id=raw.dia_id, speaker=raw.speaker, text=raw.text, img_url=url,
                      blip_caption=raw.blip_caption, query=raw.query)


def _question(item: Any, index: int, where: str, source: str, sample_id: str, turn_ids: set[str],
              quirks: LocomoQuirks) -> LocomoQuestion | None:
    raw = _validate(_RawQuestion, item, where, source)
    name = f"{sample_id} qa[{index}]"
    answer, adversarial = (_answer_text(value, name, quirks) for value in (raw.answer, raw.adversarial_answer))
    if answer is None:
        if raw.category != ADVERSARIAL:
            quirks.note("questions_without_answer", f"{name}: category {raw.category} with no answer, left out")
            return None
        quirks.note("adversarial_without_answer")
    evidence = _evidence(raw.evidence, name, turn_ids, quirks)
    if not evidence:
        quirks.note("questions_without_evidence", f"{name}: no evidence")
    return LocomoQuestion(index=index, question=raw.question, answer=answer, adversarial_answer=adversarial,
                          evidence=evidence, category=raw.category)


def _answer_text(value: str | int | float | None, name: str, quirks: LocomoQuirks) -> str | None:
    if value is None or isinstance(value, str):
        return value
    quirks.note("int_answers", f"{name}: answer {value!r} written as a number")
    return str(value)


def _evidence(entries: list[str], name: str, turn_ids: set[str], quirks: LocomoQuirks) -> list[str]:
    """The evidence as turn ids ("D<session>:<turn>"): slips mended where the intent is clear (a stray colon,
    leading zeros, several ids in one entry), the rest left out; each id once."""
    out: list[str] = []
    for entry in entries:
        ids = []
        for piece in filter(None, _EVIDENCE_SEP.split(entry)):
            m = _EVIDENCE_ID.fullmatch(piece)
            if m is None:
                quirks.note("evidence_dropped", f"{name}: evidence {piece!r} is not a turn id")
                continue
            dia_id = f"D{int(m.group(1))}:{int(m.group(2))}"
            if dia_id not in turn_ids:
                quirks.note("evidence_dropped", f"{name}: evidence {piece!r} names no turn of the conversation")
                continue
            ids.append(dia_id)
        if ids and ids != [entry]:
            quirks.note("evidence_fixed", f"{name}: evidence {entry!r} read as {', '.join(ids)}")
        out += [i for i in ids if i not in out]
    return out


def _validate(model: type[_RawTurn] | type[_RawQuestion], item: Any, where: str, source: str) -> Any:
    if not isinstance(item, dict):
        _fail(source, where, f"must be an object, not {_kind(item)}")
    try:
        return model.model_validate(item)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = str(err["loc"][0])
        if err["type"] == "missing":
            _fail(source, where, f"{field!r} is missing")
        index = next((f"[{p}]" for p in err["loc"][1:] if isinstance(p, int)), "")  # not a union's member names
        msg = err["msg"][0].lower() + err["msg"][1:]
        _fail(source, f"{where}.{field}{index}", f"{msg} (it is {_kind(err['input'])})")


def _field(obj: dict[str, Any], key: str, kind: type, where: str, source: str) -> Any:
    if key not in obj:
        _fail(source, where, f"{key!r} is missing")
    value = obj[key]
    if not isinstance(value, kind):
        names: dict[type, str] = {str: "text", dict: "an object", list: "a list"}
        _fail(source, f"{where}.{key}", f"must be {names[kind]}, not {_kind(value)}")
    return value


def _kind(value: Any) -> str:
    if isinstance(value, str):
        return f"the text {value!r}" if len(value) <= 30 else f"the text {value[:27]!r}..."
    if isinstance(value, (bool, int, float)):
        return f"{str(value).lower() if isinstance(value, bool) else value!r}"
    return {dict: "an object", list: "a list", type(None): "null"}.get(type(value), type(value).__name__)


def _fail(source: str, where: str, what: str) -> NoReturn:
    raise DefinitionError(f"{source}: {where + ': ' if where else ''}{what}; {NOT_LOCOMO}")


def render_turn(turn: LocomoTurn) -> str:
    """The history line the agent hears: `Caroline: I went to a support group yesterday.`; a photo as what it shows
    (its caption, never its URL): `Melanie: Look! [shares a photo of a painting of a sunset]`."""
    line = f"{turn.speaker}: {turn.text.strip()}".rstrip()
    if turn.blip_caption:
        line += f" {photo_phrase(turn.blip_caption)}"
    return line


_PHOTO_OF = re.compile(r"(?:an? )?(?:photo|photograph|photography|picture|image) of\s+", re.I)


def photo_phrase(caption: str) -> str:
    """`[shares a photo of ...]` from a caption; BLIP's "a photo of" / "a photography of" said once."""
    caption = " ".join(caption.split()).rstrip(".")
    m = _PHOTO_OF.match(caption)
    return f"[shares a photo of {caption[m.end():]}]" if m else f"[shares a photo: {caption}]"
