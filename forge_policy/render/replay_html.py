"""The ``forge-policy replay --html`` report: one self-contained page (inline CSS and JS, a
Content-Security-Policy that forbids every fetch) drawing, per session and per behavior, the
timeline of counters and levels, the decisions that would block, the diff of two catalogs, and
the hook coverage gaps (the tool calls that got no decision: :mod:`forge_policy.ops.coverage`).

The data travels as JSON in a ``<script type="application/json">`` element (every string
redacted, ``<`` escaped so no text can close it); the script builds the DOM with
``textContent`` only, so nothing read from a transcript is ever parsed as HTML.

>>> from forge_policy.ops.replay import Replay
>>> from forge_policy.ops.transcript import TranscriptRead
>>> page = report(Replay("cat", None, ()), TranscriptRead())
>>> page.startswith("<!doctype html>"), "://" in page.split("<script")[0]
(True, False)
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from forge_policy.ops.coverage import Coverage
    from forge_policy.ops.replay import Replay, SessionReplay, Step, Verdict
    from forge_policy.ops.transcript import TranscriptRead


def report_data(
    result: Replay, read: TranscriptRead, coverage: Coverage | None = None
) -> dict[str, Any]:
    """What the page draws, JSON-ready and redacted (``coverage``: None, not checked)."""
    from forge_policy.audit.verify import clean

    paired = result.against is not None
    data = clean(
        {
            "catalog": result.catalog,
            "against": result.against,
            "events": result.events,
            "inputs": [f.to_dict() for f in read.files],
            "sessions": [_session(s, paired) for s in result.sessions],
            "coverage": coverage.to_dict() if coverage is not None else None,
        }
    )
    assert isinstance(data, dict)
    return data


def _session(session: SessionReplay, paired: bool) -> dict[str, Any]:
    behaviors: dict[str, dict[str, list[list[object]]]] = {}
    for step in session.events:
        _points(behaviors, "mine", step, step.decision)
        if step.against is not None:
            _points(behaviors, "theirs", step, step.against)
    out: dict[str, Any] = {
        "id": session.session_id,
        "events": len(session.events),
        "start": session.events[0].timestamp if session.events else 0,
        "end": session.events[-1].timestamp if session.events else 0,
        "outcomes": session.tally(),
        "behaviors": behaviors,
        "blocks": [
            _row(s)
            for s in session.events
            if s.decision.blocked or (s.against is not None and s.against.blocked)
        ],
    }
    if paired:
        out["against_outcomes"] = session.tally(against=True)
        out["differences"] = [_row(s) for s in session.events if s.differs]
    return out


def _points(
    behaviors: dict[str, dict[str, list[list[object]]]], side: str, step: Step, verdict: Verdict
) -> None:
    for fired in verdict.fired:
        series = behaviors.setdefault(fired.behavior_id, {"mine": [], "theirs": []})
        series[side].append([step.index, fired.counter, fired.level, fired.blocks, fired.shadow])


def _row(step: Step) -> dict[str, Any]:
    from forge_policy._time import iso

    row: dict[str, Any] = {
        "index": step.index,
        "time": iso(step.timestamp)[:19].replace("T", " "),
        "event": step.event,
        "tool": step.tool,
        "subject": step.subject,
        "source": step.source,
        "decision": _brief(step.decision),
    }
    if step.against is not None:
        row["against"] = _brief(step.against)
    return row


def _brief(verdict: Verdict) -> dict[str, Any]:
    return {
        "outcome": verdict.outcome,
        "blocking": verdict.blocking,
        "fired": [f"{f.behavior_id} {f.level}" for f in verdict.fired if not f.shadow]
        + [f"{o} override" for o in verdict.overrides],
    }


def report(result: Replay, read: TranscriptRead, coverage: Coverage | None = None) -> str:
    """The whole page as text."""
    fields = report_data(result, read, coverage)
    from forge_policy.render.html_page import embed_json

    data = embed_json(fields)
    return _PAGE.replace("@DATA@", data)


def write_report(
    path: str, result: Replay, read: TranscriptRead, coverage: Coverage | None = None
) -> None:
    """Write :func:`report` to ``path`` (UTF-8), replacing it atomically."""
    from forge_policy.render.html_page import write_page

    write_page(path, report(result, read, coverage), prefix=".replay-")


_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy"
  content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>forge-policy replay</title>
<style>
:root { --allow: #9aa5b1; --nudge: #3b82f6; --warning: #d97706; --soft_block: #dc2626;
  --hard_block: #7f1d1d; --ink: #1f2933; --rule: #d9e2ec; }
body { font: 14px/1.45 system-ui, sans-serif; color: var(--ink); margin: 0 2rem 3rem; }
h1 { font-size: 1.4rem; margin: 1.2rem 0 .2rem; } h2 { font-size: 1.15rem; margin-top: 2rem; }
h3 { font-size: 1rem; margin: 1.2rem 0 .3rem; }
.meta, .note { color: #52606d; } code { font-size: 12px; }
table { border-collapse: collapse; margin: .4rem 0 1rem; }
th, td { border-bottom: 1px solid var(--rule); padding: .2rem .6rem; text-align: left;
  vertical-align: top; }
th { background: #f5f7fa; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.subject { max-width: 40rem; overflow-wrap: anywhere; font-family: ui-monospace, monospace;
  font-size: 12px; }
.outcome { font-weight: 600; border-radius: 3px; padding: 0 .35rem; color: #fff;
  white-space: nowrap; }
.o-allow { background: var(--allow); } .o-nudge { background: var(--nudge); }
.o-warning { background: var(--warning); } .o-soft_block { background: var(--soft_block); }
.o-hard_block { background: var(--hard_block); }
.timelines { display: flex; flex-wrap: wrap; gap: 1rem; }
figure.timeline { margin: 0; border: 1px solid var(--rule); border-radius: 4px; padding: .4rem; }
figcaption { font-weight: 600; font-size: 13px; }
svg .axis { stroke: #9aa5b1; stroke-width: 1; }
svg .series { fill: none; stroke-width: 2; }
svg .series.mine { stroke: #334e68; } svg .series.theirs { stroke: #9f580a; stroke-dasharray: 4 3; }
svg text { font-size: 10px; fill: #52606d; }
svg .point { stroke: #fff; stroke-width: 1; }
svg .point.block { stroke: #000; stroke-width: 2; }
.l-nudge { fill: var(--nudge); } .l-warning { fill: var(--warning); }
.l-soft_block { fill: var(--soft_block); } .l-hard_block { fill: var(--hard_block); }
.l-silent { fill: var(--allow); }
.legend span { margin-right: 1rem; }
</style>
</head>
<body>
<h1>forge-policy replay</h1>
<p class="meta" id="meta"></p>
<p id="status">This report is drawn by its script: enable JavaScript to see it.</p>
<div id="summary"></div>
<div id="coverage"></div>
<div id="sessions"></div>
<script type="application/json" id="replay-data">@DATA@</script>
<script>
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("replay-data").textContent);
  var OUTCOMES = ["allow", "nudge", "warning", "soft_block", "hard_block"];
  var SVG = "http://www.w3.org/2000/svg";
  var paired = data.against !== null;

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    for (var k in attrs || {}) { node.setAttribute(k, attrs[k]); }
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    return node;
  }
  function svg(tag, attrs) {
    var node = document.createElementNS(SVG, tag);
    for (var k in attrs) { node.setAttribute(k, attrs[k]); }
    return node;
  }
  function badge(outcome) { return el("span", {"class": "outcome o-" + outcome}, outcome); }
  function verdict(v) {
    var td = el("td");
    td.appendChild(badge(v.outcome));
    var why = v.blocking ? " by " + v.blocking : (v.fired.length ? " " + v.fired.join(", ") : "");
    td.appendChild(document.createTextNode(why));
    return td;
  }
  function table(cls, head, rows) {
    var t = el("table", {"class": cls}), tr = el("tr");
    head.forEach(function (h) { tr.appendChild(el("th", {}, h)); });
    t.appendChild(tr);
    rows.forEach(function (r) { t.appendChild(r); });
    return t;
  }
  function stepRows(cls, steps) {
    return steps.map(function (s) {
      var tr = el("tr", {"class": cls, "data-index": s.index, "data-outcome": s.decision.outcome});
      tr.appendChild(el("td", {"class": "num"}, s.index));
      tr.appendChild(el("td", {}, s.time));
      tr.appendChild(el("td", {}, (s.event + " " + (s.tool || "")).trim()));
      tr.appendChild(el("td", {"class": "subject"}, s.subject));
      tr.appendChild(verdict(s.decision));
      if (paired) { tr.appendChild(verdict(s.against)); }
      tr.appendChild(el("td", {"class": "note"}, s.source));
      return tr;
    });
  }
  function stepHead() {
    var head = ["#", "time (UTC)", "event", "subject", paired ? "catalog" : "decision"];
    if (paired) { head.push("against"); }
    head.push("source");
    return head;
  }

  function timeline(id, series, events) {
    var W = 420, H = 130, L = 28, B = 18, T = 8, R = 8;
    var all = series.mine.concat(series.theirs);
    var top = Math.max.apply(null, all.map(function (p) { return p[1]; }).concat([1]));
    var x = function (i) { return L + (W - L - R) * (events > 1 ? i / (events - 1) : 0.5); };
    var y = function (c) { return H - B - (H - B - T) * (c / top); };
    var fig = el("figure", {"class": "timeline", "data-behavior": id});
    fig.appendChild(el("figcaption", {}, id));
    var s = svg("svg", {width: W, height: H, viewBox: "0 0 " + W + " " + H, role: "img"});
    s.appendChild(svg("line", {"class": "axis", x1: L, y1: H - B, x2: W - R, y2: H - B}));
    s.appendChild(svg("line", {"class": "axis", x1: L, y1: T, x2: L, y2: H - B}));
    var label = function (tx, ty, text, anchor) {
      var t = svg("text", {x: tx, y: ty, "text-anchor": anchor}); t.textContent = text;
      s.appendChild(t);
    };
    label(L - 4, y(top) + 4, top, "end"); label(L - 4, H - B + 4, "0", "end");
    label(L, H - 4, "event 0", "start"); label(W - R, H - 4, "event " + (events - 1), "end");
    // the other catalog's dots first and larger: where the two agree on the counter, its
    // level shows as a ring around the catalog's own dot
    ["theirs", "mine"].forEach(function (side) {
      var pts = series[side];
      if (!pts.length) { return; }
      var path = "M" + x(0) + " " + y(0), last = 0;
      pts.forEach(function (p) {
        path += " L" + x(p[0]) + " " + y(last) + " L" + x(p[0]) + " " + y(p[1]);
        last = p[1];
      });
      path += " L" + x(events - 1) + " " + y(last);
      s.appendChild(svg("path", {"class": "series " + side, d: path}));
      pts.forEach(function (p) {
        var c = svg("circle", {
          "class": "point " + side + " l-" + p[2] + (p[3] ? " block" : ""),
          cx: x(p[0]), cy: y(p[1]), r: (p[3] ? 5 : 3.5) + (side === "theirs" ? 3 : 0),
          "data-index": p[0], "data-counter": p[1], "data-level": p[2]
        });
        var tip = svg("title", {});
        tip.textContent = (side === "mine" ? "catalog" : "against") + ": event " + p[0] +
          ", counter " + p[1] + ", " + p[2] + (p[3] ? " (blocks)" : "") + (p[4] ? " (shadow)" : "");
        c.appendChild(tip);
        s.appendChild(c);
      });
    });
    fig.appendChild(s);
    return fig;
  }

  var meta = "catalog " + data.catalog + (paired ? " against " + data.against : "") + " \\u2014 " +
    data.events + " events from " + data.inputs.length + " transcript(s)";
  document.getElementById("meta").textContent = meta;

  var head = ["session", "events"].concat(OUTCOMES);
  if (paired) { head.push("differences"); }
  var rows = data.sessions.map(function (s) {
    var tr = el("tr", {"class": "session-row", "data-session": s.id});
    var link = el("td"), a = el("a", {href: "#session-" + encodeURIComponent(s.id)}, s.id);
    link.appendChild(a); tr.appendChild(link);
    tr.appendChild(el("td", {"class": "num"}, s.events));
    OUTCOMES.forEach(function (o) {
      var text = String(s.outcomes[o]);
      if (paired && s.against_outcomes[o] !== s.outcomes[o]) {
        text += " \\u2192 " + s.against_outcomes[o];
      }
      tr.appendChild(el("td", {"class": "num", "data-outcome": o}, text));
    });
    if (paired) { tr.appendChild(el("td", {"class": "num"}, s.differences.length)); }
    return tr;
  });
  var summary = document.getElementById("summary");
  summary.appendChild(el("h2", {}, "Sessions"));
  summary.appendChild(table("sessions", head, rows));
  data.inputs.forEach(function (f) {
    var odd = Object.keys(f.unknown).map(function (k) { return k + " " + f.unknown[k]; });
    var line = f.path + ": " + f.records + " records, " + f.events + " events";
    if (odd.length) { line += "; unknown record types: " + odd.join(", "); }
    if (f.problems.length) { line += "; " + (f.problems.length + f.more_problems) + " bad lines"; }
    summary.appendChild(el("p", {"class": "note input"}, line));
  });

  if (data.coverage) {
    var cov = data.coverage, box = document.getElementById("coverage");
    box.appendChild(el("h2", {}, "Hook coverage"));
    box.appendChild(el("p", {"class": "coverage-summary"}, cov.summary));
    var skipped = Object.keys(cov.skipped).map(function (k) { return k + " " + cov.skipped[k]; });
    if (skipped.length) {
      box.appendChild(el("p", {"class": "note"}, "not checked: " + skipped.join(", ")));
    }
    box.appendChild(el("p", {"class": "note"}, cov.matchers === null
      ? "PreToolUse matcher: not read (every tool counted)"
      : "PreToolUse matcher: " + cov.matchers.map(function (m) { return m || "*"; }).join(", ")));
    if (cov.gaps.length) {
      box.appendChild(table("gaps", ["time (UTC)", "session", "tool", "tool-call id", "subject",
        "why", "source"], cov.gaps.map(function (g) {
        var tr = el("tr", {"class": "gap-row", "data-session": g.session_id});
        tr.appendChild(el("td", {}, g.timestamp.slice(0, 19).replace("T", " ")));
        tr.appendChild(el("td", {}, g.session_id + (g.subagent ? " (subagent)" : "")));
        tr.appendChild(el("td", {}, g.tool));
        tr.appendChild(el("td", {}, g.tool_use_id || ""));
        tr.appendChild(el("td", {"class": "subject"}, g.summary));
        tr.appendChild(el("td", {}, g.reason));
        tr.appendChild(el("td", {"class": "note"}, g.source));
        return tr;
      })));
    }
  }

  var holder = document.getElementById("sessions");
  data.sessions.forEach(function (s) {
    var sec = el("section", {"class": "session", id: "session-" + s.id, "data-session": s.id});
    sec.appendChild(el("h2", {}, "Session " + s.id));
    sec.appendChild(el("h3", {}, "Counters and levels per behavior"));
    var ids = Object.keys(s.behaviors).sort();
    if (!ids.length) { sec.appendChild(el("p", {"class": "note"}, "No behavior fired.")); }
    var box = el("div", {"class": "timelines"});
    ids.forEach(function (id) { box.appendChild(timeline(id, s.behaviors[id], s.events)); });
    sec.appendChild(box);
    if (ids.length) {
      var legend = el("p", {"class": "legend note"});
      legend.appendChild(el("span", {}, "solid: catalog"));
      if (paired) { legend.appendChild(el("span", {}, "dashed and outer ring: against")); }
      legend.appendChild(el("span", {}, "ringed dot: the call is refused"));
      ["nudge", "warning", "soft_block", "hard_block"].forEach(function (level) {
        var key = el("span");
        key.appendChild(badge(level));
        legend.appendChild(key);
      });
      sec.appendChild(legend);
    }
    var listing = function (title, cls, rowCls, steps) {
      sec.appendChild(el("h3", {}, title + " (" + steps.length + ")"));
      sec.appendChild(steps.length ? table(cls, stepHead(), stepRows(rowCls, steps))
        : el("p", {"class": "note " + cls}, "None."));
    };
    listing("Decisions that would block", "blocks", "block-row", s.blocks);
    if (paired) { listing("Differences", "diff", "diff-row", s.differences); }
    holder.appendChild(sec);
  });
  var status = document.getElementById("status");
  status.textContent = "Rendered " + data.sessions.length + " session(s).";
  document.body.setAttribute("data-rendered", "yes");
})();
</script>
</body>
</html>
"""
