"""``forge-policy shadow report`` over shadow records the real hook wrote: text, ``--json``,
``--since``, ``--html`` in headless Chromium; read-only; clear when there is nothing to show."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from forge_policy.ops.shadow_report import shadow_report
from tests.chromium import chromium, dom
from tests.cli_support import Project as CliProject
from tests.helpers import write_catalog
from tests.hookrun import CATALOG, Project, rule

#: nudger blocks, hardy only warns
CANDIDATE = {
    **CATALOG,
    "nudger": rule("nudger", "soft_block", "nudge-me"),
    "hardy": rule("hardy", "warning", "hard-me"),
}
EVIL = "echo nudge-me </script><b id=pwned>x</b>"


def _files(root: Path) -> dict[str, int]:
    return {
        os.path.relpath(os.path.join(folder, name), root): os.stat(
            os.path.join(folder, name)
        ).st_mtime_ns
        for folder, _, names in os.walk(root)
        for name in names
    }


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> CliProject:
    """A project whose hook compared a candidate on five calls (three differed)."""
    base = tmp_path_factory.mktemp("shadow-report")
    hook = Project(base)
    write_catalog(hook.dir / "next", CANDIDATE)
    (hook.root / "config.yaml").write_text("floor: off\ncandidate: ../next\n")
    hook.env["FORGE_WORKER"] = "off"
    for command in ("echo hard-me", "echo nudge-me 1", "ls", "echo warn-me", EVIL):
        hook.run(hook.bash(command))
    cli = CliProject(hook.dir)
    cli.env = dict(hook.env)
    return cli


def test_the_report_counts_each_behavior_per_direction(recorded: CliProject) -> None:
    data = recorded.json("shadow", "report")
    assert data["candidate"] == str(recorded.path / "next")
    assert data["origin"] == f"{recorded.root / 'config.yaml'}:2"
    assert (data["compared"], data["differed"], data["sessions"]) == (5, 3, 1)
    assert data["directions"] == {"would_block": 2, "would_unblock": 1, "level": 0}
    rows = {b["behavior_id"]: b for b in data["behaviors"]}
    assert list(rows) == ["nudger", "hardy"]  # most differences first
    assert (rows["nudger"]["would_block"], rows["nudger"]["total"]) == (2, 2)
    assert rows["hardy"]["would_unblock"] == 1
    examples = rows["nudger"]["examples"]
    assert [e["input_summary"] for e in examples] == [f"Bash: {EVIL}", "Bash: echo nudge-me 1"]
    assert (examples[0]["before"], examples[0]["after"]) == ("nudge", "soft_block")
    assert recorded.json("shadow", "report", "--since", "2999-01-01")["differed"] == 0

    text = recorded.run("shadow", "report").stdout
    assert f"candidate catalog: {recorded.path / 'next'} (from " in text
    assert "5 events compared, 3 decided differently (60.0%) in 1 session" in text
    assert "would block 2, would no longer block 1, another level 0" in text
    assert "hardy     0            1                 0      1" in text
    assert "nudge -> soft_block  Bash: echo nudge-me 1" in text


def test_the_report_writes_nothing_but_its_html(recorded: CliProject, tmp_path: Path) -> None:
    before = _files(recorded.path)
    recorded.run("shadow", "report")
    recorded.run("shadow", "report", "--json", "--since", "2h")
    assert _files(recorded.path) == before
    page = tmp_path / "shadow.html"
    recorded.run("shadow", "report", "--html", str(page))
    assert _files(recorded.path) == before and page.exists()


def test_the_html_report_in_chromium(recorded: CliProject, tmp_path: Path) -> None:
    page = tmp_path / "shadow.html"
    recorded.run("shadow", "report", "--html", str(page))
    tree = dom(chromium(tmp_path, page, "--dump-dom"))
    assert tree.find("body")[0].attrs.get("data-rendered") == "yes"
    assert tree.find("p", id="totals")[0].text == (
        "5 events compared, 3 decided differently (60.0%) in 1 session(s)"
    )
    rows = tree.find("tr", "behavior-row")
    assert [r.attrs["data-behavior"] for r in rows] == ["nudger", "hardy"]
    counts = {c.attrs["data-count"]: c.text for c in rows[1].find("td") if "data-count" in c.attrs}
    assert counts == {"would_block": "0", "would_unblock": "1", "level": "0", "total": "1"}
    nudger = tree.find("section", "behavior", data_behavior="nudger")[0]
    examples = nudger.find("tr", "example-row")
    assert [e.attrs["data-direction"] for e in examples] == ["would_block", "would_block"]
    assert tree.find("b", id="pwned") == []  # recorded text is shown, never parsed
    assert EVIL in examples[0].text
    # self-contained: a CSP forbidding every fetch, nothing to load
    raw = dom(page.read_text(encoding="utf-8"))
    csp = [m for m in raw.find("meta") if m.attrs.get("http-equiv") == "Content-Security-Policy"]
    assert csp and csp[0].attrs["content"].startswith("default-src 'none'")
    for node in raw.iter():
        assert "src" not in node.attrs and node.tag != "link", node.tag
        assert node.attrs.get("href", "#").startswith("#")
    shot = tmp_path / "shadow.png"
    chromium(tmp_path, page, f"--screenshot={shot}", "--window-size=1280,900")
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_no_candidate_and_no_records_say_so(tmp_path: Path) -> None:
    project = CliProject(tmp_path)
    result = project.run("shadow", "report")
    assert "candidate catalog: none configured" in result.stdout
    assert "no candidate catalog is configured: set candidate: DIR" in result.stderr
    assert not project.root.exists()  # read-only: not even .forge
    data = json.loads(project.run("shadow", "report", "--json").stdout)
    assert (data["candidate"], data["differed"], data["behaviors"]) == (None, 0, [])
    project.root.mkdir()
    (project.root / "config.yaml").write_text("candidate: ../next\n")
    text = project.run("shadow", "report").stdout
    assert "no difference recorded" in text


def test_the_report_function_reads_diagnostics_and_since() -> None:
    records = [
        {
            "kind": "diagnostic",
            "code": "candidate",
            "message": "m",
            "timestamp": "2027-01-15T08:00:00+00:00",
        },
        {
            "kind": "diagnostic",
            "code": "candidate",
            "message": "m",
            "timestamp": "2027-01-15T08:00:01+00:00",
        },
        {"kind": "block", "behavior_id": "x", "timestamp": "2027-01-15T08:00:02+00:00"},
        {
            "kind": "shadow",
            "timestamp": "2027-01-15T09:00:00+00:00",
            "session_id": "s",
            "direction": "level",
            "changes": [{"behavior_id": "b", "direction": "level", "before": "nudge", "after": ""}],
        },
    ]
    report = shadow_report(records, compared=4)
    assert report.problems == ("m",) and report.rate == 0.25
    assert report.behaviors[0].level == 1 and report.behaviors[0].examples[0].after == ""
    late = shadow_report(records, since=1_800_000_000.0 + 1800)  # 08:30
    assert (late.differed, late.problems) == (1, ())
