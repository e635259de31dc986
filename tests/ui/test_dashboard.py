"""``forge-policy ui`` as a user meets it: the real process serving a project that real hook
calls filled (an escalation, blocks, a retry and an explicit override, a hard block), loaded
once in headless Chromium (DOM assertions on what it drew, a screenshot kept under pytest's
basetemp), and probed with http.client for what it must refuse.

One server and one Chromium launch for the module: CI time is tight."""

from __future__ import annotations

import http.client
import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.chromium import FLAGS, Node, dom
from tests.cli_support import FORGE
from tests.optional import need_binary
from tests.serve_support import free_port

from .support import UNSEEN, Dashboard, busy_project, evil_call, evil_reason


class Canary:
    """A web server on another loopback port that counts what reaches it: the recorded
    strings point their images at it, so a page that parsed them would call it."""

    def __init__(self) -> None:
        hits = self.hits = []  # type: list[str]

        class Count(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                hits.append(self.path)
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Count)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


class Site:
    """The module's shared state: the project, its sessions, the running dashboard."""

    def __init__(self, base: Path) -> None:
        self.canary = Canary()
        self.project, self.first, self.second = busy_project(base, self.canary.url)
        self.dashboard = Dashboard(self.project, "--port", str(free_port()))

    def cli(self, *args: str) -> Any:
        """``forge-policy ARGS --json`` in the project, parsed."""
        result = subprocess.run(
            [str(FORGE), *args, "--json"],
            env=self.project.env,
            cwd=self.project.dir,
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)

    def get(
        self, path: str, *, method: str = "GET", token: str | None = "", host: str | None = None
    ) -> tuple[int, dict[str, str], bytes]:
        """One request with the token as the page's cookie (``token=None``: no cookie)."""
        board = self.dashboard
        headers = {"Host": host or f"127.0.0.1:{board.port}"}
        if token is not None:
            headers["Cookie"] = f"forge_ui_{board.port}={token or board.token}"
        conn = http.client.HTTPConnection("127.0.0.1", board.port, timeout=20)
        conn.request(method, path, headers=headers)
        response = conn.getresponse()
        result = response.status, dict(response.getheaders()), response.read()
        conn.close()
        return result


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    site = Site(tmp_path_factory.mktemp("dashboard"))
    yield site
    code, err = site.dashboard.stop()
    site.canary.server.shutdown()
    site.canary.server.server_close()
    assert code == 0 and "stopped" in err, err


@pytest.fixture(scope="module")
def browser(site: Site, tmp_path_factory: pytest.TempPathFactory) -> tuple[Node, Path]:
    """The DOM Chromium built from the URL ``ui`` printed, and its screenshot (one launch)."""
    binary = need_binary("chromium", "chromium-browser")
    folder = tmp_path_factory.mktemp("dashboard-chromium")
    shot = folder / "dashboard.png"
    result = subprocess.run(
        [
            binary,
            *FLAGS,
            f"--user-data-dir={folder / 'profile'}",
            "--virtual-time-budget=3000",
            "--window-size=1280,1600",
            f"--screenshot={shot}",
            "--dump-dom",
            site.dashboard.url,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    print(f"screenshot: {shot}")
    return dom(result.stdout), shot


def _texts(nodes: list[Node]) -> list[str]:
    return [" ".join(n.text.split()) for n in nodes]


def test_sessions_show_counters_and_levels_over_time(
    site: Site, browser: tuple[Node, Path]
) -> None:
    dom, _ = browser
    body = dom.find("body")[0]
    assert body.attrs.get("data-script") == "ran"  # the nonce'd script ran to its end
    # its same-origin GET of data.json went through the CSP with the cookie
    assert dom.find("p", id="live")[0].text.startswith("read-only · up to date as of")

    rows = {r.attrs["data-session"]: r for r in dom.find("tr", "session-row")}
    assert set(rows) == {site.first, site.second}
    status = {s["session_id"]: s for s in site.cli("status")["sessions"]}
    for sid, row in rows.items():
        shown = {li.attrs["data-behavior"]: int(li.attrs["data-counter"]) for li in row.find("li")}
        stored = {b: v["counter"] for b, v in status[sid]["behaviors"].items() if v["counter"]}
        assert shown == stored
    assert "climber 3 soft_block pending block" in _texts(rows[site.first].find("li"))

    chart = dom.find("figure", "timeline", data_session=site.first)[0]
    climb = [c for c in chart.find("circle", "point") if c.attrs["data-behavior"] == "climber"]
    assert [c.attrs["data-counter"] for c in climb] == ["1", "2", "3"]
    assert [c.attrs["data-level"] for c in climb] == ["nudge", "warning", "soft_block"]
    assert ["block" in c.classes for c in climb] == [False, False, True]
    assert {p.attrs["data-behavior"] for p in chart.find("path", "series")} == {
        "climber",
        "softy",
        "hardy",
    }


def test_recent_blocks_and_overrides_with_their_reasons(
    site: Site, browser: tuple[Node, Path]
) -> None:
    dom, _ = browser
    rows = dom.find("tr", "record-row")
    logged = site.cli("audit", "log", "--kind", "block", "--kind", "override")["records"]
    assert [int(r.attrs["data-number"]) for r in rows] == [r["number"] for r in logged]
    kinds = [r.attrs["class"].split()[1] for r in rows]
    assert kinds.count("block-row") == 5 and kinds.count("override-row") == 2

    def cells(row: Node) -> dict[str, str]:
        return {td.attrs.get("class", "").split()[0]: td.text for td in row.find("td") if td.attrs}

    climber = next(r for r in rows if r.attrs["data-behavior"] == "climber")
    assert cells(climber)["reason"] == "[climber] climber: refused"
    hard = next(r for r in rows if r.attrs["data-behavior"] == "hardy")
    assert cells(hard)["call"] == "Bash: hard-me now"
    explicit, retry = [r for r in rows if "override-row" in r.classes]
    assert cells(explicit)["reason"] == evil_reason(site.canary.url)
    assert "explicit" in explicit.text and "retry" in retry.text
    summaries = {r["number"]: r["record"]["input_summary"] for r in logged}
    assert [cells(r)["call"] for r in rows] == [
        summaries[int(r.attrs["data-number"])] for r in rows
    ]
    assert cells(retry)["call"].startswith("Bash: " + evil_call(site.canary.url)[:60])


def test_override_rates_are_the_audit_summary(site: Site, browser: tuple[Node, Path]) -> None:
    dom, _ = browser
    summary = site.cli("audit")["behaviors"]
    rows = {r.attrs["data-behavior"]: r for r in dom.find("tr", "rate-row")}
    assert set(rows) == {b for b, v in summary.items() if v["violations"] or v["blocks"]}
    for behavior_id, row in rows.items():
        expected = summary[behavior_id]
        rate = expected["override_rate"]
        assert row.find("td", "rate")[0].text == ("\u2013" if rate is None else f"{rate:.2f}")
        assert row.attrs["data-band"] == (expected["band"] or "")
    softy = summary["softy"]
    assert softy["overrides"] == 2 and softy["override_rate"] == 2 / softy["blocks"]


def test_the_integrity_of_the_log_is_shown(site: Site, browser: tuple[Node, Path]) -> None:
    dom, _ = browser
    verified = site.cli("audit", "--verify")["verify"]
    verdict = dom.find("p", "verdict")[0]
    assert verdict.attrs["data-ok"] == "yes" and verified["ok"] is True
    assert verdict.text == f"intact: {verified['records']} records, hash chain verified"


def test_suggestions_shadow_verdicts_and_coverage_gaps(
    site: Site, browser: tuple[Node, Path]
) -> None:
    dom, _ = browser
    proposed = site.cli("suggest")["suggestions"]
    rows = dom.find("tr", "suggestion-row")
    assert proposed  # softy's override rate (2 of 3 blocks) is in review
    assert [
        (r.attrs["data-number"], r.attrs["data-kind"], r.attrs["data-behavior"]) for r in rows
    ] == [(str(s["number"]), s["kind"], s["behavior"]) for s in proposed]
    for row, suggestion in zip(rows, proposed, strict=True):
        assert row.find("td", "apply")[0].text == (
            suggestion["apply"] or suggestion["refused"] or "a note: nothing to apply"
        )

    report = site.cli("shadow", "report")
    assert report["differed"] >= 1  # the candidate soft-blocks what nudger only nudged
    summary = " ".join(dom.find("p", id="shadow-summary")[0].text.split())
    assert f"{report['differed']} event(s) decided differently of {report['compared']}" in summary
    shadow = {r.attrs["data-behavior"]: r for r in dom.find("tr", "shadow-row")}
    assert set(shadow) == {b["behavior_id"] for b in report["behaviors"]}
    assert "nudge-me please" in shadow["nudger"].text

    transcript = next((site.project.dir.parent / "home" / ".claude").rglob("*.jsonl"))
    replayed = site.cli("replay", str(transcript))["coverage"]
    gaps = dom.find("tr", "gap-row")
    assert [g.attrs["data-tool-use-id"] for g in gaps] == [
        g["tool_use_id"] for g in replayed["gaps"]
    ]
    assert len(gaps) == 1 and UNSEEN in gaps[0].text
    assert dom.find("p", id="coverage-summary")[0].text.startswith(replayed["summary"])


def test_recorded_markup_is_shown_as_text_and_never_runs(
    site: Site, browser: tuple[Node, Path]
) -> None:
    dom, _ = browser
    assert "data-pwned" not in dom.find("body")[0].attrs
    assert dom.find("img") == []  # neither injected image became an element
    assert [s for s in dom.find("script") if "pwned" in s.text] == []
    assert site.canary.hits == []  # nothing the page drew asked another origin
    _, _, raw = site.get("/")
    page = raw.decode()
    assert "<script>document" not in page and "<img" not in page
    assert "&lt;script&gt;document.body.dataset.pwned=2&lt;/script&gt;&quot;&gt;&lt;img" in page


def test_a_screenshot_of_the_dashboard_is_kept(browser: tuple[Node, Path]) -> None:
    _, shot = browser
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert (int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")) == (1280, 1600)
    assert len(data) > 40_000  # a drawn page, not a blank one


# -- what it refuses ---------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "OPTIONS"])
def test_nothing_but_get_and_head(site: Site, method: str) -> None:
    for token in ("", None):  # with or without the token: there is nothing to write to
        status, headers, _ = site.get("/", method=method, token=token)
        assert status == 405 and headers["Allow"] == "GET, HEAD"
    status, headers, body = site.get("/", method="HEAD")
    assert status == 200 and body == b"" and int(headers["Content-Length"]) > 1000


def test_other_hosts_are_refused(site: Site) -> None:
    port = site.dashboard.port
    for host in (f"evil.example:{port}", "127.0.0.1", f"127.0.0.1:{port + 1}", f"localhost.{port}"):
        status, _, body = site.get("/", host=host)
        assert status == 421, host
        assert b"<html" not in body
    assert site.get("/", host=f"localhost:{port}")[0] == 200


def test_the_token_is_required(site: Site) -> None:
    board = site.dashboard
    refused = [("/", None), ("/", "wrong"), ("/data.json", None), ("/count.json", "wrong")]
    for path, token in [*refused, ("/?token=x", None), ("/data.json?token=", None)]:
        status, _, body = site.get(path, token=token)
        assert status == 403, (path, token)
        assert site.first.encode() not in body
    # passed once in the URL, it becomes a strict, script-proof cookie and leaves the URL
    status, headers, _ = site.get(f"/?token={board.token}", token=None)
    assert status == 303 and headers["Location"] == "/"
    cookie = headers["Set-Cookie"]
    assert cookie.startswith(f"forge_ui_{board.port}={board.token};")
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    status, headers, body = site.get(f"/data.json?token={board.token}", token=None)
    assert status == 200 and headers["Content-Type"] == "application/json"
    assert {s["id"] for s in json.loads(body)["sessions"]} == {site.first, site.second}


def test_no_files_no_listing_and_a_strict_csp(site: Site) -> None:
    for path in ("/.forge/", "/.forge/audit/overrides.log", "/../../etc/passwd", "/index.html"):
        status, _, body = site.get(path)
        assert status == 404 and b"hash" not in body, path
    status, headers, body = site.get("/")
    assert status == 200 and headers["Content-Type"] == "text/html; charset=utf-8"
    nonce = re.search(r"'nonce-([\w-]+)'", headers["Content-Security-Policy"])
    assert nonce
    assert headers["Content-Security-Policy"] == (
        f"default-src 'none'; style-src 'nonce-{nonce[1]}'; script-src 'nonce-{nonce[1]}'; "
        "connect-src 'self'; img-src 'none'; base-uri 'none'; form-action 'none'; "
        "frame-ancestors 'none'"
    )
    assert headers["X-Frame-Options"] == "DENY" and headers["Cache-Control"] == "no-store"
    tree = dom(body.decode())
    assert [s.attrs.get("nonce") for s in tree.find("script")] == [nonce[1]]
    for node in tree.iter():  # nothing to load: no src, no link, no href leaving the page
        assert "src" not in node.attrs and node.tag != "link", node.tag
        assert node.attrs.get("href", "#").startswith("#")
    assert site.get("/")[1]["Content-Security-Policy"] != headers["Content-Security-Policy"]


@pytest.mark.skipif(
    not (sys.platform == "linux" and hasattr(os, "geteuid") and os.geteuid() == 0),
    reason="needs Linux and root to connect as another user",
)
def test_another_user_is_refused_even_with_the_token(site: Site) -> None:
    board = site.dashboard
    probe = (
        "import http.client, sys\n"
        f"c = http.client.HTTPConnection('127.0.0.1', {board.port}, timeout=20)\n"
        f"c.request('GET', '/data.json?token={board.token}')\n"
        "r = c.getresponse(); sys.stdout.write(f'{r.status} {r.read()[:200]!r}')\n"
    )
    # the system's Python: the test's own may live under a folder nobody else may enter
    result = subprocess.run(
        ["/usr/bin/python3", "-I", "-c", probe],
        user=65534,
        group=65534,
        capture_output=True,
        text=True,
        timeout=30,
        cwd="/",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("403 ") and "another user (uid 65534)" in result.stdout
    assert site.first not in result.stdout


def test_ctrl_c_stops_it_and_it_writes_nothing(site: Site) -> None:
    def files() -> dict[str, tuple[int, int]]:
        found = {}
        for path in sorted(site.project.dir.rglob("*")):
            if path.is_file():
                stat = path.stat()
                found[str(path)] = (stat.st_size, stat.st_mtime_ns)
        return found

    before = files()
    taken = subprocess.run(
        [str(FORGE), "ui", "--port", str(site.dashboard.port)],
        env=site.project.env,
        cwd=site.project.dir,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert taken.returncode == 1 and taken.stdout == ""
    assert f"cannot listen on 127.0.0.1:{site.dashboard.port}" in taken.stderr
    transcript = next((site.project.dir.parent / "home" / ".claude").rglob("*.jsonl"))
    other = Dashboard(site.project, "--transcripts", str(transcript))
    assert other.port != site.dashboard.port
    answers = []
    try:
        for path in ("/data.json", "/count.json"):
            conn = http.client.HTTPConnection("127.0.0.1", other.port, timeout=20)
            conn.request("GET", f"{path}?token={other.token}")
            response = conn.getresponse()
            answers.append((response.status, json.loads(response.read())))
            conn.close()
    finally:
        code, err = other.stop()
    (status, data), (counted, count) = answers
    assert status == counted == 200
    assert data["coverage"]["transcripts"] == [str(transcript)]
    log = site.project.root / "audit" / "overrides.log"
    assert count["records"] == data["records"] == log.read_text().count("\n")
    assert code == 0 and err.rstrip().endswith("forge-policy ui: stopped"), err
    assert files() == before
