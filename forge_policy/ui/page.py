"""The dashboard as one HTML page, rendered on the server from :func:`forge_policy.ui.data.gather`.

Every recorded string (session ids, calls, reasons, behavior ids) goes through
:func:`html.escape` here, in text and in attributes alike; the timelines are inline SVG drawn
here too. The one inline script (allowed by its per-response nonce, see :func:`csp`) only
filters the records table and asks ``count.json`` whether new records arrived, writing what it
learns with ``textContent``: no string reaches the DOM as HTML.

>>> page = render({"generated_at": "2026-01-01T00:00:00Z", "records": 0, "sessions": [],
...                "recent": [], "rates": {"behaviors": {}, "totals": {}},
...                "integrity": {"ok": True, "records": 0, "problems": []},
...                "catalog": {"behaviors": 1, "enabled": 1}}, nonce="n0", project="<p>")
>>> page.startswith("<!doctype html>"), "&lt;p&gt;" in page, "<p>" in page.split("<body")[0]
(True, True, False)
"""

from __future__ import annotations

from html import escape

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from typing import Any

#: Line colours of the behaviors in a timeline, in turn (presentation attributes, not styles:
#: the CSP allows no inline style).
PALETTE = ("#334e68", "#c2410c", "#047857", "#7c3aed", "#b91c1c", "#0e7490", "#a16207")
#: What a table shows for no value (an en dash).
NONE = "\u2013"
LEVELS = ("nudge", "warning", "soft_block", "hard_block")


def csp(nonce: str) -> str:
    """The page's Content-Security-Policy: nothing loads from anywhere, the nonce'd style and
    script run, and the script may GET this origin (``count.json``) and nothing else."""
    return (
        f"default-src 'none'; style-src 'nonce-{nonce}'; script-src 'nonce-{nonce}'; "
        "connect-src 'self'; img-src 'none'; base-uri 'none'; form-action 'none'; "
        "frame-ancestors 'none'"
    )


def e(value: object) -> str:
    """``value`` as escaped text for an element or a quoted attribute ("" for None)."""
    return "" if value is None else escape(str(value), quote=True)


def render(data: Mapping[str, Any], *, nonce: str, project: str) -> str:
    """The whole page."""
    parts = [
        _head(nonce),
        f'<body data-records="{e(data.get("records"))}">',
        "<header><h1>forge-policy dashboard</h1>",
        f'<p class="meta" id="meta">{e(project)} · catalog {_catalog(data)} · '
        f"{e(data.get('records'))} audit records · drawn {e(_when(data.get('generated_at')))} UTC"
        "</p>",
        '<p class="live" id="live">read-only · refresh the page to redraw</p></header>',
        _audit_error(data.get("audit_error")),
        _integrity(data.get("integrity")),
        _sessions(data.get("sessions")),
        _recent(data.get("recent")),
        _rates(data.get("rates")),
        _suggestions(data.get("suggestions")),
        _shadow(data.get("shadow")),
        _coverage(data.get("coverage")),
        _SCRIPT.replace("@NONCE@", e(nonce)),
        "</body></html>",
    ]
    return "\n".join(p for p in parts if p)


def _catalog(data: Mapping[str, Any]) -> str:
    catalog = data.get("catalog") or {}
    return f"{e(catalog.get('behaviors'))} behaviors, {e(catalog.get('enabled'))} enabled"


def _when(stamp: object) -> str:
    """A stored ISO stamp as ``YYYY-MM-DD HH:MM:SS`` (UTC)."""
    return str(stamp or "")[:19].replace("T", " ")


def _error(section: object) -> str | None:
    if isinstance(section, dict) and "error" in section and len(section) == 1:
        return f'<p class="error">could not read this: {e(section["error"])}</p>'
    return None


def _audit_error(problem: object) -> str:
    return f'<p class="error" id="audit-error">audit log: {e(problem)}</p>' if problem else ""


def _table(cls: str, head: Sequence[str], rows: Iterable[str]) -> str:
    header = "".join(f"<th>{e(h)}</th>" for h in head)
    body = "".join(rows)
    return f'<table class="{cls}"><thead><tr>{header}</tr></thead><tbody>{body}</tbody></table>'


def _level(level: object) -> str:
    if not isinstance(level, str) or not level:
        return ""
    return f'<span class="level l-{e(level)}">{e(level)}</span>'


# -- integrity ---------------------------------------------------------------------------------


def _integrity(section: Any) -> str:
    failed = _error(section)
    head = '<section id="integrity"><h2>Integrity of the audit log</h2>'
    if failed:
        return head + failed + "</section>"
    ok = section.get("ok")
    problems = section.get("problems") or []
    if ok is True:
        text = f"intact: {e(section.get('records'))} records, hash chain verified"
        body = f'<p class="verdict good" data-ok="yes">{text}</p>'
    elif ok is None:
        body = f'<p class="verdict none" data-ok="none">not checked: {e("; ".join(problems))}</p>'
    else:
        items = "".join(f"<li>{e(p)}</li>" for p in problems)
        body = (
            '<p class="verdict bad" data-ok="no">INTEGRITY FAILURE: the audit log was edited, '
            f'truncated or reordered</p><ul class="problems">{items}</ul>'
        )
    return head + body + "</section>"


# -- sessions ----------------------------------------------------------------------------------


def _sessions(section: Any) -> str:
    head = '<section id="sessions"><h2>Live sessions</h2>'
    failed = _error(section)
    if failed:
        return head + failed + "</section>"
    if not section:
        return head + '<p class="note">No live session.</p></section>'
    rows = []
    for s in section:
        behaviors = s.get("behaviors") or {}
        counters = "".join(
            f'<li data-behavior="{e(bid)}" data-counter="{e(b.get("counter"))}">'
            f"<code>{e(bid)}</code> {e(b.get('counter'))} {_level(b.get('level'))}"
            f"{' <b class=pending>pending block</b>' if b.get('pending_block') else ''}</li>"
            for bid, b in behaviors.items()
        )
        blocks = sum(int(b.get("blocks") or 0) for b in behaviors.values())
        overrides = sum(int(b.get("overrides") or 0) for b in behaviors.values())
        rows.append(
            f'<tr class="session-row" data-session="{e(s.get("id"))}">'
            f'<td class="sid"><a href="#session-{e(s.get("id"))}">{e(s.get("id"))}</a></td>'
            f"<td>{e(_when(s.get('created_at')))}</td><td>{e(_when(s.get('last_accessed_at')))}</td>"
            f'<td><ul class="counters">{counters}</ul></td>'
            f'<td class="num" data-col="blocks">{blocks}</td>'
            f'<td class="num" data-col="overrides">{overrides}</td></tr>'
        )
    table = _table(
        "sessions",
        [
            "session",
            "started (UTC)",
            "last active (UTC)",
            "counters and levels",
            "blocks",
            "overrides",
        ],
        rows,
    )
    charts = "".join(_timeline(s) for s in section)
    return f'{head}{table}<div class="timelines">{charts}</div></section>'


def _timeline(session: Mapping[str, Any]) -> str:
    """One session's counters over time: a step line per behavior, a dot per recorded
    violation coloured by its level (ringed when it blocked)."""
    from forge_policy._time import parse_iso

    sid = session.get("id")
    series: dict[str, list[list[Any]]] = session.get("timeline") or {}
    figure = f'<figure class="timeline" id="session-{e(sid)}" data-session="{e(sid)}">'
    caption = f"<figcaption>Session <code>{e(sid)}</code>: counters over time</figcaption>"
    points = [p for pts in series.values() for p in pts]
    if not points:
        return f'{figure}{caption}<p class="note">No violation recorded.</p></figure>'
    W, H, L, B, T, R = 560, 150, 30, 20, 10, 12
    start = min(float(p[0]) for p in points)
    end = max(
        max(float(p[0]) for p in points), parse_iso(session.get("last_accessed_at"), default=0.0)
    )
    top = max([int(p[1]) for p in points] + [1])

    def x(t: float) -> float:
        return L + (W - L - R) * ((t - start) / (end - start) if end > start else 0.5)

    def y(c: int) -> float:
        return H - B - (H - B - T) * (c / top)

    out = [
        f'<svg width="{W}" height="{H}" viewBox="0 0 {W} {H}" role="img">',
        f'<line class="axis" x1="{L}" y1="{H - B}" x2="{W - R}" y2="{H - B}"/>',
        f'<line class="axis" x1="{L}" y1="{T}" x2="{L}" y2="{H - B}"/>',
        f'<text x="{L - 4}" y="{y(top) + 4:.1f}" text-anchor="end">{top}</text>',
        f'<text x="{L - 4}" y="{H - B + 4}" text-anchor="end">0</text>',
        f'<text x="{L}" y="{H - 4}">{e(_when_short(start))}</text>',
        f'<text x="{W - R}" y="{H - 4}" text-anchor="end">{e(_when_short(end))}</text>',
    ]
    legend = []
    for index, (behavior_id, pts) in enumerate(sorted(series.items())):
        colour = PALETTE[index % len(PALETTE)]
        pts = sorted(pts, key=lambda p: float(p[0]))
        path, last = f"M{x(start):.1f} {y(0):.1f}", 0
        for p in pts:
            path += f" L{x(float(p[0])):.1f} {y(last):.1f} L{x(float(p[0])):.1f} {y(int(p[1])):.1f}"
            last = int(p[1])
        path += f" L{x(end):.1f} {y(last):.1f}"
        out.append(
            f'<path class="series" d="{path}" stroke="{colour}" data-behavior="{e(behavior_id)}"/>'
        )
        for p in pts:
            level = p[2] if p[2] in LEVELS else "silent"
            blocks = p[3] == "block"
            out.append(
                f'<circle class="point l-{level}{" block" if blocks else ""}" '
                f'cx="{x(float(p[0])):.1f}" cy="{y(int(p[1])):.1f}" r="{5 if blocks else 3.5}" '
                f'data-behavior="{e(behavior_id)}" data-counter="{e(p[1])}" '
                f'data-level="{e(level)}" data-kind="{e(p[3])}"><title>{e(behavior_id)}: '
                f"{e(p[3])} at counter {e(p[1])} ({e(level)}), {e(_when_short(float(p[0])))}"
                "</title></circle>"
            )
        legend.append(
            f'<span class="key"><svg width="14" height="8"><line x1="0" y1="4" x2="14" y2="4" '
            f'stroke="{colour}" stroke-width="3"/></svg> {e(behavior_id)}</span>'
        )
    out.append("</svg>")
    return f'{figure}{caption}{"".join(out)}<p class="legend">{"".join(legend)}</p></figure>'


def _when_short(t: float) -> str:
    from forge_policy._time import iso

    return iso(t)[11:19]


# -- recent blocks and overrides ---------------------------------------------------------------


def _recent(section: Any) -> str:
    head = '<section id="recent"><h2>Recent blocks and overrides</h2>'
    failed = _error(section)
    if failed:
        return head + failed + "</section>"
    if not section:
        return head + '<p class="note">No block or override recorded.</p></section>'
    rows = []
    for r in section:
        kind = r.get("kind")
        how = _level(r.get("level")) if kind == "block" else e(r.get("mechanism"))
        rows.append(
            f'<tr class="record-row {e(kind)}-row" data-number="{e(r.get("number"))}" '
            f'data-session="{e(r.get("session_id"))}" data-behavior="{e(r.get("behavior_id"))}">'
            f'<td class="num">{e(r.get("number"))}</td><td>{e(_when(r.get("timestamp")))}</td>'
            f'<td class="kind k-{e(kind)}">{e(kind)}</td>'
            f'<td class="sid">{e(r.get("session_id"))}</td>'
            f"<td><code>{e(r.get('behavior_id'))}</code></td><td>{how}</td>"
            f'<td class="call">{e(r.get("call"))}</td><td class="reason">{e(r.get("reason"))}</td>'
            "</tr>"
        )
    table = _table(
        "records",
        ["#", "time (UTC)", "kind", "session", "behavior", "level / how", "call", "reason"],
        rows,
    )
    box = (
        '<p><label>Filter: <input id="filter" type="search" '
        'placeholder="session, behavior, call, reason" autocomplete="off"></label> '
        '<span class="note">the number is what <code>forge-policy explain --record N</code> '
        "takes</span></p>"
    )
    return f"{head}{box}{table}</section>"


# -- override rates ----------------------------------------------------------------------------


def _rate(rate: object) -> str:
    return f"{rate:.2f}" if isinstance(rate, int | float) else NONE


def _mechanisms(insight: Mapping[str, Any]) -> str:
    counts = insight.get("mechanisms") or {}
    return ", ".join(f"{m} {n}" for m, n in sorted(counts.items()))


def _rates(section: Any) -> str:
    head = '<section id="rates"><h2>Override rates per behavior</h2>'
    failed = _error(section)
    if failed:
        return head + failed + "</section>"
    behaviors: dict[str, Any] = section.get("behaviors") or {}
    active = {k: v for k, v in behaviors.items() if v.get("violations") or v.get("blocks")}
    rows = [
        f'<tr class="rate-row" data-behavior="{e(bid)}" data-band="{e(b.get("band") or "")}">'
        f"<td><code>{e(bid)}</code>{'' if b.get('enabled', True) else ' (off)'}</td>"
        f'<td class="num">{e(b.get("violations"))}</td><td class="num">{e(b.get("blocks"))}</td>'
        f'<td class="num">{e(b.get("overrides"))}</td>'
        f'<td class="num rate">{_rate(b.get("override_rate"))}</td>'
        f'<td><span class="band b-{e(b.get("band") or "none")}">'
        f"{e(b.get('band') or NONE)}</span></td><td>{e(_mechanisms(b))}</td>"
        "</tr>"
        for bid, b in active.items()
    ]
    t = section.get("totals") or {}
    rows.append(
        f'<tr class="total-row"><td>total</td><td class="num">{e(t.get("violations"))}</td>'
        f'<td class="num">{e(t.get("blocks"))}</td><td class="num">{e(t.get("overrides"))}</td>'
        f'<td class="num rate">{_rate(t.get("override_rate"))}</td>'
        f"<td>{e(t.get('band') or NONE)}</td><td></td></tr>"
    )
    table = _table(
        "rates", ["behavior", "violations", "blocks", "overrides", "rate", "band", "how"], rows
    )
    quiet = len(behaviors) - len(active)
    note = (
        '<p class="note">override rate = overrides / blocks: healthy &lt; 0.3 ≤ review ≤ 0.7 '
        f"&lt; ineffective. {quiet} behavior{'s' if quiet != 1 else ''} never fired.</p>"
    )
    return f"{head}{table}{note}</section>"


# -- suggestions, shadow verdicts, coverage gaps -----------------------------------------------


def _evidence(evidence: object) -> str:
    """A suggestion's evidence as ``key value`` pairs (lists shortened)."""
    if not isinstance(evidence, dict):
        return e(evidence)
    parts = []
    for key, value in evidence.items():
        if isinstance(value, list):
            shown = ", ".join(str(v) for v in value[:8]) + (" …" if len(value) > 8 else "")
        elif isinstance(value, dict):
            shown = ", ".join(f"{k} {v}" for k, v in value.items())
        else:
            shown = str(value)
        parts.append(f"<li><b>{e(key)}</b> {e(shown)}</li>")
    return f'<ul class="evidence">{"".join(parts)}</ul>'


def _suggestions(section: Any) -> str:
    if section is None:  # not gathered: no section
        return ""
    head = '<section id="suggestions"><h2>Tuning suggestions</h2>'
    failed = _error(section)
    if failed:
        return head + failed + "</section>"
    if not section:
        return head + '<p class="note">The audit log supports no suggestion yet.</p></section>'
    rows = [
        f'<tr class="suggestion-row" data-number="{e(s.get("number"))}" '
        f'data-kind="{e(s.get("kind"))}" data-behavior="{e(s.get("behavior"))}">'
        f'<td class="num">{e(s.get("number"))}</td><td>{e(s.get("kind"))}</td>'
        f"<td><code>{e(s.get('behavior'))}</code></td><td>{e(s.get('title'))}</td>"
        f"<td>{_evidence(s.get('evidence'))}</td>"
        f'<td class="apply">'
        + (
            f"<code>{e(s.get('apply'))}</code>"
            if s.get("apply")
            else e(s.get("refused") or "a note: nothing to apply")
        )
        + "</td></tr>"
        for s in section
    ]
    table = _table(
        "suggestions", ["#", "kind", "behavior", "suggestion", "evidence", "to apply it"], rows
    )
    note = (
        '<p class="note">Never applied by this page: run the command in a terminal '
        "(<code>forge-policy suggest</code> lists the same).</p>"
    )
    return f"{head}{table}{note}</section>"


def _shadow(section: Any) -> str:
    if section is None:  # not gathered: no section
        return ""
    head = '<section id="shadow"><h2>Shadow verdicts of the candidate catalog</h2>'
    failed = _error(section)
    if failed:
        return head + failed + "</section>"
    candidate = section.get("candidate")
    compared = section.get("compared")
    said = (
        f"candidate <code>{e(candidate)}</code>" if candidate else "no candidate catalog configured"
    )
    count = f"{e(section.get('differed'))} event(s) decided differently"
    if compared is not None:
        count += f" of {e(compared)} compared"
    lines = [f'<p class="meta" id="shadow-summary">{said}; {count}</p>']
    for problem in section.get("problems") or []:
        lines.append(f'<p class="error">candidate: {e(problem)}</p>')
    rows = []
    for b in section.get("behaviors") or []:
        examples = "".join(
            f'<li><span class="dir">{e(x.get("direction"))}</span> '
            f"{e(x.get('before') or 'silent')} → {e(x.get('after') or 'silent')}: "
            f'<span class="call">{e(x.get("input_summary"))}</span></li>'
            for x in b.get("examples") or []
        )
        rows.append(
            f'<tr class="shadow-row" data-behavior="{e(b.get("behavior_id"))}">'
            f"<td><code>{e(b.get('behavior_id'))}</code></td>"
            f'<td class="num">{e(b.get("would_block"))}</td>'
            f'<td class="num">{e(b.get("would_unblock"))}</td>'
            f'<td class="num">{e(b.get("level"))}</td><td><ul class="examples">{examples}</ul></td>'
            "</tr>"
        )
    if rows:
        lines.append(
            _table(
                "shadow",
                ["behavior", "would block", "would unblock", "level only", "latest examples"],
                rows,
            )
        )
    return head + "".join(lines) + "</section>"


def _coverage(section: Any) -> str:
    if section is None:  # not gathered: no section
        return ""
    head = '<section id="coverage"><h2>Hook coverage gaps</h2>'
    failed = _error(section)
    if failed:
        return head + failed + "</section>"
    read = section.get("transcripts") or []
    if section.get("note") and not section.get("summary"):
        return head + f'<p class="note" id="coverage-summary">{e(section["note"])}</p></section>'
    summary = (
        f'<p class="meta" id="coverage-summary">{e(section.get("summary"))} '
        f"({e(len(read))} transcript path(s): {e(', '.join(read))})</p>"
    )
    rows = [
        f'<tr class="gap-row" data-session="{e(g.get("session_id"))}" '
        f'data-tool-use-id="{e(g.get("tool_use_id") or "")}">'
        f'<td>{e(_when(g.get("timestamp")))}</td><td class="sid">{e(g.get("session_id"))}</td>'
        f"<td>{e(g.get('tool'))}{' (subagent)' if g.get('subagent') else ''}</td>"
        f'<td class="call">{e(g.get("summary"))}</td><td>{e(g.get("reason"))}</td>'
        f'<td class="note">{e(g.get("source"))}</td></tr>'
        for g in section.get("gaps") or []
    ]
    if not rows:
        return head + summary + "</section>"
    table = _table(
        "gaps", ["time (UTC)", "session", "tool", "call", "why it counts", "where"], rows
    )
    return head + summary + table + "</section>"


# -- head and script ---------------------------------------------------------------------------


def _head(nonce: str) -> str:
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{e(csp(nonce))}">'
        '<meta name="referrer" content="no-referrer">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<title>forge-policy dashboard</title><style nonce="{e(nonce)}">{_STYLE}</style></head>'
    )


_STYLE = """
:root { --nudge: #3b82f6; --warning: #d97706; --soft_block: #dc2626; --hard_block: #7f1d1d;
  --silent: #9aa5b1; --ink: #1f2933; --rule: #d9e2ec; }
body { font: 14px/1.45 system-ui, sans-serif; color: var(--ink); margin: 0 2rem 3rem; }
h1 { font-size: 1.4rem; margin: 1.2rem 0 .2rem; } h2 { font-size: 1.15rem; margin-top: 1.8rem; }
.meta, .note, .live { color: #52606d; } code { font-size: 12px; }
.live.new { color: #9f580a; font-weight: 600; } .error { color: #b91c1c; font-weight: 600; }
table { border-collapse: collapse; margin: .4rem 0 1rem; }
th, td { border-bottom: 1px solid var(--rule); padding: .2rem .6rem; text-align: left;
  vertical-align: top; }
th { background: #f5f7fa; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.call, td.reason { max-width: 28rem; overflow-wrap: anywhere; }
td.call { font-family: ui-monospace, monospace; font-size: 12px; min-width: 9rem; }
ul.counters { list-style: none; margin: 0; padding: 0; }
.level { font-weight: 600; border-radius: 3px; padding: 0 .35rem; color: #fff;
  white-space: nowrap; }
.l-nudge { background: var(--nudge); } .l-warning { background: var(--warning); }
.l-soft_block, .l-ask { background: var(--soft_block); }
.l-hard_block { background: var(--hard_block); }
.k-block { color: #b91c1c; font-weight: 600; } .k-override { color: #9f580a; font-weight: 600; }
.pending { color: #b91c1c; }
.verdict { font-weight: 600; padding: .3rem .6rem; border-radius: 4px; display: inline-block; }
.verdict.good { background: #e3f9e5; color: #05400a; }
.verdict.bad { background: #ffe3e3; color: #610404; } .verdict.none { background: #f0f4f8; }
.band { border-radius: 3px; padding: 0 .35rem; }
.b-healthy { background: #e3f9e5; } .b-review { background: #fff3c4; }
.b-ineffective { background: #ffe3e3; font-weight: 600; }
.timelines { display: flex; flex-wrap: wrap; gap: 1rem; }
figure.timeline { margin: 0; border: 1px solid var(--rule); border-radius: 4px; padding: .4rem; }
figcaption { font-weight: 600; font-size: 13px; }
svg .axis { stroke: #9aa5b1; stroke-width: 1; } svg .series { fill: none; stroke-width: 2; }
svg text { font-size: 10px; fill: #52606d; }
svg circle.point { stroke: #fff; stroke-width: 1; }
svg circle.point.block { stroke: #000; stroke-width: 2; }
svg .l-nudge { fill: var(--nudge); } svg .l-warning { fill: var(--warning); }
svg .l-soft_block { fill: var(--soft_block); } svg .l-hard_block { fill: var(--hard_block); }
svg .l-silent { fill: var(--silent); }
.legend .key { margin-right: 1rem; font-size: 12px; }
ul.evidence, ul.examples { margin: 0; padding-left: 1rem; font-size: 12px; }
span.call { font-family: ui-monospace, monospace; }
"""

_SCRIPT = """<script nonce="@NONCE@">
(function () {
  "use strict";
  var box = document.getElementById("filter");
  if (box) {
    box.addEventListener("input", function () {
      var q = box.value.toLowerCase();
      document.querySelectorAll("tr.record-row").forEach(function (tr) {
        tr.hidden = q !== "" && tr.textContent.toLowerCase().indexOf(q) < 0;
      });
    });
  }
  // the page is drawn once; this only says when the audit log has grown since
  var live = document.getElementById("live");
  var drawn = Number(document.body.getAttribute("data-records"));
  function poll() {
    fetch("count.json", {credentials: "same-origin", cache: "no-store"}).then(function (r) {
      if (!r.ok) { throw new Error("HTTP " + r.status); }
      return r.json();
    }).then(function (d) {
      if (d.records === null) { throw new Error(d.error); }
      var grown = d.records - drawn;
      live.className = grown > 0 ? "live new" : "live";
      live.textContent = grown > 0
        ? grown + " new audit record(s) since this page was drawn: reload to see them"
        : "read-only · up to date as of " + String(d.generated_at).slice(11, 19) + " UTC";
    }).catch(function (err) {
      live.className = "live new";
      live.textContent = "the dashboard server does not answer (" + err.message + ")";
    });
  }
  poll();
  setInterval(poll, 5000);
  document.body.setAttribute("data-script", "ran");
})();
</script>"""
