"""README statements that can be executed or checked are (issue 15: its embedding snippet did
not run as written, its benchmark commands used a venv no step created, and it named
attributes the code did not have). Since issue 21 the README keeps the snippet and the rest
lives in docs/ and CONTRIBUTING.md: the checks follow the text to the page that holds it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import attrs

import forge_policy as fp
from forge_policy.audit.base import Verifiable
from forge_policy.model import Decision, Violation

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
PYTHON_API = (ROOT / "docs" / "reference" / "python-api.md").read_text(encoding="utf-8")
#: every page a user or contributor reads: README.md, CONTRIBUTING.md and docs/
DOCS = "\n".join(
    p.read_text(encoding="utf-8")
    for p in [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").rglob("*.md"))]
)


def embedding_snippet() -> str:
    marker = "<!-- embedding-snippet"
    assert marker in README
    block = README.split(marker, 1)[1].split("```python\n", 1)[1]
    return block.split("\n```", 1)[0]


def test_the_embedding_snippet_runs_as_written(tmp_path: Path) -> None:
    script = embedding_snippet() + "\nprint(decision.outcome, grant.behavior_id)\n"
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "nudge search-first\n"  # what the snippet's comment says
    assert (tmp_path / ".forge" / "audit" / "overrides.log").exists()


def _listed(text: str) -> list[str]:
    return re.findall(r"`([a-z_]+)`", text)


def test_the_decision_and_violation_attributes_it_names_exist() -> None:
    start = PYTHON_API.index("A `Decision` has `outcome`")
    paragraph = PYTHON_API[start : PYTHON_API.index("\n\n", start)]
    violation = paragraph.split("`violations` (each with", 1)[1].split("),", 1)[0]
    names = [n for n in _listed(violation) if n not in ("agent", "user", "never")]
    assert names and all(hasattr(Violation, n) or n in attrs.fields_dict(Violation) for n in names)
    decision = paragraph.split("`violations`", 1)[0]
    names = [n for n in _listed(decision) if n not in ("allow", "nudge", "warning")]
    names = [n for n in names if n not in ("soft_block", "hard_block")]
    assert names and all(hasattr(Decision, n) or n in attrs.fields_dict(Decision) for n in names)


def test_the_sinks_it_says_verify_do(tmp_path: Path) -> None:
    sentence = PYTHON_API[PYTHON_API.index("Audit sinks:") :].split("\n\n", 1)[0]
    assert "`JsonlAuditSink` and `SQLiteAuditSink`" in sentence
    assert isinstance(fp.JsonlAuditSink(str(tmp_path / "a.log")), Verifiable)
    assert isinstance(fp.SQLiteAuditSink(":memory:"), Verifiable)
    assert "it has no `verify()`" in sentence
    assert not isinstance(fp.MemoryAuditSink(), Verifiable)


def test_every_venv_a_command_uses_is_created_by_one() -> None:
    created = set(re.findall(r"python3 -m venv (\.venv[\w-]*)", DOCS))
    used = set(re.findall(r"(?<![\w/])(\.venv[\w-]*)/bin/", DOCS))
    assert used and used <= created, used - created


def test_every_benchmark_script_it_names_exists() -> None:
    scripts = set(re.findall(r"tests/benchmarks/[\w]+\.py", DOCS))
    assert scripts and all((ROOT / s).is_file() for s in scripts), scripts
