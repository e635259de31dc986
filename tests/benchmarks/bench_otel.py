"""The cost of OpenTelemetry export on the warm path: the hook command ``init`` writes, answered by
a warm worker with ``FORGE_OTEL`` off and on, side by side in one run.

Two projects, identical but for ``FORGE_OTEL``: ``off`` (no telemetry), ``on`` (the worker
exports every decision's span and the metrics over OTLP/HTTP to a local receiver started here,
``tests/otlp_receiver.py``, which decodes each request; batched by the SDK as configured by
default: spans every 5 s or per 512, metrics every 60 s, here every 1 s so that exports happen
during the run). Every sample is a fresh client process (``python -I -S …/launch.py``) with one
Claude Code payload of a fresh session; the two modes run interleaved so that noise hits them
alike. Figures: median and p90 wall time per event kind and mode, and on/off.

Then what the worker's request thread pays per decision, without process noise: ``evaluate()`` of
the built-in catalog in this process with no observer and with the worker's
:class:`~forge_policy.telemetry.recorder.Recorder` (the SDK's batch span processor and periodic
metric reader, exporting to the receiver), in alternating blocks, best block of each.

Then ``python -X importtime`` of the in-process hook (``forge-policy hook``, ``FORGE_WORKER=off``)
with ``FORGE_OTEL`` unset and with ``FORGE_OTEL=hook``: the OpenTelemetry modules each imports
(none when off) and the import time they add.

Usage: ``python tests/benchmarks/bench_otel.py [--runs 40] [--json]``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from benchjson import emit, ratio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the receiver
from otlp_receiver import Receiver

KINDS = ("allow", "hard_block")


def payload(kind: str, cwd: str) -> bytes:
    session = str(uuid.uuid4())
    tool, tool_input = {
        "allow": ("Read", {"file_path": f"{cwd}/src/app.py"}),
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


def project(base: Path, name: str, extra: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    folder = base / name
    folder.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FORGE_", "OTEL_"))}
    env.update(CLAUDE_PROJECT_DIR=str(folder), XDG_CACHE_HOME=str(base / "xdg"), **extra)
    python = Path(sys.executable)
    script = python.with_name("forge-policy")
    subprocess.run([str(script), "init"], cwd=folder, env=env, check=True, capture_output=True)
    (folder / ".forge" / "config.yaml").write_text("floor: off\n")
    settings = json.loads((folder / ".claude" / "settings.json").read_text())
    handler = settings["hooks"]["PreToolUse"][0]["hooks"][0]
    # the launcher init commits, in exec form (command and args, spawned without a shell):
    # ${CLAUDE_PROJECT_DIR}/.forge/bin/forge-policy-hook, placeholder substituted
    words = [handler["command"], *handler["args"]]
    return env, [part.replace("${CLAUDE_PROJECT_DIR}", str(folder)) for part in words]


def timed(command: list[str], data: bytes, env: dict[str, str]) -> tuple[float, bytes]:
    start = time.perf_counter()
    result = subprocess.run(
        command, input=data, capture_output=True, env=env, cwd=env["CLAUDE_PROJECT_DIR"], check=True
    )
    return time.perf_counter() - start, result.stdout


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def imports(env: dict[str, str]) -> tuple[list[str], float, float]:
    """The OpenTelemetry modules an in-process hook call imports, their cumulative import time
    and the whole hook's (ms; ``-X importtime``)."""
    script = Path(sys.executable).with_name("forge-policy")
    data = payload("hard_block", env["CLAUDE_PROJECT_DIR"])
    result = subprocess.run(
        [sys.executable, "-X", "importtime", str(script), "hook"],
        input=data,
        capture_output=True,
        env={**env, "FORGE_WORKER": "off"},
        cwd=env["CLAUDE_PROJECT_DIR"],
        check=True,
    )
    otel: list[str] = []
    otel_us = total_us = 0
    for line in result.stderr.decode().splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _, cumulative, raw = line[len("import time:") :].split("|")
        name = raw.strip()
        top = len(raw) - len(raw.lstrip()) == 1  # not imported by another module's import
        if name.startswith("opentelemetry"):
            otel.append(name)
            otel_us += int(cumulative) if top else 0
        total_us += int(cumulative) if top else 0
    return otel, otel_us / 1000, total_us / 1000


def per_decision(endpoint: str, events: int = 2000, blocks: int = 7) -> dict[str, dict[str, float]]:
    """Microseconds per ``evaluate()`` by kind, without and with the worker's recorder."""
    import forge_policy as fp
    from forge_policy.telemetry.export import Exporting

    os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] = endpoint
    exporting = Exporting("worker", os.environ, timeout=2.0)
    catalog = fp.builtin_catalog()
    plain = fp.Evaluator(catalog, clock=lambda: 1000.0)
    observed = fp.Evaluator(catalog, clock=lambda: 1000.0, observers=[exporting.recorder])
    # off: no observer; answer: what the answer waits for (the worker's recorder only notes the
    # decision); total: that and the recording the worker does once the answer is written
    modes = {"off": (plain, False), "answer": (observed, False), "total": (observed, True)}
    inputs = {
        "allow": ("Read", {"file_path": "/p/src/app.py"}),
        "hard_block": ("Bash", {"command": "git push --force origin main"}),
    }
    best: dict[str, dict[str, float]] = {mode: {} for mode in modes}
    for kind, (tool, tool_input) in inputs.items():
        for _ in range(blocks):
            for mode, (evaluator, answered) in modes.items():
                batch = [
                    fp.Event("PreToolUse", f"s{i}", tool_name=tool, tool_input=tool_input)
                    for i in range(events)
                ]
                start = time.perf_counter()
                for event in batch:
                    evaluator.evaluate(event)
                    if answered:
                        exporting.answered(0.001)
                micros = (time.perf_counter() - start) / events * 1e6
                best[mode][kind] = min(best[mode].get(kind, micros), micros)
                exporting.answered(0.001)  # the "answer" block's notes: recorded, untimed
    exporting.close(5.0)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="bench-otel-"))
    with Receiver() as receiver:
        fast = {"OTEL_METRIC_EXPORT_INTERVAL": "1000"}
        modes = {
            "off": project(base, "off", {}),
            "on": project(base, "on", {"FORGE_OTEL": "on", **fast,
                                       "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint}),
        }  # fmt: skip
        for env, command in modes.values():  # start each worker, then warm it
            for _ in range(6):
                timed(command, payload("allow", env["CLAUDE_PROJECT_DIR"]), env)
                time.sleep(0.05)
        samples: dict[tuple[str, str], list[float]] = {
            (mode, kind): [] for mode in modes for kind in KINDS
        }
        sent: set[str] = set()  # the tool_use_ids of the timed calls with export on
        for _ in range(args.runs):
            for kind in KINDS:
                for mode, (env, command) in modes.items():
                    data = payload(kind, env["CLAUDE_PROJECT_DIR"])
                    seconds, out = timed(command, data, env)
                    assert (b"deny" in out) == (kind == "hard_block"), out
                    samples[mode, kind].append(seconds)
                    if mode == "on":
                        sent.add(json.loads(data)["tool_use_id"])

        def received() -> int:
            return sum(s[1].get("gen_ai.tool.call.id") in sent for s in receiver.spans())

        receiver.wait(lambda: received() == len(sent), 15)
        exported = received()
        for env, _ in modes.values():
            subprocess.run(
                [str(Path(sys.executable).with_name("forge-policy")), "worker", "stop"],
                env=env, cwd=env["CLAUDE_PROJECT_DIR"], capture_output=True, check=False,
            )  # fmt: skip
        in_process = per_decision(receiver.endpoint)
    off_imports = imports(modes["off"][0])
    hook_imports = imports({**modes["off"][0], "FORGE_OTEL": "hook",
                            "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"})  # fmt: skip
    load = os.getloadavg()[0]
    machine = (
        f"{platform.python_implementation()} {platform.python_version()}, {platform.machine()}"
    )
    medians = {key: statistics.median(values) for key, values in samples.items()}
    if args.json:
        emit(
            "bench_otel",
            figures={
                f"{mode}_{kind}_median_ms": round(medians[mode, kind] * 1000, 2)
                for mode, kind in medians
            }
            | {"spans_exported": exported, "otel_modules_when_off": len(off_imports[0])}
            | {
                f"evaluate_{mode}_{kind}_us": round(in_process[mode][kind], 1)
                for mode in in_process
                for kind in KINDS
            },
            ratios={
                f"on_over_off_{kind}": ratio(
                    medians["on", kind] / medians["off", kind],
                    "lower",
                    f"warm hook wall median, OTel export on / off, {kind}",
                )
                for kind in KINDS
            },
            notes=[f"load average {load:.1f}"],
        )
        return
    print(f"{machine}, {os.cpu_count()} cores, load average {load:.1f}; {args.runs} runs per cell")
    print("| event | off median | off p90 | on median | on p90 | on / off (median) |")
    print("|---|---|---|---|---|---|")
    for kind in KINDS:
        off, on = samples["off", kind], samples["on", kind]
        print(
            f"| {kind} | {medians['off', kind] * 1000:.1f} ms | {pct(off, 0.9) * 1000:.1f} ms | "
            f"{medians['on', kind] * 1000:.1f} ms | {pct(on, 0.9) * 1000:.1f} ms | "
            f"{medians['on', kind] / medians['off', kind]:.3f}x |"
        )
    print(f"spans of the timed calls the receiver decoded: {exported} of {args.runs * len(KINDS)}")
    print()
    print(
        "| evaluate() in one process | off | on: before the answer | ratio "
        "| on: with the recording after it | ratio |"
    )
    print("|---|---|---|---|---|---|")
    for kind in KINDS:
        off, answer, total = (in_process[mode][kind] for mode in ("off", "answer", "total"))
        print(
            f"| {kind} | {off:.1f} us | {answer:.1f} us | {answer / off:.3f}x "
            f"| {total:.1f} us | {total / off:.3f}x |"
        )
    print()
    for label, (names, otel_ms, total_ms) in (
        ("FORGE_OTEL unset", off_imports),
        ("FORGE_OTEL=hook", hook_imports),
    ):
        print(
            f"in-process hook, {label}: {len(names)} opentelemetry modules, "
            f"{otel_ms:.1f} ms of {total_ms:.1f} ms top-level import time"
        )


if __name__ == "__main__":
    main()
