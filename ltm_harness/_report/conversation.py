"""A session's event log as a report needs it: each test's own lines, with what came between collapsed.

Only the text of test lines is kept; filler is counted, not stored (a 500k-token session is mostly
filler), except for one sample message per session. Lines are read as plain JSON so that event types
this version does not know (such as `llm_call`) and unknown fields are skipped or picked up, never fatal.
"""

from __future__ import annotations

import json
import statistics
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ltm_harness._guard.files import check_regular
from ltm_harness._guard import jsonsafe
from ltm_harness._results.models import TestResult
from ltm_harness._store.eventlog import read_failed_tries, read_wall_facts
from ltm_harness._store.events import NOTE
from ltm_harness._store.formats import FAILED_TRIES_ASIDE

MAX_OTHERS = 12  # other tests' lines listed in one collapsed stretch; the rest are counted


@dataclass(slots=True)
class Turn:
    i: int
    pos: int
    kind: str
    test: str | None
    question: bool
    time: str
    user: str  # empty for filler (not kept)
    reply: str
    user_tokens: int
    reply_tokens: int
    role: str = ""  # who said it, when not the user (a benchmark's speaker)
    observed: bool = False  # history the agent only took in (a benchmark's history)
    went_back: bool | None = None  # an independent question: whether the agent went back to its state before it


@dataclass
class CallStats:
    """Sums of the `llm_call` events of one role."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    retries: int = 0
    cached: int = 0
    latencies_ms: list[float] = field(default_factory=list)
    models: set[str] = field(default_factory=set)

    def add(self, event: dict[str, Any]) -> None:
        self.calls += 1
        self.prompt_tokens += _int(event.get("prompt_tokens"))
        self.completion_tokens += _int(event.get("completion_tokens"))
        cost = event.get("cost_usd", event.get("cost"))
        if isinstance(cost, (int, float)) and not event.get("cached"):  # a cache hit costs nothing
            self.cost_usd += float(cost)
        self.retries += _int(event.get("retries"))
        self.cached += bool(event.get("cached"))
        latency = event.get("latency_ms")
        if isinstance(latency, (int, float)):
            self.latencies_ms.append(float(latency))
        if isinstance(event.get("model"), str):
            self.models.add(event["model"])

    def add_totals(self, **totals: Any) -> None:
        """Add sums given by name (prompt_tokens, completion_tokens, cost_usd, retries, cached); others ignored."""
        for name in ("prompt_tokens", "completion_tokens", "retries", "cached"):
            setattr(self, name, getattr(self, name) + _int(totals.get(name)))
        cost = totals.get("cost_usd")
        if isinstance(cost, (int, float)):
            self.cost_usd += float(cost)

    def merge(self, other: "CallStats") -> None:
        self.calls += other.calls
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.cost_usd += other.cost_usd
        self.retries += other.retries
        self.cached += other.cached
        self.latencies_ms.extend(other.latencies_ms)
        self.models |= other.models

    @property
    def mean_latency_ms(self) -> float | None:
        return statistics.fmean(self.latencies_ms) if self.latencies_ms else None

    @property
    def p95_latency_ms(self) -> float | None:
        if not self.latencies_ms:
            return None
        ordered = sorted(self.latencies_ms)
        return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


def _what(turn: Turn) -> str:
    """A turn that is neither filler nor the test's own: `kv/1` (its line), `reset kv/1`, `intro`."""
    if turn.kind == "test" and turn.test:
        return turn.test
    return f"{turn.kind} {turn.test}" if turn.test else turn.kind


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


@dataclass
class SessionLog:
    path: Path
    turns: list[Turn] = field(default_factory=list)
    test_end_turn: dict[str, int] = field(default_factory=dict)
    calls: dict[str, CallStats] = field(default_factory=dict)  # role -> sums
    filler_sample: str | None = None
    filler_turns: int = 0
    filler_tokens: int = 0
    failed_tries: int = 0  # tries of turns that got no reply (asked again, or the turn failed)
    jumps: set[int] = field(default_factory=set)  # turn numbers the clock jumped to a new date before (sessions)
    _own: dict[str, list[int]] = field(default_factory=dict)  # test -> indexes into turns
    _marked: list[int] = field(default_factory=list)  # indexes of turns that are not filler
    _filler_before: list[int] = field(default_factory=list)  # filler turns before index k
    _numbers: list[int] = field(default_factory=list)  # turn numbers (Turn.i), ascending

    def tests(self) -> list[str]:
        return list(self._own)

    def own(self, test: str) -> list[Turn]:
        """The test's own turns (its lines, history included), in order."""
        return [self.turns[k] for k in self._own.get(test, [])]

    def asked_after(self, turn: Turn) -> Turn | None:
        """The last turn the agent still held when `turn` was said: independent questions it went back from are
        skipped (their state was undone), so for such a question this is the end of the history."""
        k = bisect_left(self._numbers, turn.i) - 1
        while k >= 0 and self.turns[k].went_back:
            k -= 1
        return self.turns[k] if k >= 0 else None

    def conversation(self, test: str, result: TestResult | None) -> list[dict[str, Any]]:
        """The test's own lines in order, each stretch of other turns between them collapsed into counts."""
        own = self._own.get(test)
        if not own:
            return []
        roles = self._roles(own, result)
        items: list[dict[str, Any]] = []
        for n, k in enumerate(own):
            if n:
                self._stretch(items, own[n - 1], k, own)
            t = self.turns[k]
            role, gap = roles[n]
            items.append({"t": "line", "turn": t.i, "time": t.time, "pos": t.pos, "role": role, "user": t.user,
                          "reply": t.reply, "ut": t.user_tokens, "rt": t.reply_tokens, "gap": gap})
        end = self.test_end_turn.get(test)
        if end is not None:
            last = bisect_left(self._numbers, end, lo=own[-1])  # first turn at or after the end
            if last > own[-1] + 1:
                self._stretch(items, own[-1], last, own, after=True)
        return items

    def _stretch(self, items: list[dict[str, Any]], a: int, b: int, own: list[int], after: bool = False) -> None:
        """Turns strictly between indexes a and b of `turns`, as one collapsed item."""
        if b - a <= 1:
            return
        turns = b - a - 1
        end_pos = self.turns[b].pos if b < len(self.turns) else self.turns[-1].pos + self.turns[-1].user_tokens + self.turns[-1].reply_tokens
        tokens = end_pos - self.turns[a + 1].pos
        filler = self._filler_before[b] - self._filler_before[a + 1]
        lo, hi = bisect_right(self._marked, a), bisect_left(self._marked, b)
        own_set = set(own)
        others = [[self.turns[k].i, _what(self.turns[k])] for k in self._marked[lo:hi] if k not in own_set]
        items.append({"t": "gap", "turns": turns, "tokens": tokens, "filler": filler, "after": after,
                      "others": others[:MAX_OTHERS], "more": max(0, len(others) - MAX_OTHERS)})

    def _roles(self, own: list[int], result: TestResult | None) -> list[tuple[str, dict[str, Any] | None]]:
        """Each own line's role, and the gap measured at each question. The answer statement is the line
        whose text holds the point the gap was measured from (question position - achieved gap)."""
        out: list[tuple[str, dict[str, Any] | None]] = []
        said = [k for k in own if self.turns[k].kind == "test"]  # GapMeasure.line indexes these
        for k in own:
            t = self.turns[k]
            role = "reset" if t.kind == "reset" else "question" if t.question else "statement"
            out.append((role, None))
        if result is None:
            return out
        where = {k: n for n, k in enumerate(own)}
        for g in result.gaps:
            if g.line >= len(said):
                continue
            q = said[g.line]
            role, _ = out[where[q]]
            out[where[q]] = (role, {"target": g.target_tokens, "achieved": g.achieved_tokens})
            point = self.turns[q].pos - g.achieved_tokens
            for k in reversed(said[:g.line]):
                t = self.turns[k]
                if t.pos <= point <= t.pos + t.user_tokens:
                    if not t.question:
                        out[where[k]] = ("answer", out[where[k]][1])
                    break
        return out


def read_session_log(path: Path) -> tuple[SessionLog, list[str]]:
    """Read one event log; problems (unreadable lines, a truncated last line) are returned, not raised."""
    log = SessionLog(path)
    problems: list[str] = []
    try:
        check_regular(path)  # a FIFO would block the report forever
        f = path.open(encoding="utf-8", errors="replace")  # bytes that are not UTF-8 make a line unreadable, below
    except OSError as exc:
        return log, [f"cannot read {path}: {exc.strerror or exc}"]
    bad = 0
    facts = read_wall_facts(path)
    log.failed_tries = sum(len(tries) for tries in read_failed_tries(path).values())
    tries_in_turns = False  # a log before format 5: each failed try's error is in its turn's `errors`
    with f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                event = jsonsafe.loads(line)
            except ValueError:
                bad += 1
                if bad == 1:
                    problems.append(f"{path}: line {n} is not valid JSON (a run killed while writing?); skipped")
                continue
            if isinstance(event, dict):
                if event.get("type") == "llm_call" and n in facts:  # latency, retries, cache: from the side file
                    event.update(facts[n].model_dump(exclude={"line", "role"}))
                elif event.get("type") == "session_start":
                    tries_in_turns = _int(event.get("format")) < FAILED_TRIES_ASIDE
                elif event.get("type") == "turn" and tries_in_turns and isinstance(event.get("errors"), list):
                    log.failed_tries += sum(isinstance(e, str) and not e.startswith(NOTE) for e in event["errors"])
                _take(log, event)
    if bad > 1:
        problems.append(f"{path}: {bad} lines in all could not be read")
    filler = 0
    log._numbers = [t.i for t in log.turns]
    for k, t in enumerate(log.turns):
        log._filler_before.append(filler)
        if t.kind == "filler":
            filler += 1
        else:
            log._marked.append(k)
            if t.test is not None:
                log._own.setdefault(t.test, []).append(k)
    log._filler_before.append(filler)
    return log, problems


def _str(value: Any) -> str:
    return value if isinstance(value, str) else "" if value is None else str(value)


def _take(log: SessionLog, event: dict[str, Any]) -> None:
    kind = event.get("type")
    if kind == "turn":
        turn_kind: Literal["intro", "filler", "test", "reset"] | str = _str(event.get("kind"))
        is_filler = turn_kind == "filler"
        user, reply = _str(event.get("user")), _str(event.get("reply"))
        ut, rt = _int(event.get("user_tokens")), _int(event.get("reply_tokens"))
        if is_filler:
            log.filler_turns += 1
            log.filler_tokens += ut + rt
            if log.filler_sample is None:
                log.filler_sample = user
            user = reply = ""
        test = event.get("test")
        log.turns.append(Turn(_int(event.get("i")), _int(event.get("pos")), turn_kind,
                              test if isinstance(test, str) else None, bool(event.get("question")),
                              _str(event.get("time")), user, reply, ut, rt, _str(event.get("role")),
                              event.get("observed") is True,
                              went_back if isinstance(went_back := event.get("went_back"), bool) else None))
    elif kind == "clock_jump":
        log.jumps.add(_int(event.get("turn")))
    elif kind == "test_end" and isinstance(event.get("test"), str):
        log.test_end_turn[event["test"]] = _int(event.get("turn"))
    elif kind == "llm_call":
        role = _str(event.get("role")) or "unknown"
        log.calls.setdefault(role, CallStats()).add(event)
