"""The documentation a user walks works as written (issue 21): every relative link of README.md,
CONTRIBUTING.md and docs/ reaches a file and, with ``#anchor``, a heading of it; every shell block
marked ``<!-- runnable -->`` runs in a fresh project with this environment's ``forge-policy``;
the CLI reference is what its generator writes today; docs/spec.md is the contract it copies;
and every ``SPEC §N`` the code cites names a section of it."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
SHARED_SPEC = ROOT.parent / "shared" / "SPEC.md"
PAGES = sorted([ROOT / "README.md", ROOT / "CONTRIBUTING.md", *DOCS.rglob("*.md")])
RUNNABLE = "<!-- runnable -->"

FENCE = re.compile(r"^(```|~~~)")
LINK = re.compile(r"(?<!!)\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^()\s]+)\)")


def prose(text: str, *, code_spans: bool = False) -> str:
    """``text`` without fenced code blocks, and without inline code spans unless
    ``code_spans`` (a link inside code is no link; a heading's code is part of its anchor)."""
    lines, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line.lstrip()):
            fenced = not fenced
            continue
        if not fenced:
            lines.append(line if code_spans else re.sub(r"`+[^`]*`+", "", line))
    return "\n".join(lines)


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text
    text = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return text.replace(" ", "-")


def anchors(text: str) -> set[str]:
    """The anchors of a Markdown page's headings (``-1``, ``-2`` for repeats)."""
    seen: dict[str, int] = {}
    found = set()
    for line in prose(text, code_spans=True).splitlines():
        match = re.match(r"^#{1,6} (.*?)#*\s*$", line)
        if match:
            base = slug(match.group(1))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
    return found


def broken_links(page: Path) -> list[str]:
    """Each relative link of ``page`` whose file or anchor does not exist, as ``target: why``."""
    text = page.read_text(encoding="utf-8")
    found = []
    for target in LINK.findall(prose(text)):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            found.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest.read_text("utf-8")):
            found.append(f"{target}: no heading with this anchor in {dest.name}")
        elif anchor and dest.suffix != ".md":
            found.append(f"{target}: an anchor into a file that is not Markdown")
    return found


def runnable_blocks(text: str) -> list[str]:
    """The shell blocks right after a ``<!-- runnable -->`` line, in page order; a marker not
    followed by a ``sh`` block is an error (a typo would silently run nothing)."""
    blocks = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.strip() != RUNNABLE:
            continue
        if i + 1 >= len(lines) or lines[i + 1].strip() not in ("```sh", "```bash", "```shell"):
            raise ValueError(f"line {i + 1}: {RUNNABLE} is not followed by a ```sh block")
        end = next(j for j in range(i + 2, len(lines)) if lines[j].strip() == "```")
        blocks.append("\n".join(lines[i + 2 : end]) + "\n")
    return blocks


def doc_environment(home: Path) -> dict[str, str]:
    """This process's environment with the test venv first on PATH and nothing of the
    developer's forge-policy setup or agent harness (a governance command would refuse)."""
    from forge_policy.cli.guard import AGENT_MARKERS

    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("FORGE_", "DISABLE_", "CLAUDE_")) and k not in AGENT_MARKERS
    }
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.update(HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"))
    env.update(XDG_CONFIG_HOME=str(home / ".config"), GIT_CONFIG_NOSYSTEM="1")
    return env


def run_blocks(blocks: list[str], project: Path, home: Path) -> None:
    """Run ``blocks`` one after another in ``project`` (each in ``bash -euo pipefail``), as a
    reader would; fail naming the first block that exits non-zero."""
    project.mkdir(parents=True, exist_ok=True)
    env = doc_environment(home)
    for number, block in enumerate(blocks, 1):
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", block],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        if done.returncode != 0:
            pytest.fail(
                f"runnable block {number} exited {done.returncode}:\n{block}\n"
                f"--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"
            )


def _pages_with_blocks() -> list[Path]:
    marker = re.compile(rf"^{re.escape(RUNNABLE)}$", flags=re.M)
    return [p for p in PAGES if marker.search(p.read_text(encoding="utf-8"))]


# --------------------------------------------------------------------------- links


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    assert broken_links(page) == []


def test_a_broken_link_or_anchor_is_found(tmp_path: Path) -> None:
    (tmp_path / "b.md").write_text("# Title\n\n## A `code` heading — with: punctuation\n")
    page = tmp_path / "a.md"
    page.write_text(
        "[ok](b.md#a-code-heading--with-punctuation) [ok](#here) `[not a link](nowhere.md)`\n"
        "## Here\n[gone](missing.md) [no anchor](b.md#nope) [web](https://example.com/x)\n"
    )
    assert broken_links(page) == [
        "missing.md: no such file",
        "b.md#nope: no heading with this anchor in b.md",
    ]


def test_headings_repeat_as_github_numbers_them() -> None:
    assert anchors("# A\n## A\n```\n# not a heading\n```\n## A\n") == {"a", "a-1", "a-2"}


def test_the_index_links_every_page() -> None:
    index = DOCS / "index.md"
    linked = {
        (DOCS / target.partition("#")[0]).resolve()
        for target in LINK.findall(prose(index.read_text(encoding="utf-8")))
        if not re.match(r"^[a-z][a-z0-9+.-]*:", target)
    }
    pages = {p.resolve() for p in DOCS.rglob("*.md")} - {index.resolve()}
    assert pages - linked == set()


# --------------------------------------------------------------------------- runnable blocks


def test_the_docs_mark_runnable_blocks() -> None:
    blocks = [b for p in _pages_with_blocks() for b in runnable_blocks(p.read_text("utf-8"))]
    assert len(blocks) >= 8
    assert any("forge-policy init" in b for b in blocks)
    assert any("forge-policy hook" in b for b in blocks)


@pytest.mark.parametrize("page", _pages_with_blocks(), ids=lambda p: str(p.relative_to(ROOT)))
def test_the_runnable_blocks_run(page: Path, tmp_path: Path) -> None:
    if not Path(sys.executable).with_name("forge-policy").exists():
        pytest.skip(f"forge-policy is not installed beside {sys.executable}")
    blocks = runnable_blocks(page.read_text(encoding="utf-8"))
    run_blocks(blocks, tmp_path / "project", tmp_path / "home")


def test_a_failing_block_fails_and_a_bad_marker_is_refused(tmp_path: Path) -> None:
    text = f"{RUNNABLE}\n```sh\ntrue\n```\n\n{RUNNABLE}\n```sh\nforge-policy no-such-command\n```\n"
    with pytest.raises(pytest.fail.Exception, match="runnable block 2 exited 2"):
        run_blocks(runnable_blocks(text), tmp_path / "p", tmp_path / "h")
    with pytest.raises(ValueError, match="not followed by"):
        runnable_blocks(f"{RUNNABLE}\n\n```sh\ntrue\n```\n")


# --------------------------------------------------------------------------- generated and copied


def _cli_reference() -> ModuleType:
    path = DOCS / "tools" / "cli_reference.py"
    spec = importlib.util.spec_from_file_location("cli_reference", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_cli_reference_is_current() -> None:
    tool = _cli_reference()
    assert tool.PAGE.read_text(encoding="utf-8") == tool.render(), (
        "docs/reference/cli.md is stale: run python docs/tools/cli_reference.py"
    )


def test_the_cli_reference_names_every_command_and_option() -> None:
    """Each command has its section, and each option it shows in ``--help`` is in that section."""
    import argparse

    from forge_policy.cli.app import build_parser

    page = (DOCS / "reference" / "cli.md").read_text(encoding="utf-8")
    subparsers = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    for name, sub in subparsers[0].choices.items():
        heading = f"\n## `forge-policy {name}`\n"
        assert heading in page
        section = page.split(heading, 1)[1].split("\n## ", 1)[0]
        for action in sub._actions:
            if isinstance(action, argparse._HelpAction) or action.help == argparse.SUPPRESS:
                continue
            for option in action.option_strings:
                assert f"`{option}" in section or f", {option}" in section, f"{name} {option}"


def test_the_spec_ships_as_the_shared_contract() -> None:
    if not SHARED_SPEC.is_file():
        pytest.skip(f"no {SHARED_SPEC} beside this checkout to compare docs/spec.md with")
    assert (DOCS / "spec.md").read_bytes() == SHARED_SPEC.read_bytes(), (
        f"docs/spec.md differs from {SHARED_SPEC}: copy it over (cp {SHARED_SPEC} docs/spec.md)"
    )


def spec_sections() -> set[int]:
    text = (DOCS / "spec.md").read_text(encoding="utf-8")
    return {int(n) for n in re.findall(r"^## (\d+)\. ", text, flags=re.M)}


def test_every_spec_section_the_code_cites_exists() -> None:
    sections = spec_sections()
    assert sections >= set(range(1, 14))
    cited: dict[int, set[str]] = {}
    for folder in ("forge_policy", "tests", "examples"):
        for path in (ROOT / folder).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            for group in re.findall(r"SPEC ((?:§\d+[\s,\u2013-]*(?:and\s+)?)+)", text):
                for number in re.findall(r"§(\d+)", group):
                    cited.setdefault(int(number), set()).add(str(path.relative_to(ROOT)))
    assert cited and set(cited) <= sections, {n: cited[n] for n in set(cited) - sections}


def test_spec_references_are_explained_where_readers_look() -> None:
    for page in (DOCS / "index.md", ROOT / "CONTRIBUTING.md"):
        text = page.read_text(encoding="utf-8")
        assert "SPEC §N" in text and "spec.md" in text, page.name


# --------------------------------------------------------------------------- the README


def test_the_readme_stays_short() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").count("\n")
    assert lines <= 250


def test_ci_finds_the_readme_test_command() -> None:
    """The awk program of .ci/run, run on the README as CI runs it, yields the pytest command."""
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    program = re.search(r"test_command=\$\(awk '(.*?)' README\.md\)", ci)
    assert program is not None
    done = subprocess.run(
        ["awk", program.group(1), "README.md"], cwd=ROOT, capture_output=True, text=True, check=True
    )
    command = done.stdout.strip()
    assert "\n" not in command and "-m pytest" in command
    assert command.startswith("python3 -m venv .venv-test && .venv-test/bin/pip install")
