"""Make ``docs/images/statusline.png``: the real ``statusLine`` command's output, rendered.

A temporary project is set up with ``forge-policy init --statusline``; one session gets real
hook calls through the hook entry ``init`` wrote, spawned as Claude Code spawns an exec-form entry
(no shell; a ``git push --force``, four writes of files nothing searched, an ``npm install`` the
user must approve); then the ``statusLine`` command ``init`` wrote is run as Claude Code runs it
(``sh -c``, the status JSON on stdin). Its ANSI
output becomes a small HTML page (a terminal's colours, the line as Claude Code shows it under
the prompt), which headless Chromium screenshots. No network: the page has no external resource.

Usage (from a checkout, with forge-policy installed in the interpreter's environment):
``python docs/tools/statusline_image.py [--out docs/images/statusline.png] [--html FILE]``
"""

from __future__ import annotations

import argparse
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

FORGE = Path(sys.executable).with_name("forge-policy")
SESSION = "3f2a9c1e-readme"
#: SGR code -> CSS (the codes forge_policy.reports.statusline uses), a dark terminal's palette.
STYLES = {
    "1": "font-weight:bold",
    "2": "opacity:.6",
    "31": "color:#ff6b6b",
    "32": "color:#69db7c",
    "33": "color:#ffd43b",
    "36": "color:#66d9e8",
}
SGR = re.compile(r"\x1b\[([0-9;]*)m")
PAGE = """<!doctype html><meta charset="utf-8">
<style>
body {{ margin: 0; padding: 12px 16px; background: #1e1e1e; color: #d4d4d4;
        font: 15px/1.6 "DejaVu Sans Mono", monospace; }}
.line {{ white-space: pre; }}
.prompt {{ border: 1px solid #555; border-radius: 6px; padding: 4px 10px; margin-bottom: 6px; }}
.dim {{ color: #8a8a8a; }}
</style>
<div class="prompt"><span class="dim">&gt;</span></div>
<div class="line">{line}</div>
"""


def ansi_to_html(text: str) -> str:
    """``text`` with its SGR codes as ``<span style>``s (everything else escaped)."""
    out: list[str] = []
    open_spans = 0
    position = 0
    for match in SGR.finditer(text):
        out.append(html.escape(text[position : match.start()]))
        position = match.end()
        codes = match.group(1) or "0"
        if codes == "0":
            out.append("</span>" * open_spans)
            open_spans = 0
            continue
        css = ";".join(STYLES[c] for c in codes.split(";") if c in STYLES)
        out.append(f'<span style="{css}">')
        open_spans += 1
    out.append(html.escape(text[position:]) + "</span>" * open_spans)
    return "".join(out)


def _shell(command: str | list[str], data: dict[str, object], env: dict[str, str], cwd: str) -> str:
    """``command`` as Claude Code runs it: a line through ``sh -c``, a list (an exec-form hook
    entry, :func:`_exec_form`) spawned as it is."""
    argv = ["sh", "-c", command] if isinstance(command, str) else command
    done = subprocess.run(
        argv, input=json.dumps(data).encode(), capture_output=True,
        env=env, cwd=cwd, check=True,
    )  # fmt: skip
    return done.stdout.decode()


def _exec_form(handler: dict[str, object], project: str) -> str | list[str]:
    """The hook entry ``handler`` as Claude Code spawns it: exec form (``args``) as ``[command,
    *args]`` with ``${CLAUDE_PROJECT_DIR}`` substituted, no shell; else its shell line."""
    args = handler.get("args")
    if not isinstance(args, list):
        return str(handler["command"])
    return [w.replace("${CLAUDE_PROJECT_DIR}", project) for w in [str(handler["command"]), *args]]


def real_line() -> str:
    """The ``statusLine`` command's output (ANSI) for a session with real hook calls."""
    project = os.path.realpath(tempfile.mkdtemp(prefix="statusline-image-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FORGE_", "CLAUDE_"))}
    env.pop("NO_COLOR", None)
    env["CLAUDE_PROJECT_DIR"] = project
    try:
        subprocess.run(["git", "init", "-q", project], check=True)
        subprocess.run([str(FORGE), "init", "--statusline"], cwd=project, env=env, check=True,
                       capture_output=True)  # fmt: skip
        settings = json.loads(Path(project, ".claude", "settings.json").read_text())
        hook = _exec_form(settings["hooks"]["PreToolUse"][0]["hooks"][0], project)
        calls = [("Bash", {"command": "git push --force origin main"})]
        calls += [
            ("Write", {"file_path": f"{project}/src/m{n}.py", "content": "X = 1\n"})
            for n in range(4)
        ]
        calls.append(("Bash", {"command": "npm install left-pad"}))
        for tool, tool_input in calls:
            event = {"session_id": SESSION, "hook_event_name": "PreToolUse", "cwd": project,
                     "tool_name": tool, "tool_input": tool_input}  # fmt: skip
            _shell(hook, event, env, project)
        status = {
            "hook_event_name": "Status", "session_id": SESSION, "cwd": project,
            "workspace": {"current_dir": project, "project_dir": project},
            "model": {"id": "claude-opus-4-6", "display_name": "Opus"},
        }  # fmt: skip
        return _shell(settings["statusLine"]["command"], status, env, project).rstrip("\n")
    finally:
        subprocess.run([str(FORGE), "worker", "stop"], cwd=project, env=env, capture_output=True)
        shutil.rmtree(project, ignore_errors=True)


def screenshot(page: Path, out: Path, size: str) -> None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        sys.exit("chromium is not installed")
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
             "--disable-background-networking", "--disable-component-update", "--no-first-run",
             f"--user-data-dir={profile}", f"--window-size={size}", f"--screenshot={out}",
             page.as_uri()],
            check=True, capture_output=True, timeout=120,
        )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default="docs/images/statusline.png", help="the PNG to write")
    parser.add_argument("--html", help="also keep the HTML page here")
    parser.add_argument(
        "--size",
        default="860,160",
        help="the window size, WIDTH,HEIGHT (headless Chromium draws nothing below ~150 px high)",
    )
    args = parser.parse_args()
    line = real_line()
    print(repr(line))
    text = PAGE.format(line=ansi_to_html(line))
    with tempfile.TemporaryDirectory() as folder:
        page = Path(args.html) if args.html else Path(folder, "statusline.html")
        page.write_text(text, encoding="utf-8")
        out = Path(args.out).absolute()
        out.parent.mkdir(parents=True, exist_ok=True)
        screenshot(page, out, args.size)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
