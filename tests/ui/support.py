"""A project with real data for the dashboard, made by real hook calls, and a real
``forge-policy ui`` process serving it."""

from __future__ import annotations

import re
import signal
import subprocess
import threading
from pathlib import Path

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


def busy_project(base: Path, canary: str) -> tuple[Project, str, str]:
    """A project where one session climbed a ladder to a soft block, was soft-blocked (the
    call :func:`evil_call`) and overrode twice (a retry, then an explicit grant whose reason is
    :func:`evil_reason`) and hard-blocked once, and a second session was only nudged; returns
    it and both session ids."""
    project = Project(base, {**CATALOG, "climber": CLIMBER})
    first = project.session
    for _ in range(3):
        project.run(project.bash("climb the ladder"))  # nudge, warning, soft block
    project.run(project.bash(evil_call(canary)))  # soft block
    project.run(project.bash(evil_call(canary)))  # the identical retry overrides it
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
