"""Files read through any reader (``facts.sensitive_file`` over the command model), both
directions: the program that reads may be reached through xargs, find -exec or busybox."""

from __future__ import annotations

from pathlib import Path

import pytest

from forge_policy.commands import reader_operands
from forge_policy.facts.files import provide_sensitive_file
from forge_policy.model import Event

READS = [
    ("awk '{print}' .env", "env_file"),
    ("gawk -F= '{print $2}' .env", "env_file"),
    ("sed -n 1p .env", "env_file"),
    ("grep -r KEY .env", "env_file"),
    ("tar -czf out.tgz .env", "env_file"),
    ("jq . secrets.json", "secrets_file"),
    ("sort .env | uniq", "env_file"),
    ("echo .env | xargs cat", "env_file"),
    ("find . -name x -o -name y -exec cat {} \\; ; busybox cat id_rsa", "private_key"),
    ("busybox head -n 3 .env", "env_file"),
    ("python3 -m json.tool secrets.json", "secrets_file"),
    ("cd sub && cat ../.env", "env_file"),
    # not read
    ("awk -f prog.awk notes.txt", ""),
    ("sed 's/.env/x/' notes.txt", ""),
    ("echo .env", ""),
    ("grep -e .env notes.txt", ""),
    ("ssh host cat .env", ""),  # the remote host's file
    ("python3 tool.py .env", ""),  # a script's operands are its own business
]


@pytest.mark.parametrize(("command", "expected"), READS)
def test_sensitive_file_through_readers(tmp_path: Path, command: str, expected: str) -> None:
    (tmp_path / "sub").mkdir()
    for name in (".env", "secrets.json", "id_rsa", "notes.txt", "prog.awk"):
        (tmp_path / name).write_text("x\n")
    event = Event(
        "PreToolUse", "s", tool_name="Bash", tool_input={"command": command}, cwd=str(tmp_path)
    )
    assert provide_sensitive_file(event) == expected


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["awk", "-v", "x=1", "{print}", "a", "b"], ["a", "b"]),
        (["sed", "-e", "s/a/b/", "f"], ["f"]),
        (["tar", "-x", "-f", "a.tar", "m"], ["a.tar", "m"]),
        (["openssl", "rsa", "-in", "key.pem"], ["key.pem"]),
        (["wc", "-l", "a"], ["a"]),
    ],
)
def test_reader_operands_of_filters(argv: list[str], expected: list[str]) -> None:
    assert reader_operands(argv) == expected
