"""Global ``shadow: true`` (the configuration layers' monitor mode) through the real
``forge-policy hook`` process: every behavior decides, counts and audits, none blocks; a managed
``locked: [shadow]`` holding it false keeps it false."""

from __future__ import annotations

from pathlib import Path

from tests.hookrun import Project

CALLS = ("echo nudge-me", "echo warn-me", "echo soft-me", "echo ask-me", "echo hard-me")


def _project(base: Path, shadow: str, managed: str | None = None) -> Project:
    project = Project(base)
    (project.root / "config.yaml").write_text(f"floor: off\nshadow: {shadow}\n")
    project.env["FORGE_WORKER"] = "off"
    project.env["FORGE_MANAGED_DIR"] = str(base / "managed")
    if managed is not None:
        (base / "managed").mkdir()
        (base / "managed" / "config.yaml").write_text(managed)
    return project


def test_global_shadow_decides_counts_and_audits_but_never_blocks(tmp_path: Path) -> None:
    project = _project(tmp_path, "true")
    for command in CALLS:
        answer, _ = project.run(project.bash(command))
        text = str(answer)
        assert "deny" not in text and '"ask"' not in text, (command, answer)
    records = [r for r in project.audit() if r["kind"] in ("violation", "block")]
    assert [r["behavior_id"] for r in records] == ["nudger", "warner", "softy", "asker", "hardy"]
    assert all(r["kind"] == "violation" and r["shadow"] is True for r in records)
    assert [r["level"] for r in records] == [
        *("nudge", "warning", "soft_block", "soft_block", "hard_block")
    ]
    for behavior_id in ("nudger", "warner", "softy", "asker", "hardy"):
        assert project.counter(behavior_id) == 1
    project.run(project.bash("echo hard-me twice"))
    assert project.counter("hardy") == 2  # counted, still not blocked


def test_a_managed_lock_keeps_shadow_false(tmp_path: Path) -> None:
    project = _project(tmp_path, "true", managed="shadow: false\nlocked: [shadow]\n")
    answer, _ = project.run(project.bash("echo hard-me"))
    assert answer is not None
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    blocks = [r for r in project.audit() if r["kind"] == "block"]
    assert [(b["behavior_id"], b["shadow"]) for b in blocks] == [("hardy", False)]
