"""Wall time of the hook command ``forge-policy init`` writes, worker warm and cold, next to a bare
interpreter start of the same venv.

The PreToolUse entry is read back from the ``.claude/settings.json`` that ``init`` writes in a
temporary project (the committed launcher, :mod:`forge_policy.ops.launcher`) and run as Claude
Code runs an entry of its form (:func:`as_claude_code`): the exec form (``"command":
"${CLAUDE_PROJECT_DIR}/.forge/bin/forge-policy-hook", "args": [...]``) spawned directly, the
placeholder substituted, no shell; the shell form of older trees
(``"$CLAUDE_PROJECT_DIR"/.forge/bin/forge-policy-hook``) through ``/bin/sh -c COMMAND`` (Claude
Code runs the user's shell, bash or zsh, which starts slower still). ``CLAUDE_PROJECT_DIR`` set,
one Claude Code payload on stdin, a fresh process per sample. What the launcher runs (``python
-I -S …/forge_policy/worker/launch.py``, from the machine record ``init`` writes) is timed alone
too, so the launcher's own share shows:

- ``warm``: the full command, the worker of the project running (started by the warm-up calls);
- ``client``: what the launcher executes, alone (the worker warm): ``warm - client`` is what
  the launcher script (and, in the shell form, ``sh -c``) costs per call;
- ``cold``: the full command with ``FORGE_WORKER=off``: the client evaluates in-process;
- ``bare``: ``python -c pass`` with the same interpreter (the floor the older figures used;
  it pays ``site`` and the venv's ``.pth`` files, so it varies from venv to venv);
- ``bare -I -S``: ``python -I -S -c pass``, the floor issue 28's target is set against (warm
  <= 1.3x: ``warm_*_over_bare_isolated``);
- ``sh -c bare -I -S``: ``/bin/sh -c 'python -I -S -c pass'``, what a harness pays for ANY
  shell-form hook command whose program is a bare interpreter start: ``warm`` over it
  (``warm_*_over_sh_bare_isolated``, no target of its own) is what forge_policy adds (the
  launcher script, the client's imports and work, the worker's answer), with the ``sh -c`` that
  no hook command avoids on both sides.

The commands run interleaved so that machine noise hits them alike; each median is divided by
bare's (targets: warm <= 1.3x ``python -I -S -c pass``, cold <= 5x ``python -c pass``). Then 16
clients are started at once, several rounds, and the median and p99 of their wall times are given
for each mode: Claude Code runs hooks in parallel. The built-in catalog, the durable file store
and a fresh session per sample are used:

- ``allow``: a ``Read`` no behavior objects to;
- ``nudge``: a ``Write`` with no search first;
- ``soft_block``: ``npm install left-pad`` (asks the user: a soft block with a ``user`` override);
- ``hard_block``: ``git push --force`` (a block record appended to the audit log, fsynced);
- ``allow_ongoing``: the ``Read`` of ``allow`` in an ongoing session (one session id per install
  for every sample, as an agent's later calls are: the call users make most). The other rows pay
  a new session's start on every sample (its state created, the audit log looked up for records
  of it); this one does not. With ``--fresh-state`` an untimed call restores its session after
  each deletion, so its samples stay calls of an ongoing session.

``--tree DIR`` (repeatable) measures the source tree ``DIR`` (a checkout's or ``git archive``'s
folder holding ``forge_policy/``) instead of the installed package, each in its own project with
its own worker, interleaved with the others in the same run: ``init`` runs with ``PYTHONPATH=DIR``,
so the record names ``DIR``'s client, which loads the engine from its own tree. Before/after in
one run: ``--tree /tmp/before --tree .``.

Usage: ``python tests/benchmarks/worker_latency.py [--runs 40] [--rounds 10] [--python PY]
[--tree DIR ...] [--fresh-state] [--json]`` (``--json``: the figures and the ratios run_all.py
compares, see benchjson.py; with several trees, the first one's under the usual names and the
others' prefixed ``treeN_``) (benchmark a non-editable install: ``python3 -m venv /tmp/v &&
/tmp/v/bin/pip install -q .``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from benchjson import emit, ratio  # this folder's shared --json format

#: The ``allow`` Read again, in one ongoing session (:meth:`Install.payload`).
ONGOING = "allow_ongoing"
#: The rows; the parallel rounds mix the first four (``KINDS[i % 4]``), each in a new session.
KINDS = ("allow", "nudge", "soft_block", "hard_block", ONGOING)


def payload(kind: str, cwd: str, session: str | None = None) -> bytes:
    """A Claude Code ``PreToolUse`` payload of ``kind``, in ``session`` (default: a new one)."""
    session = session or str(uuid.uuid4())
    tool, tool_input = {
        "allow": ("Read", {"file_path": f"{cwd}/src/app.py"}),
        ONGOING: ("Read", {"file_path": f"{cwd}/src/app.py"}),
        "nudge": ("Write", {"file_path": f"{cwd}/src/new.py", "content": "X = 1\n"}),
        "soft_block": ("Bash", {"command": "npm install left-pad"}),
        "hard_block": ("Bash", {"command": "git push --force origin main"}),
    }[kind]
    return json.dumps(
        {
            "session_id": session,
            "transcript_path": f"/home/u/.claude/projects/p/{session}.jsonl",
            "cwd": cwd,
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": tool,
            "tool_input": tool_input,
            "tool_use_id": f"toolu_{uuid.uuid4().hex[:24]}",
        }
    ).encode()


def timed(command: list[str], data: bytes, env: dict[str, str]) -> tuple[float, bytes, bytes]:
    start = time.perf_counter()
    result = subprocess.run(
        command, input=data, capture_output=True, env=env, cwd=env["CLAUDE_PROJECT_DIR"], check=True
    )
    return time.perf_counter() - start, result.stdout, result.stderr


def cpu_of(command: list[str], data: bytes, env: dict[str, str]) -> float:
    """User + system CPU seconds of one child (the worker's share is not in it)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    timed(command, data, env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def as_claude_code(handler: dict[str, object], project: Path) -> list[str]:
    """What Claude Code spawns for the command hook ``handler``: an exec-form entry (``args``)
    as ``[command, *args]`` with ``${CLAUDE_PROJECT_DIR}`` substituted, no shell; a shell-form
    one as ``/bin/sh -c COMMAND``."""
    args = handler.get("args")
    if not isinstance(args, list):
        return ["/bin/sh", "-c", str(handler["command"])]
    words = [str(handler["command"]), *map(str, args)]
    return [w.replace("${CLAUDE_PROJECT_DIR}", str(project)) for w in words]


def written_command(
    python: str, project: Path, env: dict[str, str]
) -> tuple[str, list[str], list[str]]:
    """Run ``forge-policy init``; return the PreToolUse entry it wrote (as a line: the command,
    then any ``args``), what Claude Code spawns for it (:func:`as_claude_code`) and what the
    launcher runs on this machine (``python -I -S …/launch.py`` from the record; [] when the
    record names no client)."""
    script = Path(python).with_name("forge-policy")
    cli = [str(script)] if script.exists() else [python, "-m", "forge_policy.cli"]
    subprocess.run([*cli, "init"], cwd=project, env=env, check=True, capture_output=True)
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    handler: dict[str, object] = settings["hooks"]["PreToolUse"][0]["hooks"][0]
    args = handler.get("args")
    shown = " ".join([str(handler["command"]), *(map(str, args) if isinstance(args, list) else ())])
    lines = (project / ".forge" / "runtime" / "hook-client").read_text().splitlines()
    client = [lines[0], "-I", "-S", lines[1]] if len(lines) == 2 else []
    return shown, as_claude_code(handler, project), client


def stop_worker(root: Path) -> None:
    for pid_file in (root / "runtime" / "worker").glob("*/worker.pid"):
        pid = int(pid_file.read_text())
        os.kill(pid, 15)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.02)


class Install:
    """One install (or source tree) under test: its project, environments and commands."""

    def __init__(self, label: str, tree: str | None, python: str, tmp: Path) -> None:
        self.label = label
        self.tree = tree
        self.project = tmp / label / "project"
        (self.project / "src").mkdir(parents=True)
        (self.project / "src" / "app.py").write_text("print('hi')\n")
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("FORGE_", "DISABLE_"))
            and k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")
        }
        env.update(CLAUDE_PROJECT_DIR=str(self.project), XDG_CACHE_HOME=str(tmp / "cache"))
        init_env = {**env, "PYTHONPATH": tree} if tree else env
        # as Claude Code runs the entry: exec form spawned directly, shell form through `sh -c`
        self.command, self.full, self.client = written_command(python, self.project, init_env)
        self.env = env
        self.cold_env = {**env, "FORGE_WORKER": "off"}
        self.samples: dict[str, list[float]] = {}
        self.cpu: dict[str, list[float]] = {"warm": [], "client": [], "cold": []}
        self.parallel: dict[str, list[float]] = {"warm": [], "cold": []}
        self.answers: dict[str, tuple[bytes, bytes, bytes]] = {}
        self.session = str(uuid.uuid4())  # the ongoing one (ONGOING)

    def payload(self, kind: str) -> bytes:
        return payload(kind, str(self.project), self.session if kind == ONGOING else None)

    def modes(self) -> dict[str, tuple[list[str], dict[str, str]]]:
        found = {"warm": (self.full, self.env), "cold": (self.full, self.cold_env)}
        if self.client:
            found["client"] = (self.client, self.env)
        return found

    def add(self, name: str, seconds: float) -> None:
        self.samples.setdefault(name, []).append(seconds)

    def median(self, name: str) -> float:
        return statistics.median(self.samples[name])


def report_json(
    args: argparse.Namespace,
    python: str,
    where: str,
    load: str,
    floors: dict[str, list[float]],
    installs: list[Install],
) -> None:
    base = statistics.median(floors["bare"])
    isolated = statistics.median(floors["bare -I -S"])
    sh_isolated = statistics.median(floors["sh bare -I -S"])
    figures: dict[str, float] = {"bare-ms": base * 1000, "bare-isolated-ms": isolated * 1000}
    figures["sh-bare-isolated-ms"] = sh_isolated * 1000
    compared: dict[str, dict[str, object]] = {}
    target = {"warm": "1.3x", "cold": "5x"}
    differing: list[str] = []
    for index, install in enumerate(installs):
        pre = "" if index == 0 else f"tree{index}_"
        for kind in KINDS:
            for mode in ("warm", "client", "cold"):
                if f"{mode} {kind}" not in install.samples:
                    continue
                median = install.median(f"{mode} {kind}")
                figures[f"{pre}{mode}-{kind}-ms"] = median * 1000
                if mode == "warm" or (mode == "cold" and kind == "allow"):
                    compared[f"{pre}{mode}_{kind}_over_bare"] = ratio(
                        median / base,
                        "lower",
                        f"wall median of the hook entry init writes (launcher, client), "
                        f"worker {mode}, {kind}, over `python -c pass` (issue 9: {mode} <= "
                        f"{target[mode]})",
                    )
                if mode in ("warm", "client"):
                    what = "the hook command init writes" if mode == "warm" else "the client alone"
                    compared[f"{pre}{mode}_{kind}_over_bare_isolated"] = ratio(
                        median / isolated,
                        "lower",
                        f"wall median of {what}, worker warm, {kind}, over `python -I -S -c pass` "
                        "(issue 28: warm <= 1.3x)",
                        target=1.3 if mode == "warm" else None,
                    )
                if mode == "warm":
                    compared[f"{pre}warm_{kind}_over_sh_bare_isolated"] = ratio(
                        median / sh_isolated,
                        "lower",
                        f"wall median of the hook command init writes, worker warm, {kind}, over "
                        "`sh -c 'python -I -S -c pass'` (the sh -c any hook command pays on both "
                        "sides: what forge_policy adds; no target of its own)",
                    )
            if f"client {kind}" in install.samples:
                figures[f"{pre}launcher-{kind}-ms"] = (
                    install.median(f"warm {kind}") - install.median(f"client {kind}")
                ) * 1000
        bare_cpu = statistics.median(floors["cpu bare"])
        for mode, values in install.cpu.items():
            figures[f"{pre}cpu-{mode}-allow-ms"] = statistics.median(values) * 1000
        compared[f"{pre}warm_cpu_over_bare"] = ratio(
            statistics.median(install.cpu["warm"]) / bare_cpu,
            "lower",
            "CPU of the hook command's processes on allow, worker warm, over `python -c pass`",
        )
        compared[f"{pre}warm_cpu_over_bare_isolated"] = ratio(
            statistics.median(install.cpu["warm"]) / statistics.median(floors["cpu bare -I -S"]),
            "lower",
            "CPU of the hook entry's processes (launcher, client; not the worker's) on "
            "allow, worker warm, over `python -I -S -c pass`: steadier than wall time under load",
        )
        compared[f"{pre}warm_cpu_over_sh_bare_isolated"] = ratio(
            statistics.median(install.cpu["warm"]) / statistics.median(floors["cpu sh bare -I -S"]),
            "lower",
            "CPU of the hook command's processes on allow, worker warm, over that of "
            "`sh -c 'python -I -S -c pass'` (what forge_policy adds; no target of its own)",
        )
        bare_p99 = pct(floors["parallel bare"], 0.99)
        for mode, values in install.parallel.items():
            figures[f"{pre}parallel-{mode}-median-ms"] = statistics.median(values) * 1000
            figures[f"{pre}parallel-{mode}-p99-ms"] = pct(values, 0.99) * 1000
            figures[f"{pre}parallel-{mode}-p99-over-bare"] = pct(values, 0.99) / bare_p99
        compared[f"{pre}parallel_warm_median_over_bare"] = ratio(
            statistics.median(install.parallel["warm"])
            / statistics.median(floors["parallel bare"]),
            "lower",
            "16 parallel clients: warm median over bare median",
        )
        different = [kind for kind, (warm, cold, _) in install.answers.items() if warm != cold]
        differing += [f"{install.label}: {kind}" for kind in different]
        compared[f"{pre}warm_cold_answers_differing"] = ratio(
            len(different), "zero", "events whose warm and cold answers differ (must be 0)"
        )
    figures["parallel-bare-median-ms"] = statistics.median(floors["parallel bare"]) * 1000
    figures["parallel-bare-p99-ms"] = pct(floors["parallel bare"], 0.99) * 1000
    figures["cpu-bare-allow-ms"] = statistics.median(floors["cpu bare"]) * 1000
    figures["cpu-bare-isolated-ms"] = statistics.median(floors["cpu bare -I -S"]) * 1000
    figures["cpu-sh-bare-isolated-ms"] = statistics.median(floors["cpu sh bare -I -S"]) * 1000
    emit(
        "worker_latency",
        figures,
        compared,
        python=python,
        forge_policy=where,
        hook_command=installs[0].command,
        client_command=" ".join(installs[0].client),
        trees=[install.tree for install in installs if install.tree],
        load_before=load,
        runs=args.runs,
        rounds=args.rounds,
        fresh_state=args.fresh_state,
        differing=differing,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=40, help="samples per command (default 40)")
    parser.add_argument("--rounds", type=int, default=10, help="rounds of 16 parallel clients")
    parser.add_argument("--python", default=sys.executable, help="interpreter of the venv to test")
    parser.add_argument(
        "--tree",
        action="append",
        default=[],
        help="a source tree (the folder holding forge_policy/) to measure instead of the "
        "installed package; repeat to compare trees in one interleaved run",
    )
    parser.add_argument(
        "--fresh-state",
        action="store_true",
        help="delete state.json before each round: every sample is a new session, and the file "
        "store rewrites the whole file, so without this the last samples pay for hundreds of "
        "sessions (a real project has a few)",
    )
    parser.add_argument("--json", action="store_true", help="print figures and ratios as JSON")
    args = parser.parse_args()
    python = str(Path(args.python).absolute())
    trees = [str(Path(tree).resolve()) for tree in args.tree]
    where = subprocess.run(
        [python, "-c", "import forge_policy; print(forge_policy.__file__)"],
        capture_output=True,
        text=True,
        cwd=tempfile.gettempdir(),
        env={**os.environ, "PYTHONPATH": trees[0]} if trees else None,
    ).stdout.strip()
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    floors: dict[str, list[float]] = {"bare": [], "bare -I -S": [], "cpu bare": []}
    floors["cpu bare -I -S"] = []
    floors["sh bare -I -S"] = []  # the sh -c every shell-form hook command pays, and python
    floors["cpu sh bare -I -S"] = []
    floors["parallel bare"] = []
    with tempfile.TemporaryDirectory(prefix="forge-worker-bench-") as tmp:
        labels = [(f"tree{i}", tree) for i, tree in enumerate(trees)] or [("installed", None)]
        installs = [Install(label, tree, python, Path(tmp)) for label, tree in labels]
        env = installs[0].env
        bare = [python, "-c", "pass"]
        isolated = [python, "-I", "-S", "-c", "pass"]
        sh_isolated = ["/bin/sh", "-c", f"{shlex.quote(python)} -I -S -c pass"]
        try:
            for _ in range(5):  # warm-up: bytecode, catalog cache, state file, the worker
                for install in installs:
                    for kind in KINDS:
                        timed(install.full, install.payload(kind), install.env)
                        timed(install.full, install.payload(kind), install.cold_env)
                time.sleep(0.2)
            for install in installs:
                for kind in KINDS:
                    warm_out = timed(install.full, install.payload(kind), install.env)
                    cold_out = timed(install.full, install.payload(kind), install.cold_env)
                    install.answers[kind] = (warm_out[1], cold_out[1], warm_out[2])
            for _ in range(args.runs):
                if args.fresh_state:
                    for install in installs:
                        (install.project / ".forge" / "runtime" / "state.json").unlink(
                            missing_ok=True
                        )
                        # untimed: the ongoing session's state is back (rebuilt from its log)
                        timed(install.full, install.payload(ONGOING), install.env)
                floors["bare"].append(timed(bare, b"", env)[0])
                floors["bare -I -S"].append(timed(isolated, b"", env)[0])
                floors["sh bare -I -S"].append(timed(sh_isolated, b"", env)[0])
                for install in installs:
                    for kind in KINDS:
                        for mode, (command, mode_env) in install.modes().items():
                            seconds = timed(command, install.payload(kind), mode_env)[0]
                            install.add(f"{mode} {kind}", seconds)
            for _ in range(args.runs):
                floors["cpu bare"].append(cpu_of(bare, b"", env))
                floors["cpu bare -I -S"].append(cpu_of(isolated, b"", env))
                floors["cpu sh bare -I -S"].append(cpu_of(sh_isolated, b"", env))
                for install in installs:
                    for mode, (command, mode_env) in install.modes().items():
                        install.cpu[mode].append(
                            cpu_of(command, install.payload("allow"), mode_env)
                        )
            with ThreadPoolExecutor(16) as pool:
                for _ in range(args.rounds):
                    jobs = [(bare, b"", env)] * 16
                    floors["parallel bare"].extend(pool.map(lambda job: timed(*job)[0], jobs))
                    for install in installs:
                        for mode in ("warm", "cold"):
                            command, mode_env = install.modes()[mode]
                            jobs = [
                                (command, install.payload(KINDS[i % 4]), mode_env)
                                for i in range(16)
                            ]
                            install.parallel[mode].extend(
                                pool.map(lambda job: timed(*job)[0], jobs)
                            )
        finally:
            for install in installs:
                stop_worker(install.project / ".forge")

    if args.json:
        report_json(args, python, where, load, floors, installs)
        return
    base = statistics.median(floors["bare"])
    isolated_base = statistics.median(floors["bare -I -S"])
    sh_base = statistics.median(floors["sh bare -I -S"])
    print(f"machine: {os.cpu_count()} cores, {platform.machine()}, {platform.system()}")
    print(f"python: {python} ({platform.python_implementation()} {platform.python_version()})")
    print(f"forge_policy: {where}")
    print(f"load average before the run: {load}, after: {os.getloadavg()[0]:.2f}")
    fresh = ", state.json deleted before each round" if args.fresh_state else ""
    print(f"runs: {args.runs} per command, interleaved{fresh}")
    print(f"bare `python -c pass` {base * 1000:.1f} ms, `python -I -S -c pass` ", end="")
    print(f"{isolated_base * 1000:.1f} ms (the target's floor), ", end="")
    print("`sh -c 'python -I -S -c pass'` ", end="")
    print(f"{sh_base * 1000:.1f} ms (the sh -c any hook command pays, on both sides)")
    bare_cpu = statistics.median(floors["cpu bare"])
    isolated_cpu = statistics.median(floors["cpu bare -I -S"])
    sh_cpu = statistics.median(floors["cpu sh bare -I -S"])
    bare_p99 = pct(floors["parallel bare"], 0.99)
    for install in installs:
        print(f"\n## {install.label}: {install.tree or where}\n")
        form = "through `/bin/sh -c`" if install.full[:2] == ["/bin/sh", "-c"] else "no shell"
        print(
            f"hook entry (written by init, run as Claude Code runs it: {form}): {install.command}"
        )
        print(f"what the launcher runs (`client`): {' '.join(install.client) or '(no record)'}\n")
        print(
            "| event | warm | warm / bare -I -S | warm / sh -c bare -I -S | client "
            "| client / bare -I -S | sh + launcher | warm / bare | cold | cold / bare |"
        )
        print("|---|---|---|---|---|---|---|---|---|---|")
        for kind in KINDS:
            warm = install.median(f"warm {kind}")
            cold = install.median(f"cold {kind}")
            client = install.median(f"client {kind}") if install.client else float("nan")
            print(
                f"| {kind} | {warm * 1000:.1f} ms | {warm / isolated_base:.2f}x "
                f"| {warm / sh_base:.2f}x | {client * 1000:.1f} ms | {client / isolated_base:.2f}x "
                f"| {(warm - client) * 1000:.1f} ms | {warm / base:.2f}x "
                f"| {cold * 1000:.1f} ms | {cold / base:.2f}x |"
            )
        shares = [
            f"{mode} {statistics.median(v) * 1000:.1f} ms ({statistics.median(v) / bare_cpu:.2f}x"
            f" bare, {statistics.median(v) / isolated_cpu:.2f}x bare -I -S, "
            f"{statistics.median(v) / sh_cpu:.2f}x sh -c bare -I -S)"
            for mode, v in install.cpu.items()
        ]
        print(
            f"\nCPU (user + system) of the command's processes on allow, median: bare "
            f"{bare_cpu * 1000:.1f} ms, bare -I -S {isolated_cpu * 1000:.1f} ms, sh -c bare -I -S "
            f"{sh_cpu * 1000:.1f} ms; "
            f"{'; '.join(shares)}"
        )
        rounds = f"{args.rounds} rounds ({16 * args.rounds} samples per mode)"
        print(f"\n16 parallel clients, {rounds}:\n")
        print("| mode | median | p99 | p99 / bare p99 |")
        print("|---|---|---|---|")
        for mode, values in {"bare": floors["parallel bare"], **install.parallel}.items():
            p99 = pct(values, 0.99)
            print(
                f"| {mode} | {statistics.median(values) * 1000:.1f} ms | {p99 * 1000:.1f} ms "
                f"| {p99 / bare_p99:.2f}x |"
            )
        print()
        for kind, (warm_out, cold_out, warm_err) in install.answers.items():
            same = "identical" if warm_out == cold_out else "DIFFERENT"
            text = warm_out.decode().strip()
            shown = text[:70] + "…" if len(text) > 70 else text or "(empty)"
            print(f"{kind}: warm and cold answers {same}; {shown}")
            if warm_err:
                print(f"  warm stderr: {warm_err.decode().strip()}")


if __name__ == "__main__":
    main()
