"""The report page's stylesheet and script, inlined into every HTML file (no file or URL is loaded).

The script only ever puts data into the page as text (textContent, text nodes, setAttribute on
`class`/`title`), never as markup, so an agent reply holding HTML or <script> shows as what it is.
Per-test details are built on demand from JSON blocks, which keeps big runs' pages fast to open.
"""

from __future__ import annotations

from ltm_harness._report import conversation_view, lazy

_SCORE_COLOURS = "\n".join(
    f".s{i} {{ background: hsl({i * 12} 65% 86%); }}" for i in range(11))  # s0 red .. s10 green

CSS = """
:root { --ink: #222; --muted: #666; --line: #ddd; --soft: #f6f7f9; --accent: #3366cc; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink); background: #fff; }
header { padding: 18px 28px 8px; border-bottom: 1px solid var(--line); }
header h1 { margin: 0 0 4px; font-size: 22px; }
nav { padding: 6px 28px; background: var(--soft); border-bottom: 1px solid var(--line); position: sticky; top: 0; z-index: 2; }
nav a { margin-right: 14px; color: var(--accent); text-decoration: none; }
main { padding: 8px 28px 40px; }
section { margin: 22px 0; }
h2 { font-size: 18px; margin: 0 0 8px; }
h3 { font-size: 15px; margin: 14px 0 6px; }
h4 { font-size: 13px; margin: 12px 0 4px; color: var(--muted); text-transform: uppercase; letter-spacing: .03em; }
.meta, .note { color: var(--muted); }
.warn { color: #8a5300; background: #fff6e0; padding: 6px 10px; border-radius: 4px; margin: 4px 0; }
.err { color: #8b0000; background: #fdecec; padding: 6px 10px; border-radius: 4px; margin: 4px 0; }
.scroll { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; margin: 4px 0 10px; }
th, td { border: 1px solid var(--line); padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: var(--soft); font-weight: 600; }
.scroll > table > tbody > tr > td:first-child:not(.who), .scroll > table > tr > td:first-child:not(.who) { white-space: nowrap; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
th.num { white-space: normal; }
.who { min-width: 8em; max-width: 18em; overflow-wrap: anywhere; }
table.grid td.num { white-space: normal; min-width: 4em; }
table.grid th.who { min-width: 5.5em; max-width: 11em; }
.std { color: #555; font-size: 12px; white-space: nowrap; }
table.matrix th { max-width: 10em; overflow-wrap: break-word; }
.pmark { color: #8a2b00; background: #ffe9d6; border-radius: 3px; padding: 0 3px; margin-left: 3px; font-size: 11px;
  cursor: help; white-space: nowrap; }
table.grid .pmark { display: inline-block; }  /* may go under its number in a narrow column */
.badge.mark { background: #fff0c2; color: #6b4500; margin: 0 4px; cursor: help; }
.charts.panels svg.chart { flex: 0 1 auto; }
.swatch { display: inline-block; width: 11px; height: 11px; border-radius: 2px; margin-right: 6px; vertical-align: -1px; }
.legend span.item { margin-right: 16px; white-space: nowrap; }
.charts { display: flex; flex-wrap: wrap; gap: 14px; align-items: flex-start; }
.chart { background: #fff; border: 1px solid var(--line); border-radius: 4px; }
details.agent { border: 1px solid var(--line); border-radius: 6px; margin: 10px 0; padding: 0 12px; }
details.agent > summary { cursor: pointer; padding: 10px 0; font-weight: 600; font-size: 15px; }
details.agent[open] > summary { border-bottom: 1px solid var(--line); margin-bottom: 8px; }
.controls { margin: 6px 0; display: flex; gap: 10px; align-items: center; flex-wrap: wrap; }
.controls input[type=search] { padding: 3px 6px; min-width: 220px; }
.pager button { margin: 0 2px; }
tr.test { cursor: pointer; scroll-margin-top: 48px; }
section, details.agent { scroll-margin-top: 40px; }
td.cell a { color: inherit; text-decoration: none; display: block; }
tr.test:hover td { background: #eef3fb; }
tr.test.open td { background: #e3ecfa; }
td.cell { cursor: pointer; text-align: center; min-width: 52px; }
.status-errored { color: #8b0000; font-weight: 600; }
.status-unscored { color: #8a5300; font-weight: 600; }
.detail { padding: 6px 4px 12px; max-width: 1100px; }
.text { white-space: pre-wrap; overflow-wrap: anywhere; margin: 0; font: inherit; }
ol.conv { list-style: none; padding: 0; margin: 0; }
ol.conv > li { margin: 6px 0; }
li.line { border-left: 4px solid #bbb; padding: 4px 10px; background: var(--soft); border-radius: 0 4px 4px 0; }
li.line.statement { border-left-color: #3366cc; background: #eef3fb; }
li.line.answer { border-left-color: #109618; background: #e9f7ea; }
li.line.question { border-left-color: #ff9900; background: #fff4e0; }
li.line.reset { border-left-color: #999; }
li.line .head { color: var(--muted); font-size: 12px; }
li.line .role { font-weight: 600; color: var(--ink); }
li.line .reply { margin: 4px 0 0 18px; padding: 4px 8px; background: #fff; border: 1px solid var(--line); border-radius: 4px; }
li.line .who { font-size: 12px; color: var(--muted); }
li.gap { color: var(--muted); padding-left: 14px; font-size: 13px; }
li.gap summary { cursor: pointer; }
.badge { display: inline-block; padding: 0 6px; border-radius: 8px; font-size: 12px; background: #eee; }
""" + _SCORE_COLOURS + "\n"  # the agents' colours are the page's own (colours.colour_css)

JS = r"""
"use strict";
(() => {
  const PAGE = 50;
  const blocks = new Map();
  const browsers = new Map();

  function data(id) {
    if (!blocks.has(id)) {
      const node = document.getElementById(id);
      blocks.set(id, node ? JSON.parse(node.textContent) : null);
    }
    return blocks.get(id);
  }

  // Builds elements from data as text only: strings become text nodes, never markup.
  function h(tag, props, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(props || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") e.className = v;
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? "" : String(v));
    }
    for (const kid of kids.flat(Infinity)) {
      if (kid === null || kid === undefined || kid === false) continue;
      e.append(kid instanceof Node ? kid : String(kid));
    }
    return e;
  }

  const fmt = (n) => (n === null || n === undefined) ? "–" : Number(n).toLocaleString("en-US");
  const score2 = (n) => (n === null || n === undefined) ? "–" : Number(n).toFixed(2);
  const scoreClass = (n) => "s" + Math.max(0, Math.min(10, Math.round(Number(n) * 10)));
  // A label that may wrap after its separators (a zero-width space after each), as narrow table headers need.
  const breakable = (text) => String(text).replace(/([·:/_@-])/g, "$1\u200b");
  const roleName = { statement: "statement", answer: "answer statement", question: "question", reset: "reset" };

  function pager(total, page, onPage) {
    const pages = Math.max(1, Math.ceil(total / PAGE));
    const from = total ? page * PAGE + 1 : 0;
    const to = Math.min(total, (page + 1) * PAGE);
    return h("span", { class: "pager" },
      h("button", { type: "button", disabled: page <= 0, onclick: () => onPage(page - 1) }, "‹ previous"),
      ` ${fmt(from)}–${fmt(to)} of ${fmt(total)} `,
      h("button", { type: "button", disabled: page >= pages - 1, onclick: () => onPage(page + 1) }, "next ›"));
  }

  function listOf(items) {
    return items.length ? h("ul", null, items.map((x) => h("li", null, h("pre", { class: "text" }, x)))) : h("p", { class: "note" }, "none");
  }

  function conversation(items) {
    if (!items.length) return h("p", { class: "note" }, "No event log for this test.");
    return h("ol", { class: "conv" }, items.map((it) => {
      if (it.t === "gap") {
        const parts = [];
        if (it.filler) parts.push(`${fmt(it.filler)} filler message${it.filler === 1 ? "" : "s"}`);
        const others = it.turns - it.filler;
        if (others) parts.push(`${fmt(others)} line${others === 1 ? "" : "s"} of other tests`);
        const head = `${it.after ? "then " : ""}⋯ ${fmt(it.turns)} turn${it.turns === 1 ? "" : "s"}, ${fmt(it.tokens)} tokens: ${parts.join(", ")}${it.after ? ", until the test ended" : ""}`;
        const list = it.others.map(([turn, what]) => h("li", null, `turn ${fmt(turn)}: ${what}`));
        if (it.more) list.push(h("li", null, `and ${fmt(it.more)} more`));
        return h("li", { class: "gap" }, h("details", null, h("summary", null, head),
          list.length ? h("ul", null, list) : h("p", null, "Filler only: arithmetic practice, not shown.")));
      }
      const gap = it.gap ? ` · gap: target ${fmt(it.gap.target)}, achieved ${fmt(it.gap.achieved)} tokens` : "";
      return h("li", { class: "line " + it.role },
        h("div", { class: "head" }, h("span", { class: "role" }, roleName[it.role] || it.role),
          ` · turn ${fmt(it.turn)} · ${String(it.time).replace("T", " ").replace("Z", "")} · at ${fmt(it.pos)} tokens${gap}`),
        h("pre", { class: "text user" }, it.user),
        h("div", { class: "reply" }, h("div", { class: "who" }, "agent"), h("pre", { class: "text agent-reply" }, it.reply)));
    }));
  }

  /*BENCHMARK VIEW*/

  function detail(t) {
    const rows = t.questions.map((q, i) => h("tr", null, h("td", { class: "num" }, i + 1), h("td", null, h("pre", { class: "text" }, q)),
      h("td", null, h("pre", { class: "text agent-reply" }, i < t.responses.length ? t.responses[i] : "–"))));
    const parts = [
      h("p", { class: "meta" }, `status ${t.status} · score ${+Number(t.score).toFixed(3)} of ${+Number(t.max).toFixed(3)} (${score2(t.norm)})${t.span == null ? "" : ` · memory span ${fmt(t.span)} tokens`} · turns ${fmt(t.turns[0])}–${fmt(t.turns[1])} · ${fmt(t.tokens)} tokens`),
      h("h4", null, "Questions and the agent's replies"),
      rows.length ? h("table", null, h("tr", null, h("th", null, "#"), h("th", null, "question"), h("th", null, "agent's reply")), rows) : h("p", { class: "note" }, "none"),
      h("h4", null, "Expected"), listOf(t.expected),
      h("h4", null, "Reasons"), listOf(t.reasons),
    ];
    if (t.verdicts.length) {
      parts.push(h("h4", null, "Judge verdicts"), h("table", null,
        h("tr", null, ["question", "score", "reason", "model", "prompt", "raw reply"].map((c) => h("th", null, c))),
        t.verdicts.map((v) => h("tr", null, h("td", null, h("pre", { class: "text" }, v.question)), h("td", { class: "num" }, score2(v.score)),
          h("td", null, h("pre", { class: "text" }, v.reason)), h("td", null, v.model + (v.cached ? " (cached)" : "")),
          h("td", null, v.prompt_hash), h("td", null, h("details", null, h("summary", null, "show"), h("pre", { class: "text" }, v.raw)))))));
    }
    if (t.gaps.length) {
      parts.push(h("h4", null, "Information gaps"), h("table", null,
        h("tr", null, h("th", null, "question line"), h("th", { class: "num" }, "target"), h("th", { class: "num" }, "achieved"), h("th", { class: "num" }, "error")),
        t.gaps.map((g) => h("tr", null, h("td", { class: "num" }, g.line), h("td", { class: "num" }, fmt(g.target)), h("td", { class: "num" }, fmt(g.achieved)),
          h("td", { class: "num" }, g.target ? (100 * (g.achieved - g.target) / g.target).toFixed(1) + "%" : "–")))));
    }
    if (t.hist) return h("div", { class: "detail" }, benchmarkDetail(t, parts));
    parts.push(h("h4", null, "Conversation: this test's lines, the rest collapsed"), conversation(t.conv));
    return h("div", { class: "detail" }, parts);
  }

  class Browser {
    constructor(root) {
      this.root = root;
      this.key = root.dataset.agent;
      this.page = 0;
      this.open = new Set();
      this.query = "";
      this.status = "all";
      this.tests = null;
      this.body = null;
    }
    ready(then) {  // the agent's tests: from the page at once, or from a file beside it (a big run's), then `then`
      const inline = this.tests === null ? data("data-" + this.key) : null;
      if (inline) this.tests = inline.tests;
      if (this.tests !== null) return true;
      if (!this.loading) this.loading = agentTests(this.key).then((d) => { this.tests = d.tests; },
        (err) => { this.root.replaceChildren(h("p", { class: "err" }, err.message)); throw err; });
      // once loaded, one render: a test to show (a click in the grid) wins over the section's own first render
      if (!this.pending || then.show) this.pending = then;
      this.loading.then(() => { const next = this.pending; this.pending = null; if (next) next(); }, () => {});
      return false;
    }
    build() {  // the controls are made once, so typing in the filter box keeps its focus and caret
      this.search = h("input", { type: "search", placeholder: "filter tests (dataset/id)",
        oninput: () => { this.query = this.search.value; this.page = 0; this.render(); } });
      this.select = h("select", { onchange: () => { this.status = this.select.value; this.page = 0; this.render(); } },
        [["all", "all tests"], ["imperfect", "not perfect"], ["ok", "scored"], ["unscored", "unscored"], ["errored", "errored"]]
          .map(([v, label]) => h("option", { value: v }, label)));
      this.pagerBox = h("span");
      this.body = h("div", { class: "scroll" });
      this.root.replaceChildren(h("div", { class: "controls" }, this.search, this.select, this.pagerBox), this.body);
    }
    matches(t) {
      if (this.query && !t.id.toLowerCase().includes(this.query.toLowerCase())) return false;
      if (this.status === "imperfect") return t.status !== "ok" || t.norm < 1;
      return this.status === "all" || t.status === this.status;
    }
    render() {
      if (!this.ready(() => this.render())) return;
      if (!this.body) this.build();
      const shown = this.tests.filter((t) => this.matches(t));
      const pages = Math.max(1, Math.ceil(shown.length / PAGE));
      this.page = Math.min(this.page, pages - 1);
      const body = [];
      const gaps = this.tests.some((t) => t.target != null || t.achieved != null);  // none: a benchmark asked question by question
      for (const t of shown.slice(this.page * PAGE, (this.page + 1) * PAGE)) {
        const isOpen = this.open.has(t.id);
        body.push(h("tr", { class: "test" + (isOpen ? " open" : ""), "data-test": t.id, onclick: () => this.toggle(t.id) },
          h("td", null, t.id), h("td", { class: "status-" + t.status }, t.status),
          h("td", { class: "num " + scoreClass(t.norm) }, score2(t.norm)),
          gaps ? [h("td", { class: "num" }, fmt(t.target)), h("td", { class: "num" }, fmt(t.achieved))] : [],
          h("td", { class: "num" }, `${fmt(t.turns[0])}–${fmt(t.turns[1])}`)));
        if (isOpen) body.push(h("tr", { class: "detail-row" }, h("td", { colspan: gaps ? 6 : 4 }, detail(t))));
      }
      this.pagerBox.replaceChildren(pager(shown.length, this.page, (p) => { this.page = p; this.render(); }));
      this.body.replaceChildren(h("table", { class: "tests" },
        h("tr", null, h("th", null, "test"), h("th", null, "status"), h("th", { class: "num" }, "score"),
          gaps ? [h("th", { class: "num" }, "target gap"), h("th", { class: "num" }, "achieved gap")] : [],
          h("th", { class: "num" }, "turns")), body));
    }
    toggle(id) {
      if (this.open.has(id)) this.open.delete(id); else this.open.add(id);
      this.render();
    }
    show(id) {
      if (!this.ready(Object.assign(() => this.show(id), { show: true }))) return;
      if (!this.body) this.build();
      this.query = this.search.value = id;
      this.status = this.select.value = "all";
      this.page = 0;
      this.open.add(id);
      this.render();
      const row = this.root.querySelector("tr.test.open");
      if (row) row.scrollIntoView({ block: "start" });
    }
  }

  function browserFor(key) {
    if (!browsers.has(key)) {
      const root = document.querySelector(`.browser[data-agent="${key}"]`);
      if (!root) return null;
      browsers.set(key, new Browser(root));
    }
    return browsers.get(key);
  }

  function openTest(key, id) {
    const section = document.getElementById(key);
    const b = browserFor(key);
    if (!section || !b) return;
    section.open = true;
    b.show(id);
  }

  function matrix(root) {
    const idx = data("report-index");
    let page = 0, query = "", differ = false;
    const search = h("input", { type: "search", placeholder: "filter tests (dataset/id)",
      oninput: () => { query = search.value; page = 0; render(); } });
    const box = h("input", { type: "checkbox", onchange: () => { differ = box.checked; page = 0; render(); } });
    const pagerBox = h("span");
    const body = h("div", { class: "scroll" });
    root.replaceChildren(h("div", { class: "controls" }, search, h("label", null, box, " only tests where scores differ"), pagerBox), body);
    const head = h("tr", null, h("th", null, "test"),
      idx.agents.map((a) => h("th", { class: "num", title: a.label }, h("span", { class: "swatch " + a.colour }), breakable(a.label))));
    function render() {
      const shown = idx.tests.filter(([id, scores, statuses]) => (!query || id.toLowerCase().includes(query.toLowerCase())) &&
        (!differ || new Set(scores.map((s, i) => s === null ? String(statuses[i]) : s.toFixed(3))).size > 1));
      const pages = Math.max(1, Math.ceil(shown.length / PAGE));
      page = Math.min(page, pages - 1);
      const rows = shown.slice(page * PAGE, (page + 1) * PAGE).map(([id, scores, statuses]) => h("tr", null, h("td", null, id),
        scores.map((s, i) => statuses[i] === null ? h("td", { class: "cell" }, "–") :
          h("td", { class: "cell num " + (statuses[i] === "ok" ? scoreClass(s) : "status-" + statuses[i]), title: `${idx.agents[i].label}: ${statuses[i]}` },
            h("a", { href: `#${idx.agents[i].key}`, onclick: (ev) => { ev.preventDefault(); openTest(idx.agents[i].key, id); } },
              statuses[i] === "ok" ? score2(s) : statuses[i])))));
      pagerBox.replaceChildren(pager(shown.length, page, (p) => { page = p; render(); }));
      body.replaceChildren(h("table", { class: "matrix" }, head, rows));
    }
    render();
  }

  document.addEventListener("DOMContentLoaded", () => {
    const m = document.getElementById("matrix");
    if (m) matrix(m);
    for (const section of document.querySelectorAll("details.agent")) {
      const show = () => { const b = browserFor(section.id); if (section.open && b && b.tests === null) b.render(); };
      section.addEventListener("toggle", show);
      show();
    }
    document.body.dataset.ready = "1";
  });
})();
"""

JS = JS.replace("  /*BENCHMARK VIEW*/\n", lazy.JS + conversation_view.JS)
CSS += conversation_view.CSS

