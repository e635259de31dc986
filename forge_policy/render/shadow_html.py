"""The ``forge-policy shadow report --html`` page: one self-contained file (inline CSS and JS, a
Content-Security-Policy that forbids every fetch) with, per behavior, how many events the
candidate catalog would have decided differently and the examples, as
:mod:`forge_policy.render.replay_html` draws a replay.

The data travels as JSON in a ``<script type="application/json">`` element (every string
redacted, ``<`` escaped so no text can close it); the script builds the DOM with
``textContent`` only, so nothing recorded is ever parsed as HTML.

>>> from forge_policy.ops.shadow_report import shadow_report
>>> page = report(shadow_report([]), None)
>>> page.startswith("<!doctype html>"), "://" in page.split("<script")[0]
(True, False)
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from forge_policy.ops.shadow_report import ShadowReport


def report_data(result: ShadowReport, candidate: str | None) -> dict[str, Any]:
    """What the page draws, JSON-ready and redacted."""
    from forge_policy.audit.verify import clean

    data = clean({"candidate": candidate, **result.to_dict()})
    assert isinstance(data, dict)
    return data


def report(result: ShadowReport, candidate: str | None) -> str:
    """The whole page as text."""
    from forge_policy.render.html_page import embed_json

    data = embed_json(report_data(result, candidate))
    return _PAGE.replace("@DATA@", data)


def write_report(path: str, result: ShadowReport, candidate: str | None) -> None:
    """Write :func:`report` to ``path`` (UTF-8), replacing it atomically."""
    from forge_policy.render.html_page import write_page

    write_page(path, report(result, candidate), prefix=".shadow-")


_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy"
  content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>forge-policy shadow report</title>
<style>
:root { --allow: #9aa5b1; --nudge: #3b82f6; --warning: #d97706; --soft_block: #dc2626;
  --hard_block: #7f1d1d; --ink: #1f2933; --rule: #d9e2ec; }
body { font: 14px/1.45 system-ui, sans-serif; color: var(--ink); margin: 0 2rem 3rem; }
h1 { font-size: 1.4rem; margin: 1.2rem 0 .2rem; } h2 { font-size: 1.15rem; margin-top: 2rem; }
.meta, .note { color: #52606d; }
table { border-collapse: collapse; margin: .4rem 0 1rem; }
th, td { border-bottom: 1px solid var(--rule); padding: .2rem .6rem; text-align: left;
  vertical-align: top; }
th { background: #f5f7fa; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.subject { max-width: 40rem; overflow-wrap: anywhere; font-family: ui-monospace, monospace;
  font-size: 12px; }
.outcome { font-weight: 600; border-radius: 3px; padding: 0 .35rem; color: #fff;
  white-space: nowrap; }
.o-allow, .o- { background: var(--allow); } .o-nudge { background: var(--nudge); }
.o-warning { background: var(--warning); } .o-soft_block { background: var(--soft_block); }
.o-hard_block { background: var(--hard_block); } .o-silent { background: var(--allow); }
.d-would_block { color: var(--soft_block); font-weight: 600; }
.d-would_unblock { color: #047857; font-weight: 600; }
.problem { color: var(--soft_block); }
</style>
</head>
<body>
<h1>forge-policy shadow report</h1>
<p class="meta" id="meta"></p>
<p id="status">This report is drawn by its script: enable JavaScript to see it.</p>
<div id="summary"></div>
<div id="behaviors"></div>
<script type="application/json" id="shadow-data">@DATA@</script>
<script>
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("shadow-data").textContent);
  var WAYS = {would_block: "would block", would_unblock: "would no longer block",
    level: "another level"};

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    for (var k in attrs || {}) { node.setAttribute(k, attrs[k]); }
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    return node;
  }
  function badge(level) {
    return el("span", {"class": "outcome o-" + level}, level || "none");
  }
  function table(cls, head, rows) {
    var t = el("table", {"class": cls}), tr = el("tr");
    head.forEach(function (h) { tr.appendChild(el("th", {}, h)); });
    t.appendChild(tr);
    rows.forEach(function (r) { t.appendChild(r); });
    return t;
  }

  var meta = "candidate " + (data.candidate || "(none configured)");
  if (data.since) {
    meta += " \\u2014 since " + data.since.slice(0, 19).replace("T", " ") + " UTC";
  }
  document.getElementById("meta").textContent = meta;

  var summary = document.getElementById("summary");
  var line = (data.compared !== null ? data.compared + " events compared, " : "") +
    data.differed + " decided differently" +
    (data.rate !== null ? " (" + (100 * data.rate).toFixed(1) + "%)" : "") +
    (data.sessions ? " in " + data.sessions + " session(s)" : "");
  summary.appendChild(el("p", {id: "totals"}, line));
  var ways = el("p", {id: "directions"});
  Object.keys(WAYS).forEach(function (w) {
    ways.appendChild(el("span", {"class": "d-" + w, "data-direction": w},
      WAYS[w] + ": " + (data.directions[w] || 0)));
    ways.appendChild(document.createTextNode("  "));
  });
  summary.appendChild(ways);
  data.problems.forEach(function (p) {
    summary.appendChild(el("p", {"class": "problem"}, p));
  });

  var holder = document.getElementById("behaviors");
  if (!data.behaviors.length) {
    holder.appendChild(el("p", {"class": "note", id: "empty"},
      data.candidate ? "No difference recorded." : "No candidate catalog is configured."));
  } else {
    holder.appendChild(el("h2", {}, "Per behavior"));
    holder.appendChild(table("behaviors", ["behavior", "would block", "would no longer block",
      "another level", "events"], data.behaviors.map(function (b) {
      var tr = el("tr", {"class": "behavior-row", "data-behavior": b.behavior_id});
      var link = el("td");
      link.appendChild(el("a", {href: "#behavior-" + encodeURIComponent(b.behavior_id)},
        b.behavior_id));
      tr.appendChild(link);
      ["would_block", "would_unblock", "level", "total"].forEach(function (k) {
        tr.appendChild(el("td", {"class": "num", "data-count": k}, b[k]));
      });
      return tr;
    })));
  }
  data.behaviors.forEach(function (b) {
    var sec = el("section", {"class": "behavior", id: "behavior-" + b.behavior_id,
      "data-behavior": b.behavior_id});
    sec.appendChild(el("h2", {}, b.behavior_id + " (" + b.total + ")"));
    sec.appendChild(table("examples", ["time (UTC)", "session", "event", "subject", "active",
      "candidate", "direction"], b.examples.map(function (e) {
      var tr = el("tr", {"class": "example-row", "data-direction": e.direction});
      tr.appendChild(el("td", {}, e.timestamp.slice(0, 19).replace("T", " ")));
      tr.appendChild(el("td", {}, e.session_id));
      tr.appendChild(el("td", {}, (e.event + " " + (e.tool_name || "")).trim()));
      tr.appendChild(el("td", {"class": "subject"}, e.input_summary));
      var before = el("td"), after = el("td");
      before.appendChild(badge(e.before)); after.appendChild(badge(e.after));
      tr.appendChild(before); tr.appendChild(after);
      tr.appendChild(el("td", {"class": "d-" + e.direction}, WAYS[e.direction] || e.direction));
      return tr;
    })));
    holder.appendChild(sec);
  });
  document.getElementById("status").textContent =
    "Rendered " + data.behaviors.length + " behavior(s).";
  document.body.setAttribute("data-rendered", "yes");
})();
</script>
</body>
</html>
"""
