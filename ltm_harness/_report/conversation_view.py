"""A benchmark test's view in the report: the history its questions were asked from, the evidence lines the
benchmark marks, the question, the reply, and for an independent question the point the agent went back to.

A benchmark's history (LoCoMo's conversation, a LongMemEval haystack, a BEAM chat) is long and the same for every
question of it, and often for every agent. So it is never copied into the page nor per question: each conversation's
history is written once, named by a hash of its content, as parts beside the page (lazy.py:
`<stem>.parts/<hash>.<part>.js`, PART lines each), loaded only when a reader opens the history. The page itself holds
per conversation only an outline (its sessions, with dates and line ranges), and per question the few lines it needs.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ltm_harness._authoring.definitions import read_definition
from ltm_harness._errors import LTMError
from ltm_harness._report.conversation import SessionLog, Turn
from ltm_harness._results.models import TestResult
from ltm_harness._report.lazy import LazyParts

MAX_TEXT = 4000  # characters of one message shown in the page; the rest is in the event log
PART = 1000  # history lines per file
MAX_EVIDENCE = 12  # evidence lines quoted with a question (all of them are marked in the history)
QUOTE = 240  # characters of an evidence line quoted with its question


def clip(text: str) -> str:
    if len(text) <= MAX_TEXT:
        return text
    return text[:MAX_TEXT] + f"\n… [{len(text) - MAX_TEXT:,} more characters; the full text is in the event log]"


@dataclass
class _History:
    key: str
    line_of: dict[int, int]  # turn number -> its line in the history


@dataclass
class _Lines:
    """A test's lines in a session's log, as the questions of its results are looked up."""

    said: list[Turn]  # the script's lines, in order
    questions: list[Turn]
    number: dict[int, int]  # a question's turn number -> its place among the questions
    by_text: dict[str, list[Turn]]
    observed: bool  # the test has history the agent only took in


@dataclass
class Histories:
    """The histories of one page's conversations: an outline each in the page, their lines as parts beside it."""

    parts: LazyParts
    needs: dict[tuple[Path, str], tuple[tuple[int, ...], ...] | None] = field(default_factory=dict)  # per test
    _of: dict[int, _History | None] = field(default_factory=dict)  # id(SessionLog) -> its history
    _lines: dict[tuple[int, str], _Lines] = field(default_factory=dict)

    def of(self, log: SessionLog) -> _History | None:
        """The history of one session's log (its observed lines), registered once; None when it has none."""
        if id(log) not in self._of:
            self._of[id(log)] = self._register(log)
        return self._of[id(log)]

    def lines(self, log: SessionLog, uid: str) -> _Lines:
        if (id(log), uid) not in self._lines:
            said = [t for t in log.own(uid) if t.kind == "test"]
            questions = [t for t in said if t.question]
            by_text: dict[str, list[Turn]] = {}
            for t in questions:
                by_text.setdefault(t.user, []).append(t)
            self._lines[id(log), uid] = _Lines(said, questions, {t.i: n for n, t in enumerate(questions)}, by_text,
                                               any(t.observed for t in said))
        return self._lines[id(log), uid]

    def _register(self, log: SessionLog) -> _History | None:
        lines: list[list[Any]] = []
        sessions: list[list[Any]] = []
        line_of: dict[int, int] = {}
        tokens = 0
        for t in log.turns:
            if not t.observed:
                continue
            if not sessions or t.i in log.jumps:
                sessions.append([len(lines), 0, t.time])
            sessions[-1][1] += 1
            line_of[t.i] = len(lines)
            lines.append([t.i, t.time, t.role, clip(t.user), t.user_tokens] + ([clip(t.reply)] if t.reply else []))
            tokens += t.user_tokens
        if not lines:
            return None
        text = json.dumps(lines, ensure_ascii=False, separators=(",", ":"))
        key = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
        if key not in self.parts.outlines:
            parts = math.ceil(len(lines) / PART)
            self.parts.outlines[key] = {"lines": len(lines), "tokens": tokens, "per": PART, "sessions": sessions}
            for p in range(parts):
                self.parts.add(f"h:{key}.{p}", lines[p * PART:(p + 1) * PART], f"{key}.{p}")
        return _History(key, line_of)


def _needs(histories: Histories, definitions: Path, uid: str) -> tuple[tuple[int, ...], ...] | None:
    """Per question of a test (in the order asked), the script lines its answer needs (the benchmark's evidence);
    None when the definition cannot be read. Read once per page."""
    if (definitions, uid) not in histories.needs:
        try:
            needs: tuple[tuple[int, ...], ...] | None = tuple(tuple(n) for n in read_definition(definitions, uid).needs)
        except LTMError:
            needs = None
        histories.needs[definitions, uid] = needs
    return histories.needs[definitions, uid]


def _line(t: Turn, line: int | None) -> list[Any]:
    """An evidence line as quoted with its question: its start (the whole line is in the history, one click away)."""
    text = t.user if len(t.user) <= QUOTE else t.user[:QUOTE].rsplit(" ", 1)[0] + " …"
    return [line, t.i, t.time, t.role, text]


def benchmark_view(r: TestResult, log: SessionLog, histories: Histories, definitions: Path,
                   taken: set[int]) -> dict[str, Any] | None:
    """The history and questions of a test whose lines include history the agent only took in (a benchmark's);
    None for any other test. `taken`: question turns already shown for other results of the same test (two
    questions with the same text are told apart by order)."""
    history = histories.of(log)
    uid = f"{r.dataset}/{r.group or r.example_id}"
    if history is None:
        return None
    test = histories.lines(log, uid)
    if not test.observed:
        return None
    said, questions = test.said, test.questions
    if r.group is None:
        mine = questions
    else:
        mine = [t for t in test.by_text.get(r.questions[0], []) if t.i not in taken][:1] if r.questions else []
        if not mine and r.gaps and r.gaps[0].line < len(said):
            mine = [said[r.gaps[0].line]]
        taken.update(t.i for t in mine)
    needs = _needs(histories, definitions, uid)
    asked = []
    for t in mine:
        n = test.number.get(t.i, -1)
        needed = [s for s in (needs[n] if needs is not None and 0 <= n < len(needs) else ()) if s < len(said)]
        marks = sorted(history.line_of[said[s].i] for s in needed if said[s].i in history.line_of)
        point = log.asked_after(t)  # independent: the end of the history; else the turn before
        asked.append({
            "turn": t.i, "time": t.time, "pos": t.pos, "back": t.went_back,
            "from": None if point is None else {"turn": point.i, "time": point.time, "question": point.question,
                                                "line": history.line_of.get(point.i)},
            "marks": marks, "ev": [_line(said[s], history.line_of.get(said[s].i)) for s in needed[:MAX_EVIDENCE]]})
    return {"hist": history.key, "asked": asked}


# The page's part (spliced into assets.JS, inside its closure: it uses `h`, `fmt` and `data`). Text only, as the rest.
CSS = """
.detail { white-space: normal; }
.asked { border-left: 4px solid #ff9900; background: #fff4e0; padding: 4px 10px; border-radius: 0 4px 4px 0; margin: 6px 0; }
.asked .head, li.hline .head { color: var(--muted); font-size: 12px; }
.asked .role { font-weight: 600; color: var(--ink); }
.asked .reply, .asked .expected { margin: 4px 0 0 18px; padding: 4px 8px; background: #fff; border: 1px solid var(--line); border-radius: 4px; }
.asked .who { font-size: 12px; color: var(--muted); }
.asked .point, .asked .evidence { margin: 6px 0 0 18px; font-size: 13px; }
.asked .evidence ul { margin: 2px 0; padding-left: 18px; }
.asked .evidence pre { display: inline; }
details.hist { margin: 8px 0; }
details.hist > summary, details.session > summary { cursor: pointer; }
details.session { margin: 3px 0 3px 12px; }
ol.hist { list-style: none; padding: 0; margin: 4px 0; }
li.hline { border-left: 4px solid #ccc; padding: 3px 10px; margin: 3px 0; background: var(--soft); border-radius: 0 4px 4px 0; }
li.hline.evidence { border-left-color: #109618; background: #e9f7ea; }
li.hline.from { border-bottom: 3px solid #ff9900; }
li.hline.focus { outline: 2px solid var(--accent); }
li.hline .badge.ev { background: #c8ecc9; }
li.hline .badge.fr { background: #ffe2b3; }
"""

JS = r"""
  // -- a benchmark test's history and questions (ltm_harness/_report/conversation_view.py) --
  const HIST_PAGE = 200;
  const when = (time) => String(time).replace("T", " ").replace("Z", "");
  async function histLines(key, from, to) {  // lines [from, to) of a history
    const part = data("report-lazy").outlines[key].per;
    const out = [];
    for (let p = Math.floor(from / part); p * part < to; p++) {
      const lines = await loadPart(`h:${key}.${p}`, `${key}.${p}.js`);
      out.push(...lines.slice(Math.max(0, from - p * part), Math.max(0, to - p * part)));
    }
    return out;
  }

  class HistoryView {
    constructor(t) {
      this.key = t.hist;
      this.outline = data("report-lazy").outlines[t.hist];
      this.evidence = new Set(t.asked.flatMap((a) => a.marks));
      this.from = new Set(t.asked.filter((a) => a.from && a.from.line !== null).map((a) => a.from.line));
      this.sessions = null;
      const o = this.outline, s = o.sessions;
      const span = s.length ? ` from ${when(s[0][2])} to ${when(s[s.length - 1][2])}` : "";
      this.list = h("div");
      this.root = h("details", { class: "hist", ontoggle: () => { if (this.root.open) this.build(); } },
        h("summary", null, `The history the question was asked from: ${fmt(o.lines)} lines in ${fmt(s.length)} session${s.length === 1 ? "" : "s"}` +
          `${span}, ${fmt(o.tokens)} tokens (loaded when opened; evidence lines marked)`), this.list);
    }
    build() {
      if (this.sessions) return;
      this.sessions = this.outline.sessions.map(([first, count, time], n) => {
        const marked = [...this.evidence].filter((l) => l >= first && l < first + count).length;
        const s = { first, count, shown: 0, ol: h("ol", { class: "hist" }), more: h("span") };
        s.details = h("details", { class: "session", ontoggle: () => { if (s.details.open && !s.shown) this.show(s, HIST_PAGE); } },
          h("summary", null, `session ${n + 1} · ${when(time)} · ${fmt(count)} line${count === 1 ? "" : "s"}`,
            marked ? h("span", { class: "badge ev" }, ` ${marked} evidence`) : null,
            [...this.from].some((l) => l >= first && l < first + count) ? h("span", { class: "badge fr" }, " asked from here") : null),
          s.ol, s.more);
        return s;
      });
      this.list.replaceChildren(...this.sessions.map((s) => s.details));
    }
    show(s, upTo) {  // the session's lines until `upTo`, one call after another
      s.pending = (s.pending || Promise.resolve()).then(() => this.more(s, upTo));
      return s.pending;
    }
    async more(s, upTo) {
      const to = Math.min(s.count, upTo);
      if (to <= s.shown) return;
      let lines;
      try { lines = await histLines(this.key, s.first + s.shown, s.first + to); }
      catch (err) { s.more.replaceChildren(h("p", { class: "err" }, err.message)); return; }
      let prev = s.shown ? s.lastTurn : null;
      lines.forEach((line, k) => {
        const [turn, time, role, text, tokens, reply] = line, at = s.first + s.shown + k;
        if (prev !== null && turn > prev + 1) s.ol.append(h("li", { class: "gap" }, `⋯ ${fmt(turn - prev - 1)} turn${turn - prev - 1 === 1 ? "" : "s"} that are not history (questions, filler)`));
        prev = turn;
        const ev = this.evidence.has(at), fr = this.from.has(at);
        s.ol.append(h("li", { class: "hline" + (ev ? " evidence" : "") + (fr ? " from" : ""), "data-line": at },
          h("div", { class: "head" }, `turn ${fmt(turn)} · ${when(time)} · ${role || "user"} · ${fmt(tokens)} tokens `,
            ev ? h("span", { class: "badge ev" }, "evidence") : null, fr ? h("span", { class: "badge fr" }, "the question was asked from here") : null),
          h("pre", { class: "text" }, text),
          reply ? h("div", { class: "reply" }, h("div", { class: "who" }, "agent"), h("pre", { class: "text agent-reply" }, reply)) : null));
      });
      s.lastTurn = prev;
      s.shown = to;
      s.more.replaceChildren(s.shown < s.count ? h("button", { type: "button", onclick: () => this.show(s, s.shown + HIST_PAGE) },
        `show ${fmt(Math.min(HIST_PAGE, s.count - s.shown))} more of ${fmt(s.count - s.shown)}`) : "");
    }
    async reveal(line) {  // open the history at one line, and point at it
      this.root.open = true;
      this.build();
      const s = this.sessions.find((x) => line >= x.first && line < x.first + x.count);
      if (!s) return;
      s.details.open = true;
      await this.show(s, Math.max(HIST_PAGE, line - s.first + 1));
      const li = this.root.querySelector(`li.hline[data-line="${line}"]`);
      if (!li) return;
      for (const old of this.root.querySelectorAll("li.hline.focus")) old.classList.remove("focus");
      li.classList.add("focus");
      li.scrollIntoView({ block: "center" });
    }
  }

  function benchmarkView(t) {
    const history = data("report-lazy") && data("report-lazy").outlines[t.hist] ? new HistoryView(t) : null;
    const jump = (line, label) => line === null || !history ? label :
      h("a", { href: "#", class: "jump", onclick: (ev) => { ev.preventDefault(); history.reveal(line); } }, label);
    const asked = t.asked.map((a, n) => {
      const point = !a.from ? null : h("div", { class: "point" },
        a.back === true ? "Asked from the memory the history left: " : a.back === false ? "Asked in sequence (the agent could not go back, so it had seen the questions before it): after " : "Asked after ",
        jump(a.from.line, `turn ${fmt(a.from.turn)} (${when(a.from.time)})${a.from.question ? ", a question" : ""}`),
        a.back === true ? "; the agent went back to this point after its reply, so no other question was seen." : ".");
      const more = a.marks.length - a.ev.length;
      return h("div", { class: "asked" },
        h("div", { class: "head" }, h("span", { class: "role" }, "question"), ` · turn ${fmt(a.turn)} · ${when(a.time)} · at ${fmt(a.pos)} tokens`),
        h("pre", { class: "text" }, n < t.questions.length ? t.questions[n] : "–"),
        h("div", { class: "reply" }, h("div", { class: "who" }, "agent's answer"), h("pre", { class: "text agent-reply" }, n < t.responses.length ? t.responses[n] : "–")),
        n < t.expected.length ? h("div", { class: "expected" }, h("div", { class: "who" }, "expected"), h("pre", { class: "text" }, t.expected[n])) : null,
        point,
        h("div", { class: "evidence" }, a.ev.length ? [`The benchmark's evidence (${fmt(a.marks.length || a.ev.length)} line${(a.marks.length || a.ev.length) === 1 ? "" : "s"}):`,
          h("ul", null, a.ev.map(([line, turn, time, role, text]) => h("li", { class: "evline" },
            jump(line, `turn ${fmt(turn)} · ${when(time)}`), " ", h("pre", { class: "text" }, text)))),
          more > 0 ? h("p", { class: "note" }, `and ${fmt(more)} more, marked in the history`) : null]
          : h("span", { class: "note" }, "The benchmark marks no evidence for this question.")));
    });
    return [h("h4", null, "Question, answer and the history it was asked from"), asked,
      history ? history.root : h("p", { class: "note" }, "The history is not in this page.")];
  }

  function benchmarkDetail(t, parts) {  // the summary line, the question, why it scored so (reasons on), its history
    const [head, asked, history] = benchmarkView(t);
    const from = parts.findIndex((p) => p.tagName === "H4" && p.textContent === "Reasons");
    return [parts[0], head, asked, ...(from < 0 ? [] : parts.slice(from)), history];
  }
"""
