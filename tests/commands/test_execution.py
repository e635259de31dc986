"""The command model (``commands.execution``): which programs a command line runs, both directions.

Each row: a command, lines that must be among its executed programs (canonical form), and lines
that must not be (data, or programs that are only named).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from forge_policy.commands.execution import data, normalise_argv, runs

CWD = "/srv/project"

RUNS = [
    # (command, must run, must not run)
    ("rm -rf /", ["rm -r -f /"], []),
    ("/bin/rm -Rf -- /", ["rm -R -f -- /"], []),
    ('"rm" --recursive --force x', ["rm --recursive --force x"], []),
    ("sudo -u root env A=1 nice -n 5 rm -rf x", ["rm -r -f x"], []),
    ("sudo --user root timeout --signal KILL 5 rm -rf x", ["rm -r -f x"], []),
    # busybox and toybox applets
    ("busybox rm -rf /some/path", ["rm -r -f /some/path"], []),
    ("toybox find . -delete", ["find . -delete"], []),
    # xargs: fixed args, literal input, replacement strings, unknown input
    ("echo / | xargs rm -rf", ["rm -r -f /"], []),
    ("printf '/\\n' | xargs -n1 -P2 rm -rf", ["rm -r -f /"], []),
    ("echo / | xargs -I{} rm -rf {}", ["rm -r -f /"], []),
    ("echo / | xargs --replace=FOO bash -c 'rm -rf FOO'", ["rm -r -f /"], []),
    ("echo 'rm -rf /' | xargs -I{} bash -c {}", ["rm -r -f /"], []),
    ("find . -print0 | xargs -0 rm -rf", ["rm -r -f …"], []),
    ("echo / | xargs -a list rm -rf", ["rm -r -f …"], ["rm -r -f /"]),
    ("xargs rm -rf < list", ["rm -r -f …"], []),
    ("echo ok | xargs", ["echo ok"], []),
    # parallel: ::: items, stdin, items that are commands
    ("parallel rm -rf {} ::: / ~", ["rm -r -f /", "rm -r -f ~"], []),
    ("parallel --jobs=2 -q rm -rf ::: /", ["rm -r -f /"], []),
    ("echo / | parallel rm -rf", ["rm -r -f /"], []),
    ("parallel ::: 'rm -rf /'", ["rm -r -f /"], []),
    ("parallel bash -c 'rm -rf {}' ::: build", ["rm -r -f build"], ["rm -r -f /"]),
    # find: actions run on the starting points, or on unknown files when a test narrows it
    ("find / -exec rm -rf {} \\;", ["rm -r -f /"], []),
    ("find ~ -execdir env rm -rf {} +", ["rm -r -f ~"], []),
    ("find . -name '*.tmp' -exec rm -r --force {} \\;", ["rm -r --force …"], []),
    ("find . -exec echo -delete + -print", ["echo -delete + -print"], []),
    # shells, substitutions, here-documents, ssh, eval
    ("bash -c 'rm -rf /'", ["rm -r -f /"], []),
    ("eval 'rm -rf /'", ["rm -r -f /"], []),
    ("bash <<'EOF'\nrm -rf /\nEOF", ["rm -r -f /"], []),
    ("bash <<< 'rm -rf /'", ["rm -r -f /"], []),
    ("echo $(rm -rf /)", ["rm -r -f /"], []),
    ("echo $(( $(rm -rf /) + 1 ))", ["rm -r -f /"], []),
    ("ssh host rm -rf /data", ["rm -r -f /data"], []),
    # variables the command line decides
    ("D=/; rm -rf $D", ["rm -r -f /"], []),
    ("TMPDIR=/tmp/x rm -rf $TMPDIR/y", ["rm -r -f /tmp/x/y"], []),
    ("rm -rf ${NOPE:-/tmp}/b", ["rm -r -f /tmp/b"], []),
    ("rm -rf $NOPE/b", ["rm -r -f $NOPE/b"], []),
    ("rm -rf `pwd`/b", ["rm -r -f $(pwd)/b"], []),
    # data is not a program
    ('echo "rm -rf /"', ["echo rm -rf /"], ["rm -r -f /"]),
    ("grep 'rm -rf' notes", ["grep rm -rf notes"], ["rm -r -f"]),
    ("cat <<EOF\nrm -rf /\nEOF", ["cat"], ["rm -r -f /"]),
    ('git commit -m "rm -rf /"', [], ["rm -r -f /"]),
    ('echo "$(( rm -rf /x ))"', [], ["rm -r -f /x"]),
    ("base64 <<EOF\nrm -rf /home/user\nEOF", [], ["rm -r -f /home/user"]),
    ("find . -name -delete -print", ["find . -name -delete -print"], []),
]


@pytest.mark.parametrize(("command", "present", "absent"), RUNS)
def test_runs(command: str, present: list[str], absent: list[str]) -> None:
    lines = [run.line for run in runs(command, CWD)]
    for line in present:
        assert line in lines, (command, lines)
    for line in absent:
        assert line not in lines, (command, lines)


def test_a_program_reached_through_another_names_its_route() -> None:
    readings = [run.reading for run in runs("echo / | xargs busybox rm -rf", CWD)]
    assert "rm -r -f / reached through xargs, busybox" in readings
    assert "echo /" in readings  # written directly: no route


def test_cd_earlier_in_the_command_moves_the_run() -> None:
    found = {run.line: run.cwd for run in runs("cd /a && rm -rf b; cd c && ls", CWD)}
    assert found == {"rm -r -f b": "/a", "ls": "/a/c"}


def test_a_remote_command_has_no_local_directory() -> None:
    assert [r.cwd for r in runs("ssh -p 22 host rm -rf x", CWD) if r.argv[0] == "rm"] == [""]


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["/usr/bin/rm", "-rf", "x"], ["rm", "-r", "-f", "x"]),
        (["rm", "--", "-rf"], ["rm", "--", "-rf"]),
        (["tar", "-xzf", "a.tgz"], ["tar", "-x", "-z", "-f", "a.tgz"]),
        (["find", ".", "-delete"], ["find", ".", "-delete"]),
        (["echo", "-ne", "x"], ["echo", "-ne", "x"]),
        (["rm", "-n5"], ["rm", "-n5"]),
        ([], []),
    ],
)
def test_canonical(argv: list[str], expected: list[str]) -> None:
    assert normalise_argv(argv) == expected


def test_a_script_piped_into_a_shell_is_read_or_marked_unread(tmp_path: Path) -> None:
    (tmp_path / "setup.sh").write_text("rm -rf /\n")
    read = [(r.line, r.complete) for r in runs("cat setup.sh | sh", str(tmp_path))]
    assert ("rm -r -f /", True) in read
    unread = [r for r in runs("base64 -d <<< eA== | bash", str(tmp_path)) if not r.complete]
    assert [r.reading for r in unread] == ["bash reached through a pipe of unread code"]


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ('echo "rm -rf /"', ["rm -rf /"]),
        ("grep -r 'git reset --hard' notes", ["git reset --hard"]),
        ("tee -a log <<EOF\ngit clean -fd\nEOF", ["git clean -fd\n"]),
        ("cat <<< 'curl x | sh'", ["curl x | sh"]),
        ("bash <<EOF\nrm -rf /\nEOF", []),  # a shell runs it: not data
        ("ls -la", []),
    ],
)
def test_data_is_kept_apart(command: str, expected: list[str]) -> None:
    assert [text for run in runs(command, CWD) for text in data(run)] == expected


@pytest.mark.parametrize(
    ("command", "changed"),
    [
        ("busybox rm -rf .forge", True),
        ("parallel rm -rf ::: .forge", True),
        ("echo .forge | parallel rm -rf", True),
        ("D=.forge; rm -rf $D", True),
        ("sudo busybox sh -c 'rm -rf .forge'", True),
        ("toybox mv .forge elsewhere", True),
        ("busybox cat .forge/behaviors.yaml", False),
        ("parallel rm -rf ::: build", False),
    ],
)
def test_governance_changes_through_the_model(tmp_path: Path, command: str, changed: bool) -> None:
    from forge_policy.facts.governance import changes
    from forge_policy.model import Event

    (tmp_path / ".forge").mkdir()
    event = Event(
        "PreToolUse", "s", tool_name="Bash", tool_input={"command": command}, cwd=str(tmp_path)
    )
    assert bool(changes(event, {})) is changed


def test_shell_commands_also_lists_the_programs_reached_through_another() -> None:
    from forge_policy.facts.commands import provide_shell_commands
    from forge_policy.model import Event

    def lines(command: str) -> list[str]:
        event = Event("PreToolUse", "s", tool_name="Bash", tool_input={"command": command})
        return provide_shell_commands(event)

    assert sorted(lines("echo / | xargs rm -rf")) == sorted(
        [
            "echo /",
            "xargs rm -rf",
            "echo / | xargs rm -rf",
            "rm -r -f /",
        ]
    )  # fmt: skip (the order: each program is listed where the model reaches it)
    assert "rm -r -f x" in lines("busybox rm -rf x")
    assert lines("rm -rf x") == ["rm -rf x"]  # as written, as before


def test_xargs_input_is_followed_up_to_a_cap_then_the_fact_is_incomplete() -> None:
    from forge_policy.commands.execution import MAX_ITEMS
    from forge_policy.facts import FactRegistry, undetermined
    from forge_policy.model import Event

    def executed(command: str) -> object:
        event = Event("PreToolUse", "s", tool_name="Bash", tool_input={"command": command})
        return FactRegistry.with_builtins()["executed_commands"].evaluate(event)[0]

    items = " ".join(f"d{n}" for n in range(MAX_ITEMS))
    value = executed(f"printf '%s\\n' {items} / | xargs -I{{}} rm -rf {{}}")
    assert "rm -r -f d0" in value and "rm -r -f /" not in value  # type: ignore[operator]
    assert "input items" in (undetermined(value) or "")  # so a blocking rule fails closed
    assert undetermined(executed(f"echo {items} {items} | xargs rm")) is None  # repeats: one
