"""The cold path: one in-process `forge-policy hook` (FORGE_WORKER=off) over `python -c pass`.

Where no worker runs (macOS before issue 28's port, ``FORGE_WORKER=off``, the call that starts the
worker) every tool call pays this. Issue 28's target: an allow and a hard block each within 4x of
``python -c pass`` in the same venv, deciding without cattrs or portalocker's package (its
``importlib.metadata``). Each install gets its own temporary project set up by
``forge-policy init --here --no-worker``, warmed up (catalog cache, bytecode), then one hyperfine
run times the bare interpreter and every install's allow and hard block side by side (without
hyperfine: interleaved ``subprocess`` runs, medians). The modules are those the hook process holds
beyond ``python -c pass``'s (``sys.modules``, which also sees the ``importlib.import_module``
imports that ``-X importtime`` never logs).

Usage: ``python tests/benchmarks/bench_cold_path.py [--python VENV/bin/python] [--before DIR]
[--runs 30] [--json] [--interleaved]``; ``--before`` is a source tree (``git archive REV
forge_policy | tar -x -C DIR``) run by the same interpreter through ``PYTHONPATH``, timed in the
same run.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from benchjson import emit, ratio

TARGET = 4.0
#: Never imported by the cold path's allow or hard block (tests/test_hook_e2e.py pins the same).
NEVER = (
    "cattrs", "portalocker", "importlib.metadata", "email", "redis", "ruamel", "argparse",
    "tempfile", "base64", "hashlib", "forge_policy.audit._more_records",
    "forge_policy.engine._more_effects", "forge_policy.config.last_good",
    "forge_policy.audit._report", "forge_policy.engine._flag_effects",
    "forge_policy.audit._floor_record", "forge_policy.config._layer_values", "datetime",
    "inspect", "platform", "attr.validators", "attrs.validators",
)  # fmt: skip
KINDS = ("allow", "hard_block")


def payload(kind: str, cwd: str) -> dict[str, object]:
    session = str(uuid.uuid4())
    tool, tool_input = {
        "allow": ("Read", {"file_path": f"{cwd}/src/app.py"}),
        "hard_block": ("Bash", {"command": "git push --force origin main"}),
    }[kind]
    return {
        "session_id": session,
        "transcript_path": f"/tmp/{session}.jsonl",
        "cwd": cwd,
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": "toolu_cold",
    }


def setup(python: str, folder: Path, pythonpath: str) -> dict[str, str]:
    """A project set up by ``forge-policy init``; the environment its hook runs with."""
    (folder / "src").mkdir(parents=True)
    (folder / "src" / "app.py").write_text("X = 1\n")
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FORGE_", "PYTHON", "CLAUDE"))}
    env.update(CLAUDE_PROJECT_DIR=str(folder), FORGE_WORKER="off")
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    init = [python, "-m", "forge_policy.cli", "init", "--here", "--no-worker"]
    subprocess.run(init, cwd=folder, env=env, check=True, capture_output=True)
    for kind in KINDS:
        (folder / f"{kind}.json").write_text(json.dumps(payload(kind, str(folder))))
    return env


def hook(python: str) -> list[str]:
    script = Path(python).with_name("forge-policy")
    return [str(script), "hook"] if script.exists() else [python, "-m", "forge_policy.cli", "hook"]


#: The hook in-process, then every module the process holds: ``sys.modules`` also counts what
#: ``-X importtime`` never logs (``importlib.import_module``'s imports: the fact registry's
#: providers, ``forge_policy.commands``' lazy names).
LOADED = """import sys
from forge_policy.hook import main
code = main(argv=[])
print(" ".join(sorted(sys.modules)), file=sys.stderr)
sys.exit(code)
"""


def imports(python: str, folder: Path, env: dict[str, str], kind: str) -> list[str]:
    """The modules one hook process loaded beyond those of ``python -c pass``."""
    data = (folder / f"{kind}.json").read_bytes()
    bare = subprocess.run(
        [python, "-c", "import sys; print(' '.join(sys.modules))"], env=env, cwd=folder,
        capture_output=True, check=True,
    )  # fmt: skip
    result = subprocess.run(
        [python, "-c", LOADED], input=data, env=env, cwd=folder, capture_output=True, check=True
    )
    lines = result.stderr.decode().splitlines()  # the module list is the last line
    return sorted(set(lines[-1].split() if lines else ()) - set(bare.stdout.decode().split()))


def with_hyperfine(commands: dict[str, str], runs: int) -> dict[str, tuple[float, float]]:
    """Median wall seconds and mean CPU seconds (user + system) of each shell command, from one
    hyperfine run."""
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        argv = ["hyperfine", "--warmup", "3", "--runs", str(runs), "--export-json", out.name]
        for name, command in commands.items():
            argv += ["-n", name, command]
        subprocess.run(argv, check=True, capture_output=True)
        results = json.loads(Path(out.name).read_text())["results"]
    return {r["command"]: (r["median"], r["user"] + r["system"]) for r in results}


def interleaved(commands: dict[str, str], runs: int) -> dict[str, tuple[float, float]]:
    samples: dict[str, list[float]] = {name: [] for name in commands}
    cpu: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, command in commands.items():
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            subprocess.run(command, shell=True, check=True, capture_output=True)
            samples[name].append(time.perf_counter() - start)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu[name].append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return {
        name: (statistics.median(samples[name]), statistics.mean(cpu[name])) for name in samples
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--python", default=sys.executable, help="interpreter of the venv to test")
    parser.add_argument("--before", default="", help="a forge_policy source tree to compare")
    parser.add_argument("--runs", type=int, default=30, help="samples per command (default 30)")
    parser.add_argument("--json", action="store_true", help="print figures and ratios as JSON")
    parser.add_argument(
        "--interleaved",
        action="store_true",
        help="time round-robin (one run of each command in turn) instead of hyperfine, which "
        "runs each command's samples together: fairer side by side on a shared, loaded machine",
    )
    args = parser.parse_args()
    python = os.path.abspath(args.python)
    installs = {"now": ""} | ({"before": str(Path(args.before).absolute())} if args.before else {})
    load = [round(x, 2) for x in os.getloadavg()]
    with tempfile.TemporaryDirectory(prefix="forge-cold-") as tmp:
        commands = {"bare": f"{python} -c pass"}
        imported: dict[str, list[str]] = {}
        for install, pythonpath in installs.items():
            folder = Path(tmp) / install
            env = setup(python, folder, pythonpath)
            prefix = " ".join(f"{k}={v}" for k, v in env.items() if k in ("CLAUDE_PROJECT_DIR",
                              "FORGE_WORKER", "PYTHONPATH"))  # fmt: skip
            for kind in KINDS:
                for _ in range(2):  # the first run compiles the catalog cache
                    imported[f"{install}_{kind}"] = imports(python, folder, env, kind)
                line = " ".join(hook(python))
                commands[f"{install}_{kind}"] = f"env {prefix} {line} < {folder}/{kind}.json"
            launcher = folder / ".forge" / "bin" / "forge-policy-hook"
            if install == "now" and launcher.exists():
                # what Claude Code runs: the committed launcher `init` writes (sh, then the
                # machine record's forge-policy), for the allow: its cost over the hook's
                commands["now_allow_launcher"] = f"env {prefix} {launcher} < {folder}/allow.json"
        use_hyperfine = shutil.which("hyperfine") and not args.interleaved
        timer = with_hyperfine if use_hyperfine else interleaved
        timed = timer(commands, args.runs)
    medians = {name: wall for name, (wall, _) in timed.items()}
    cpu = {name: used for name, (_, used) in timed.items()}
    bare = medians["bare"]
    forbidden = {
        name: sorted({m for m in modules if m.startswith(NEVER)})
        for name, modules in imported.items()
    }
    if args.json:
        figures = {f"{name}-median-ms": value * 1000 for name, value in medians.items()}
        figures |= {f"{name}-cpu-ms": value * 1000 for name, value in cpu.items()}
        figures |= {f"{name}-modules": len(modules) for name, modules in imported.items()}
        ratios = {
            f"{kind}_over_bare": ratio(
                medians[f"now_{kind}"] / bare,
                "lower",
                f"wall median of one in-process hook ({kind}) over `python -c pass`, "
                f"same venv, one run (target <= {TARGET:g})",
            )
            | {"target": TARGET}
            for kind in KINDS
        }
        ratios |= {
            f"{kind}_cpu_over_bare": ratio(
                cpu[f"now_{kind}"] / cpu["bare"],
                "lower",
                f"CPU (user + system) of one in-process hook ({kind}) over `python -c pass`",
            )
            for kind in KINDS
        }
        ratios["forbidden_imports"] = ratio(
            sum(len(forbidden[f"now_{kind}"]) for kind in KINDS),
            "zero",
            f"modules of {', '.join(NEVER)} on the cold allow and hard block (a count)",
        )
        emit("bench_cold_path", figures, ratios, timer=timer.__name__, load_before=load)
        return
    print(f"python: {python}; timer: {timer.__name__}; load average before: {load}")
    print("| command | wall median (ms) | / bare | CPU (ms) | / bare | modules | never imported |")
    print("|---|---|---|---|---|---|---|")
    for name, value in medians.items():
        modules = imported.get(name)
        found = forbidden.get(name, [])
        seen = ", ".join(sorted({next(n for n in NEVER if m.startswith(n)) for m in found}))
        count = len(modules) if modules is not None else ""
        used = f"{cpu[name] * 1000:.1f} | {cpu[name] / cpu['bare']:.2f}"
        row = f"| {name} | {value * 1000:.1f} | {value / bare:.2f} | {used} | {count} |"
        print(f"{row} {seen or ('none' if modules is not None else '')} |")


if __name__ == "__main__":
    main()
