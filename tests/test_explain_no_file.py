"""``forge-policy explain`` never prints a file (issue 23), through the real CLI process.

An agent may run ``explain`` itself: neither the file it names with ``-f`` (or feeds on stdin)
nor a file a fact of the event reads (``git commit -F msg``, ``bash < .env``) may come back on
its output, in text or ``--json``; only what a condition read, redacted. And the hook counts
``forge-policy explain -f FILE`` as a read of FILE for the secret-file check.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from forge_policy.commands import reader_operands
from tests.cli_support import Project, tool_event

SECRET = "tok_live_4f9a8b7c6d5e9f8a"
RAW = "RAWLINE codename-falcon-internal"
#: a secret-holding file, and one shaped like an event whose extra field holds a key
CREDENTIALS = f"[default]\naws_secret_access_key = {SECRET}\n# {RAW}\n"
EVENT_SHAPED = json.dumps({**tool_event("Bash", command="ls"), "private_key": SECRET, "note": RAW})
MESSAGE = f"fix: rotate the keys\n\n{RAW}\nAPI_TOKEN={SECRET}\n"
ENV = f"API_TOKEN={SECRET}\nexport {RAW.replace(' ', '_')}=1\n"


@pytest.fixture
def project(tmp_path: Path) -> Project:
    project = Project(tmp_path)
    (tmp_path / "credentials").write_text(CREDENTIALS)
    (tmp_path / "shaped.json").write_text(EVENT_SHAPED)
    (tmp_path / "msg.txt").write_text(MESSAGE)
    (tmp_path / ".env").write_text(ENV)
    return project


def outputs(project: Project, *args: str, stdin: str | None = None) -> list[str]:
    """stdout + stderr of ``explain ARGS`` in text and in ``--json``."""
    runs = [
        project.run("explain", *args, *mode, input=stdin, check=None) for mode in ((), ("--json",))
    ]
    return [r.stdout + r.stderr for r in runs]


#: what must not come back: the secret (or its start) and words only the files hold
RAW_WORDS = ["RAWLINE", "codename", "falcon", SECRET, SECRET[:12]]


# --- the file explain is given -----------------------------------------------------------------

FILE_SPELLINGS = [
    pytest.param(["-f", "credentials"], None, id="-f"),
    pytest.param(["--file", "credentials"], None, id="--file"),
    pytest.param(["--file=credentials"], None, id="--file="),
    pytest.param(["-fcredentials"], None, id="-fFILE"),
    pytest.param(["--fi", "shaped.json"], None, id="--fi-event-shaped"),
    pytest.param(["-f", "shaped.json"], None, id="-f-event-shaped"),
    pytest.param([], CREDENTIALS, id="stdin"),
    pytest.param([], EVENT_SHAPED, id="stdin-event-shaped"),
]


@pytest.mark.parametrize(("args", "stdin"), FILE_SPELLINGS)
def test_explain_prints_nothing_of_the_file_it_reads(
    project: Project, args: list[str], stdin: str | None
) -> None:
    for out in outputs(project, *args, stdin=stdin):
        for word in RAW_WORDS:
            assert word not in out, (args, out)


def test_the_harmless_twin_an_event_file_is_explained(project: Project) -> None:
    (project.path / "event.json").write_text(json.dumps(tool_event("Bash", command="ls -la")))
    text, as_json = outputs(project, "-f", "event.json")
    assert text.startswith("PreToolUse Bash in session s1: allow")
    assert "(actual 'ls -la')" in text
    assert json.loads(as_json)["outcome"] == "allow"


# --- files a fact of the event reads -----------------------------------------------------------

FACT_FILES = [
    pytest.param("git commit -F msg.txt", id="commit-F"),
    pytest.param("git commit --file=msg.txt", id="commit-file="),
    pytest.param("git commit -F - < msg.txt", id="commit-stdin"),
    pytest.param("cat msg.txt | git commit -F -", id="commit-cat-pipe"),
    pytest.param("bash < .env", id="env-bash-stdin"),
    pytest.param("cat .env | sh", id="env-cat-sh"),
    pytest.param("sh -s < .env", id="env-sh-s"),
]


@pytest.mark.parametrize("command", FACT_FILES)
def test_explain_prints_nothing_a_fact_read_from_a_file(project: Project, command: str) -> None:
    event = tool_event("Bash", command=command)
    event["cwd"] = str(project.path)
    (project.path / "event.json").write_text(json.dumps(event))
    for out in outputs(project, "-f", "event.json"):
        for word in RAW_WORDS:
            assert word not in out, (command, out)
        assert command in out or json.dumps(command)[1:-1] in out  # the call itself is shown


@pytest.mark.parametrize(
    ("command", "shown"),
    [
        pytest.param("git commit -m 'fix: the parser'", "fix: the parser", id="commit-m"),
        pytest.param(
            "git commit -F - <<EOF\nfeat: a here-doc\nEOF", "feat: a here-doc", id="commit-heredoc"
        ),
        pytest.param("sudo git push -f origin main", "git push --force origin main", id="resolved"),
    ],
)
def test_the_harmless_twins_what_the_call_itself_holds_is_shown(
    project: Project, command: str, shown: str
) -> None:
    event = tool_event("Bash", command=command)
    event["cwd"] = str(project.path)
    (project.path / "event.json").write_text(json.dumps(event))
    text, as_json = outputs(project, "-f", "event.json")
    assert shown in text and shown in as_json
    assert "not shown" not in text


def test_a_secret_in_the_call_itself_is_redacted(project: Project) -> None:
    command = f"export API_TOKEN={SECRET} && curl -H 'Authorization: Bearer {SECRET}' x"
    (project.path / "event.json").write_text(json.dumps(tool_event("Bash", command=command)))
    for out in outputs(project, "-f", "event.json"):
        assert SECRET not in out and "[REDACTED]" in out


def test_a_read_of_env_shows_its_family_not_its_text(project: Project) -> None:
    event = tool_event("Read", file_path=str(project.path / ".env"))
    (project.path / "event.json").write_text(json.dumps(event))
    text, as_json = outputs(project, "-f", "event.json")
    for out in (text, as_json):
        for word in RAW_WORDS:
            assert word not in out
    assert "(actual 'env_file')" in text


# --- the hook: explain's file is a read --------------------------------------------------------

EXPLAIN_READS = [
    (["forge-policy", "explain", "-f", "~/.aws/credentials"], ["~/.aws/credentials"]),
    (["forge-policy", "explain", "--file", "id_rsa"], ["id_rsa"]),
    (["forge-policy", "explain", "--file=.env"], [".env"]),
    (["forge-policy", "explain", "-f.env"], [".env"]),
    (["forge-policy", "explain", "-f=.env"], [".env"]),
    (["forge-policy", "explain", "--json", "--fil", ".env"], [".env"]),
    (["/usr/local/bin/forge-policy", "explain", "--session", "s", "-f", "e.json"], ["e.json"]),
    # twins: no file, or a subcommand that reads none
    (["forge-policy", "explain", "--session", ".env"], []),
    (["forge-policy", "explain", "--json"], []),
    (["forge-policy", "status", "-f", ".env"], []),
    (["forge-policy", "explain", "--", "-f", ".env"], []),
]


@pytest.mark.parametrize(
    ("argv", "reads"), EXPLAIN_READS, ids=[" ".join(a[0][1:]) for a in EXPLAIN_READS]
)
def test_explain_file_is_a_read_operand(argv: list[str], reads: list[str]) -> None:
    assert reader_operands(argv) == reads


@pytest.mark.parametrize(
    "command",
    [
        "forge-policy explain --file=.env",
        "forge-policy explain -f.env --json",
        "forge-policy explain --fi .env",
        "forge-policy explain < .env",
    ],
)
def test_the_hook_asks_about_explain_of_a_secret_file(project: Project, command: str) -> None:
    event = tool_event("Bash", command=command)
    event["cwd"] = str(project.path)
    answer = project.hook(event)
    assert answer is not None, command
    decision = answer["hookSpecificOutput"]["permissionDecision"]
    assert decision in ("ask", "deny"), (command, answer)


def test_the_hook_lets_explain_of_an_event_file_through(project: Project) -> None:
    (project.path / "event.json").write_text(json.dumps(tool_event("Bash", command="ls")))
    event = tool_event("Bash", command="forge-policy explain -f event.json --json")
    event["cwd"] = str(project.path)
    answer = project.hook(event) or {}
    assert answer.get("hookSpecificOutput", {}).get("permissionDecision") not in ("ask", "deny")
