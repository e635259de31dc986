"""``forge-policy replay`` over a 10,000-event transcript: the target is under 10 s.

Not collected by pytest. Run:

    .venv-test/bin/python tests/benchmarks/bench_replay.py [--events 10000] [--rounds 3] [--json]

It writes one Claude Code transcript (a single session: a prompt, then Read, Grep, Bash and Edit
calls each with its tool_result, and a Write, per turn; an uncredited Write or a ``git push
--force`` now and then, so behaviors count, escalate and block) of ``--events`` hook events, then
measures, best of ``--rounds``, side by side:

- reading it (``read_transcripts``);
- the events decided by a bare loop of ``Evaluator.evaluate`` over the same payloads (the
  engine's own cost, the floor);
- ``replay`` with the built-in catalog, and with ``--against`` a second catalog;
- the whole command as a user runs it: ``forge-policy replay FILE --json`` and, with
  ``--against`` and ``--html``, as a process (interpreter start and imports included).

Prints Markdown (paste it into RESULTS.md with the machine it ran on), or with ``--json`` the
document ``benchjson.py`` describes.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchjson import emit, ratio  # this folder's shared --json format

import forge_policy as fp
from forge_policy.ops.replay import replay
from forge_policy.ops.transcript import read_transcripts
from forge_policy.testing import FakeClock

TARGET = 10.0  # seconds, for the whole command on a 10,000-event transcript
FORGE = Path(sys.executable).parent / "forge-policy"


def write_transcript(path: Path, events: int) -> int:
    """A one-session transcript of ``events`` hook events (returns how many were written)."""
    session, start = "bench-session", 1_772_445_600.0
    lines: list[str] = []
    made = 0
    turn = 0

    def record(kind: str, content: object, when: float, **extra: object) -> None:
        lines.append(
            json.dumps(
                {
                    "type": kind,
                    "sessionId": session,
                    "uuid": f"u{len(lines)}",
                    "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(when))
                    + f".{int(when * 1000) % 1000:03d}Z",
                    "cwd": "/work/app",
                    "isSidechain": False,
                    "message": {"role": "assistant" if kind == "assistant" else "user"}
                    | {"content": content},
                    **extra,
                }
            )
        )

    while made < events:
        when = start + turn * 30.0
        record("user", f"turn {turn}: add the next helper", when)
        made += 1
        calls = [
            ("Read", {"file_path": f"/work/app/src/m{turn}.py"}),
            ("Grep", {"pattern": f"helper_{turn}", "path": "/work/app/src"}),
            ("Bash", {"command": "git push --force" if turn % 50 == 7 else f"pytest -q t{turn}"}),
            (
                "Edit",
                {"file_path": f"/work/app/src/m{turn}.py", "old_string": "a", "new_string": "b"},
            ),
        ]
        for i, (name, tool_input) in enumerate(calls):
            if made >= events:
                break
            tool_id = f"toolu_{turn}_{i}"
            block = {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}
            record("assistant", [block], when + 2 * i + 1)
            made += 1
            if made >= events:
                break
            result = {"type": "tool_result", "tool_use_id": tool_id, "content": "ok"}
            record("user", [result], when + 2 * i + 2, toolUseResult={"stdout": "ok"})
            made += 1
        if made < events:
            target = "/work/app/src" if turn % 3 else "/work/app/other"  # every 3rd uncredited
            block = {
                "type": "tool_use",
                "id": f"toolu_{turn}_w",
                "name": "Write",
                "input": {"file_path": f"{target}/new{turn}.py", "content": "x = 1\n"},
            }
            record("assistant", [block], when + 20)
            made += 1
        turn += 1
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return made


def _best(rounds: int, run: object) -> tuple[float, float]:
    """The best wall time of ``rounds`` runs, and the CPU time (this process's and its
    children's: the machine is shared, and CPU time is what the load does not inflate)."""
    assert callable(run)
    best = (float("inf"), float("inf"))
    for _ in range(rounds):
        before, start = _cpu(), time.perf_counter()
        run()
        wall, cpu = time.perf_counter() - start, _cpu() - before
        best = min(best, (wall, cpu))
    return best


def _cpu() -> float:
    import resource

    mine = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return mine.ru_utime + mine.ru_stime + children.ru_utime + children.ru_stime


def _bare_loop(payloads: list[tuple[dict[str, object], float]], catalog: fp.Catalog) -> None:
    clock = FakeClock(0.0)
    evaluator = fp.Evaluator(catalog, clock=clock)
    for payload, when in payloads:
        if when > clock.now:
            clock.advance(when - clock.now)
        evaluator.evaluate(fp.Event.from_claude_code(payload))


def _command(*args: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FORGE_")}
    with tempfile.TemporaryDirectory() as root:
        env["FORGE_ROOT"] = root
        subprocess.run(
            [str(FORGE), "replay", *args],
            check=True,
            stdout=subprocess.DEVNULL,
            env=env,
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    from forge_policy.catalog.loader import BUILTIN_DIR

    catalog = fp.builtin_catalog()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "long.jsonl"
        made = write_transcript(path, args.events)
        read = read_transcripts([str(path)])
        assert len(read.events) == made, (len(read.events), made)
        payloads = [(e.payload, e.timestamp) for e in read.events]
        result = replay(read.events, catalog)
        blocks = len(result.blocks())
        t_read = _best(args.rounds, lambda: read_transcripts([str(path)]))
        t_bare = _best(args.rounds, lambda: _bare_loop(payloads, catalog))
        t_one = _best(args.rounds, lambda: replay(read.events, catalog))
        t_two = _best(args.rounds, lambda: replay(read.events, catalog, against=catalog))
        t_cmd = _best(args.rounds, lambda: _command(str(path), "--json"))
        html = str(Path(folder) / "r.html")
        t_full = _best(
            args.rounds,
            lambda: _command(str(path), "--against", str(BUILTIN_DIR), "--html", html, "--json"),
        )
        html_kb = os.path.getsize(html) / 1024

    figures: dict[str, float] = {"events": made, "blocks": blocks, "html_kb": html_kb}
    measured = {
        "read": t_read,
        "bare_evaluate": t_bare,
        "replay": t_one,
        "replay_against": t_two,
        "command_json": t_cmd,
        "command_against_html": t_full,
    }
    for name, (wall, cpu) in measured.items():
        figures[f"{name}_s"], figures[f"{name}_cpu_s"] = wall, cpu
    load = os.getloadavg()[0]
    (t_read, _), (t_bare, _), (t_one, _), (t_two, _) = t_read, t_bare, t_one, t_two
    (t_cmd, c_cmd), (t_full, c_full) = t_cmd, t_full
    ratios = {
        "replay_over_bare": ratio(
            t_one / t_bare, "lower", "replay / a bare Evaluator.evaluate loop, same events"
        ),
        "against_over_single": ratio(
            t_two / t_one, "lower", "replay with --against / replay with one catalog"
        ),
    }
    if args.json:
        emit("bench_replay", figures, ratios)
        return 0
    per = 1e6 / made
    print(
        f"{made} events, one session; {blocks} would block; best of {args.rounds}; "
        f"load average {load:.1f} at the end\n"
    )
    print("| step | wall s | CPU s | µs/event (wall) |")
    print("|---|---|---|---|")
    names = {
        "read": "read_transcripts",
        "bare_evaluate": "bare Evaluator.evaluate loop",
        "replay": "replay, built-in catalog",
        "replay_against": "replay, --against (two catalogs)",
        "command_json": "`forge-policy replay FILE --json` (process)",
        "command_against_html": "`… --against DIR --html F --json` (process)",
    }
    for key, name in names.items():
        wall, cpu = measured[key]
        print(f"| {name} | {wall:.2f} | {cpu:.2f} | {wall * per:.0f} |")
    print(
        f"\nreplay / bare loop ×{t_one / t_bare:.2f}; --against / one ×{t_two / t_one:.2f}; "  # noqa: RUF001
        f"whole command {t_full:.2f} s wall ({c_full:.2f} s CPU) of the {TARGET:.0f} s target, "
        f"one catalog {t_cmd:.2f} s ({c_cmd:.2f} s CPU); HTML {html_kb:.0f} KiB"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
