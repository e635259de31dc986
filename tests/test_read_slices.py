"""token-budget's estimate of a Read: the lines it returns, not the whole file (issue 11)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import forge_policy as fp
from forge_policy.facts import files
from forge_policy.facts.files import READ_DEFAULT_LIMIT, read_slice_bytes
from forge_policy.model import Event

LINE = b"0123456789abcdef\n"  # 17 bytes


def numbered(folder: Path, name: str, lines: int, last_newline: bool = True) -> str:
    data = LINE * lines
    path = folder / name
    path.write_bytes(data if last_newline else data[:-1])
    return str(path)


def read(path: str, **extra: Any) -> Event:
    tool_input = {"file_path": path, **extra}
    return Event("PreToolUse", "s1", tool_name="Read", tool_input=tool_input, cwd="/")


def fact(name: str, event: Event) -> Any:
    return fp.FactRegistry.with_builtins()[name](event)


@pytest.mark.parametrize(
    ("lines", "extra", "expected_lines"),
    [
        (100, {}, 100),
        (100, {"offset": 1, "limit": 10}, 10),
        (100, {"offset": 0, "limit": 10}, 10),  # 0 and 1 both start at line 1
        (100, {"offset": 91, "limit": 50}, 10),  # cut by the end of the file
        (100, {"offset": 200, "limit": 5}, 0),  # past the end: nothing
        (100, {"offset": "11", "limit": "5"}, 5),  # numeric strings, as Claude Code coerces
        (100, {"offset": True, "limit": -3}, 100),  # not line counts: the defaults
        (5000, {}, READ_DEFAULT_LIMIT),  # no limit: Read returns its first 2,000 lines
        (5000, {"offset": 4001}, 1000),
    ],
)
def test_the_slice_a_read_returns(
    tmp_path: Path, lines: int, extra: dict[str, Any], expected_lines: int
) -> None:
    event = read(numbered(tmp_path, "m.py", lines), **extra)
    assert fact("file_bytes", event) == expected_lines * len(LINE)
    assert fact("estimated_tokens", event) == (expected_lines * len(LINE) + 2) // 4


def test_a_last_line_without_newline_and_crlf_count(tmp_path: Path) -> None:
    path = numbered(tmp_path, "a.txt", 3, last_newline=False)
    assert read_slice_bytes(path, 3, 1, 0) == len(LINE) - 1
    crlf = tmp_path / "w.txt"
    crlf.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    assert read_slice_bytes(str(crlf), 2, 1, 0) == len(b"two\r\n")


@pytest.mark.parametrize("name", ["shot.png", "paper.pdf", "nb.ipynb"])
def test_images_pdfs_and_notebooks_count_whole(tmp_path: Path, name: str) -> None:
    path = numbered(tmp_path, name, 3000)
    assert fact("file_bytes", read(path, limit=10)) == 3000 * len(LINE)


def test_other_tools_and_commands_still_count_whole_files(tmp_path: Path) -> None:
    path = numbered(tmp_path, "m.py", 3000)
    bash = Event("PreToolUse", "s1", tool_name="Bash", tool_input={"command": f"cat {path}"})
    grep = Event("PreToolUse", "s1", tool_name="Grep", tool_input={"pattern": "x", "path": path})
    assert fact("file_bytes", bash) == fact("file_bytes", grep) == 3000 * len(LINE)


def test_a_slice_too_far_to_scan_is_over_estimated_never_under(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = numbered(tmp_path, "big.log", 10_000)
    size = 10_000 * len(LINE)
    monkeypatch.setattr(files, "_SLICE_SCAN_LIMIT", 1024)
    monkeypatch.setattr(files, "_CHUNK", 256)
    for offset, limit in ((9_000, 10), (1, 5_000), (1, 10)):
        exact = min(limit, 10_001 - offset) * len(LINE)
        estimate = read_slice_bytes(path, offset, limit, size)
        assert exact <= estimate <= size


def test_an_unreadable_file_counts_its_size(tmp_path: Path) -> None:
    assert read_slice_bytes(str(tmp_path / "gone.py"), 1, 10, 123) == 123


# --- head and tail: what the token-budget hint itself suggests -----------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "head -n 50 m.log", "head -50 m.log", "head m.log", "head -c 100 m.log",
        "tail -n 7 m.log", "tail -7 m.log", "tail --lines=300 m.log", "tail -n +2990 m.log",
        "tail -c 64 m.log", "tail -c +51000 m.log", "head -n 5 m*.log",
    ],
)  # fmt: skip
def test_head_and_tail_count_what_they_print(tmp_path: Path, command: str) -> None:
    import subprocess

    numbered(tmp_path, "m.log", 3000, last_newline=False)
    printed = subprocess.run(command, shell=True, cwd=tmp_path, capture_output=True, check=True)
    event = Event("PreToolUse", "s1", tool_name="Bash", tool_input={"command": command},
                  cwd=str(tmp_path))  # fmt: skip
    if "*" in command:  # a wildcard operand: not sliced, counted whole
        assert fact("file_bytes", event) == 3000 * len(LINE) - 1
    else:
        assert fact("file_bytes", event) == len(printed.stdout)


@pytest.mark.parametrize(
    "command", ["tail -f m.log", "cat m.log | head -n 5", "head -n 5 m.log; grep x m.log"]
)
def test_a_file_another_reader_reads_counts_whole(tmp_path: Path, command: str) -> None:
    numbered(tmp_path, "m.log", 3000)
    event = Event("PreToolUse", "s1", tool_name="Bash", tool_input={"command": command},
                  cwd=str(tmp_path))  # fmt: skip
    assert fact("file_bytes", event) == 3000 * len(LINE)


@settings(max_examples=200, deadline=None)
@given(
    text=st.text(alphabet="ab\n", max_size=80),
    offset=st.integers(0, 40),
    limit=st.integers(1, 40),
    chunk=st.sampled_from([1, 2, 5, 64]),
)
def test_slices_match_splitlines_whatever_the_chunk_size(
    tmp_path_factory: pytest.TempPathFactory, text: str, offset: int, limit: int, chunk: int
) -> None:
    path = tmp_path_factory.mktemp("slice") / "f.txt"
    data = text.encode()
    path.write_bytes(data)
    lines = data.splitlines(keepends=True)
    skip = max(offset - 1, 0)
    original = files._CHUNK
    files._CHUNK = chunk  # the chunk boundaries must not matter
    try:
        assert read_slice_bytes(str(path), offset, limit, len(data)) == sum(
            map(len, lines[skip : skip + limit])
        )
        assert files._tail_bytes(str(path), limit, len(data)) == sum(map(len, lines[-limit:]))
        # the same slice of the bytes a secret scan already read (no file read then)
        assert read_slice_bytes("/nonexistent", offset, limit, 0, data) == sum(
            map(len, lines[skip : skip + limit])
        )
    finally:
        files._CHUNK = original


def test_a_read_the_secret_scan_read_is_measured_from_the_same_bytes(tmp_path: Path) -> None:
    """One event reads a Read's file once: the slice is measured from the bytes the secret scan
    read (the file gone since changes nothing), as a read of the file alone measures it."""
    from forge_policy.engine.inputs import FactCache

    path = numbered(tmp_path, "m.py", 5000)
    event = read(path, offset=4001)
    alone = fact("file_bytes", read(path, offset=4001))
    facts = FactCache(event, fp.FactRegistry.with_builtins())
    assert facts("secret_in_files") == ""
    Path(path).unlink()
    assert facts("file_bytes") == alone == 1000 * len(LINE)
