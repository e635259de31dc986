"""Make ``docs/images/dashboard.png``: the real ``forge-policy ui`` page over a demo project.

    python docs/tools/dashboard_screenshot.py              # rewrite docs/images/dashboard.png
    python docs/tools/dashboard_screenshot.py --keep DIR   # and keep the demo project in DIR

The demo project (a temporary folder) uses the built-in catalog and a candidate catalog that
soft-blocks ``search-first`` two violations earlier. Real ``forge-policy hook`` calls fill it:
an agent that edits files it never read (nudges, warnings, a soft block it overrides by retry,
another the user overrides with a reason), a ``git push --force`` refused, a second session.
Its Claude Code transcript (under the demo's own ``HOME``) holds one call the hook never saw.
Then ``forge-policy ui`` serves it and headless Chromium (``chromium`` on PATH) takes the
screenshot. Needs the package installed (``pip install -e .``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
IMAGE = ROOT / "docs" / "images" / "dashboard.png"
FORGE = Path(sys.executable).with_name("forge-policy")
SIZE = "1280,2450"


class Demo:
    """A project folder, its environment, and the transcript of its first session."""

    def __init__(self, base: Path) -> None:
        self.dir = base / "shop-api"
        self.root = self.dir / ".forge"
        self.root.mkdir(parents=True)
        candidate = base / "candidate"
        shutil.copytree(ROOT / "forge_policy" / "catalog" / "builtin", candidate)
        rule = candidate / "search-first" / "behavior.yaml"
        text = (
            rule.read_text().replace("after: 3\n", "after: 2\n").replace("after: 5\n", "after: 3\n")
        )
        rule.write_text(text)
        (self.root / "config.yaml").write_text(f"floor: off\ncandidate: {candidate}\n")
        self.home = base / "home"
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("FORGE_", "CLAUDE_"))}
        self.env.update(FORGE_ROOT=str(self.root), HOME=str(self.home))
        self.session = str(uuid.uuid4())
        folder = re.sub(r"[^A-Za-z0-9]", "-", str(self.dir.resolve()))
        self.transcript = self.home / ".claude" / "projects" / folder / f"{self.session}.jsonl"
        self.transcript.parent.mkdir(parents=True)

    def call(self, tool: str, seen: bool = True, **tool_input: Any) -> None:
        """One tool call: in the transcript, and (``seen``) through the real hook."""
        payload = {
            "session_id": self.session,
            "hook_event_name": "PreToolUse",
            "tool_name": tool,
            "tool_input": tool_input,
            "tool_use_id": f"toolu_{uuid.uuid4().hex[:24]}",
            "cwd": str(self.dir),
            "permission_mode": "default",
        }
        record = {
            "type": "assistant",
            "sessionId": self.session,
            "uuid": str(uuid.uuid4()),
            "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()),
            "cwd": str(self.dir),
            "message": {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": payload["tool_use_id"],
                        "name": tool,
                        "input": tool_input,
                    }
                ],
            },
        }
        with self.transcript.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")
        if seen:
            self.run("hook", stdin=json.dumps(payload))
        time.sleep(0.4)  # so that the timelines spread over time

    def run(self, *args: str, stdin: str | None = None) -> str:
        result = subprocess.run(
            [str(FORGE), *args],
            input=stdin,
            env=self.env,
            cwd=self.dir,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        return result.stdout


def fill(demo: Demo) -> None:
    """The demo's sessions, through the real hook."""
    edit = {"old_string": "retries = 0", "new_string": "retries = 3"}
    for name in ("client", "orders", "billing", "cart"):
        demo.call("Edit", file_path=f"src/{name}.py", **edit)  # nudge, nudge, warning, warning
    demo.call("Edit", file_path="src/payments.py", **edit)  # soft block
    demo.call("Edit", file_path="src/payments.py", **edit)  # repeated: overridden by retry
    demo.call("Bash", command="git push --force origin main")  # hard block
    demo.call("Edit", file_path="src/schema_gen.py", **edit)  # soft block
    demo.run(
        "override",
        "search-first",
        "--session",
        demo.session,
        "--reason",
        "generated file: nothing to read first",
    )
    regenerated = {"old_string": "version = 1", "new_string": "version = 2"}
    demo.call("Edit", file_path="src/schema_gen.py", **regenerated)  # let through by the grant
    demo.call("Edit", file_path="src/tax.py", **edit)  # soft block
    demo.call("Edit", file_path="src/tax.py", **edit)  # repeated: overridden by retry
    demo.call("Bash", seen=False, command="npm publish")  # a call whose hook never ran
    demo.call("Read", file_path="src/search.py")
    first = demo.session
    demo.session = str(uuid.uuid4())
    demo.call("Edit", file_path="README.md", **edit)
    demo.call("Edit", file_path="docs/api.md", **edit)
    demo.session = first


def screenshot(demo: Demo, image: Path) -> None:
    """Serve the demo with ``forge-policy ui`` and let Chromium draw it into ``image``."""
    server = subprocess.Popen(
        [str(FORGE), "ui"], env=demo.env, cwd=demo.dir, stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        url = server.stdout.readline().split()[-1]
        browser = shutil.which("chromium") or shutil.which("chromium-browser")
        if browser is None:
            raise SystemExit("chromium not found on PATH")
        with tempfile.TemporaryDirectory() as profile:
            subprocess.run(
                [
                    browser,
                    "--headless",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--hide-scrollbars",
                    "--no-first-run",
                    "--disable-background-networking",
                    f"--user-data-dir={profile}",
                    "--virtual-time-budget=3000",
                    f"--window-size={SIZE}",
                    f"--screenshot={image}",
                    url,
                ],
                check=True,
                capture_output=True,
                timeout=120,
            )
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=10)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", metavar="DIR", help="build the demo in DIR and keep it")
    parser.add_argument("--out", default=str(IMAGE), help=f"the image (default {IMAGE})")
    args = parser.parse_args()
    base = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="forge-ui-demo-"))
    try:
        demo = Demo(base)
        fill(demo)
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        screenshot(demo, Path(args.out))
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
