"""The ``--html`` report loaded in headless Chromium: assertions on the DOM its script built,
and a screenshot kept as a test artifact (``<pytest basetemp>/<test>/report.png``; pytest keeps
the last three runs' folders)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.chromium import chromium as _chromium
from tests.chromium import dom as _dom
from tests.cli_support import Project

from .support import RENAME, RENAME_SESSION, UPLOAD, UPLOAD_SESSION, strict_catalog


@pytest.fixture
def report(tmp_path: Path) -> tuple[Path, dict[str, object]]:
    """The report of both fixtures against the strict catalog, and the same run's JSON."""
    strict = strict_catalog(tmp_path / "strict")
    page = tmp_path / "report.html"
    args = ("replay", str(UPLOAD), str(RENAME), "--against", str(strict), "--html", str(page))
    data = Project(tmp_path).json(*args)
    return page, data


def test_the_report_renders_timelines_blocks_and_the_diff(
    tmp_path: Path, report: tuple[Path, dict[str, object]]
) -> None:
    page, data = report
    dom = _dom(_chromium(tmp_path, page, "--dump-dom"))
    body = dom.find("body")[0]
    assert body.attrs.get("data-rendered") == "yes"  # the script ran to its end
    assert dom.find("p", id="status")[0].text == "Rendered 2 session(s)."

    rows = dom.find("tr", "session-row")
    assert [r.attrs["data-session"] for r in rows] == [UPLOAD_SESSION, RENAME_SESSION]
    cells = {c.attrs.get("data-outcome"): c.text for c in rows[0].find("td")}
    assert cells["soft_block"] == "2 → 5" and cells["hard_block"] == "1"

    sections = dom.find("section", "session")
    assert [s.attrs["data-session"] for s in sections] == [UPLOAD_SESSION, RENAME_SESSION]
    upload, rename = sections
    figures = upload.find("figure", "timeline")
    assert [f.attrs["data-behavior"] for f in figures] == ["no-destructive-git", "search-first"]
    search = figures[1]
    mine = [c for c in search.find("circle", "point") if "mine" in c.classes]
    theirs = [c for c in search.find("circle", "point") if "theirs" in c.classes]
    assert [int(c.attrs["data-counter"]) for c in mine] == [1, 2, 3, 4, 5, 6]
    assert [c.attrs["data-level"] for c in mine] == [
        *("nudge", "nudge", "warning", "warning", "soft_block", "soft_block")
    ]
    assert [c.attrs["data-level"] for c in theirs] == ["nudge", *["soft_block"] * 5]
    assert [c.attrs["data-index"] for c in mine if "block" in c.classes] == ["13", "15"]
    assert len(search.find("path", "series")) == 2  # the catalog's line and the other's

    blocks = upload.find("tr", "block-row")
    assert [b.attrs["data-index"] for b in blocks] == ["3", "5", "8", "11", "13", "15"]
    push = next(b for b in blocks if b.attrs["data-index"] == "5")
    assert "git push --force origin main" in push.text
    assert [td.text for td in push.find("td")][4] == "hard_block by no-destructive-git"

    diff = upload.find("tr", "diff-row")
    differences = data["differences"]
    assert isinstance(differences, list)
    assert [d.attrs["data-index"] for d in diff] == [str(d["index"]) for d in differences]
    assert [d.attrs["data-index"] for d in diff] == ["3", "8", "11"]
    cells = [td.text for td in diff[0].find("td")]
    assert cells[4:6] == ["nudge search-first nudge", "soft_block by search-first"]
    assert rename.find("figure", "timeline") == []
    assert rename.find("tr", "block-row") == [] and rename.find("tr", "diff-row") == []


def test_the_report_is_self_contained(report: tuple[Path, dict[str, object]]) -> None:
    page, _ = report
    dom = _dom(page.read_text(encoding="utf-8"))
    csp = [m for m in dom.find("meta") if m.attrs.get("http-equiv") == "Content-Security-Policy"]
    assert csp and csp[0].attrs["content"].startswith("default-src 'none'")
    for node in dom.iter():  # nothing to load: no src, no stylesheet link, no outside href
        assert "src" not in node.attrs and node.tag != "link", node.tag
        assert node.attrs.get("href", "#").startswith("#")
    embedded = json.loads(dom.find("script", id="replay-data")[0].text)
    assert [s["id"] for s in embedded["sessions"]] == [UPLOAD_SESSION, RENAME_SESSION]


def test_transcript_text_is_shown_as_text_never_run(tmp_path: Path) -> None:
    record = {
        "type": "assistant",
        "sessionId": "s-</script>",
        "uuid": "u1",
        "timestamp": "2026-03-02T10:00:00.000Z",
        "message": {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": "t1",
                    "name": "Bash",
                    "input": {"command": "git push --force </script><b id=pwned>x</b>"},
                }
            ],
        },
    }
    transcript = tmp_path / "evil.jsonl"
    transcript.write_text(json.dumps(record) + "\n")
    page = tmp_path / "evil.html"
    Project(tmp_path).run("replay", str(transcript), "--html", str(page))
    dom = _dom(_chromium(tmp_path, page, "--dump-dom"))
    assert dom.find("body")[0].attrs.get("data-rendered") == "yes"
    assert dom.find("b", id="pwned") == []
    rows = dom.find("tr", "block-row")
    assert len(rows) == 1
    assert "git push --force </script><b id=pwned>x</b>" in rows[0].text


def test_a_screenshot_of_the_report_is_kept(
    tmp_path: Path, report: tuple[Path, dict[str, object]]
) -> None:
    page, _ = report
    shot = tmp_path / "report.png"
    _chromium(tmp_path, page, f"--screenshot={shot}", "--window-size=1280,1800")
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert (width, height) == (1280, 1800)
    assert len(data) > 20_000  # a drawn page, not a blank one
    print(f"screenshot: {shot}")
