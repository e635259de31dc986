"""A project with real data for the dashboard, made by real hook calls, and a real
``forge-policy ui`` process serving it."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from helpers import write_catalog
from hookrun import CATALOG, Project, rule

from tests.cli_support import FORGE


def evil_call(canary: str) -> str:
    """A recorded call that would load ``canary`` and mark the page if it were parsed as HTML."""
    return f'soft-me "><img src="{canary}/call" onerror="document.body.dataset.pwned=1" id=pwned>'


def evil_reason(canary: str) -> str:
    """A recorded override reason with a script and an image in it."""
    return (
        f'ok <script>document.body.dataset.pwned=2</script>"><img src="{canary}/reason" id=pwned2>'
    )


CLIMBER = rule("climber", "nudge", "climb").replace(
    "    default_level: nudge",
    "    default_level: nudge\n    escalation:\n      - {after: 2, level: warning}\n"
    "      - {after: 3, level: soft_block}",
)


#: A call the transcript holds but the hook never saw (a gap in its coverage).
UNSEEN = "make deploy-everything"


class Transcript:
    """A Claude Code transcript of the calls :func:`busy_project` makes, written where Claude
    Code keeps the project's (``<home>/.claude/projects/<project path, dashed>/``)."""

    def __init__(self, home: Path, project: Project) -> None:
        folder = re.sub(r"[^A-Za-z0-9]", "-", str(project.dir.resolve()))
        self.path = home / ".claude" / "projects" / folder / f"{project.session}.jsonl"
        self.path.parent.mkdir(parents=True)
        self.project = project

    def call(self, payload: dict[str, Any]) -> dict[str, Any]:
        """Append ``payload``'s tool call as the assistant's tool_use; return the payload."""
        stamp = (
            time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime())
            + f".{int(time.time() % 1 * 1000):03d}Z"
        )
        record = {
            "type": "assistant",
            "sessionId": payload["session_id"],
            "uuid": str(uuid.uuid4()),
            "timestamp": stamp,
            "cwd": str(self.project.dir),
            "message": {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": payload["tool_use_id"],
                        "name": payload["tool_name"],
                        "input": payload["tool_input"],
                    }
                ],
            },
        }
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")
        return payload


def busy_project(base: Path, canary: str) -> tuple[Project, str, str]:
    """A project where one session climbed a ladder to a soft block, was soft-blocked (the
    call :func:`evil_call`) and overrode twice (a retry, then an explicit grant whose reason is
    :func:`evil_reason`) and hard-blocked once, and a second session was only nudged, which a
    candidate catalog (``nudger`` soft-blocking) would have blocked. The first session's
    transcript, under ``base/home``, holds one more call the hook never saw (:data:`UNSEEN`).
    Returns the project and both session ids."""
    project = Project(base, {**CATALOG, "climber": CLIMBER})
    candidate = write_catalog(base / "candidate", {**CATALOG, "climber": CLIMBER})
    nudger = candidate / "nudger" / "behavior.yaml"
    nudger.write_text(
        nudger.read_text().replace("default_level: nudge", "default_level: soft_block")
    )
    with (project.root / "config.yaml").open("a") as config:
        config.write(f"candidate: {candidate}\n")
    project.env["HOME"] = str(base / "home")
    transcript = Transcript(base / "home", project)
    first = project.session
    for _ in range(3):
        project.run(transcript.call(project.bash("climb the ladder")))  # nudge, warning, block
    project.run(transcript.call(project.bash(evil_call(canary))))  # soft block
    project.run(transcript.call(project.bash(evil_call(canary))))  # the identical retry overrides
    transcript.call(project.bash(UNSEEN))  # in the transcript, never sent to the hook
    project.run(project.bash("soft-me again"))  # soft block
    grant = subprocess.run(
        [str(FORGE), "override", "softy", "--session", first, "--reason", evil_reason(canary)],
        env=project.env,
        cwd=project.dir,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert grant.returncode == 0, grant.stderr
    project.run(project.bash("soft-me with the grant"))  # let through by the grant
    project.run(project.bash("hard-me now"))  # hard block
    project.session = second = "second-session"
    project.run(project.bash("nudge-me please"))
    project.session = first
    return project, first, second


class Dashboard:
    """A running ``forge-policy ui``: its URL, port and token; :meth:`stop` sends SIGINT (as
    Ctrl-C does) and returns the exit code and what it wrote on stderr."""

    def __init__(self, project: Project, *args: str) -> None:
        self.process = subprocess.Popen(
            [str(FORGE), "ui", *args],
            cwd=project.dir,
            env=project.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        stdout = self.process.stdout
        assert stdout is not None
        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.append(stdout.readline()))
        reader.start()
        reader.join(timeout=20)
        found = re.search(r"(http://127\.0\.0\.1:(\d+)/\?token=([\w-]+))", "".join(lines))
        assert found, f"ui did not start: {lines}"
        self.url, self.port, self.token = found.group(1), int(found.group(2)), found.group(3)

    def stop(self) -> tuple[int, str]:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
        _, err = self.process.communicate(timeout=10)
        return self.process.returncode, err
