"""The worker's share of a warm answer: one round trip over its socket, timed from a client in
this process, and the worker's own CPU per request (Linux: ``/proc/PID/stat``).

For each source tree (``--tree DIR``, repeatable; default: the installed package) a project is
set up as :mod:`worker_latency` sets it up (``forge-policy init``, the built-in catalog, the
durable file store), its worker is started by the hook command, then the trees are asked in
turn, interleaved, with the client's own exchange (:func:`forge_policy.worker.client.exchange`:
connect, peer check, request, answer):

- ``refused``: a request from another working directory, which the worker refuses after
  reading it: the transport, the peer check, the framing and the request thread, no evaluation;
- ``allow``: a Claude Code ``Read`` in a new session (the state file deleted every ten requests,
  as ``worker_latency --fresh-state`` does per round);
- ``hard_block``: ``git push --force`` in a new session (a block record appended, fsynced);
- ``allow_ongoing``: the ``Read`` of ``allow`` again and again in one ongoing session (begun by
  an untimed request first), as an agent's later calls are: the call users make most, with no
  new session's start (its state created, the audit log looked up for records of it).

The worker's CPU is its user + system time over all the requests of a kind divided by their
number: what the answer costs the machine beside the client, steadier than wall time on a
loaded machine. The client side is the same code for every tree (this checkout's), so only the
worker differs.

Back to back, the requests find the worker's data in the CPU caches. A hook call does not: the
worker sleeps while the client process starts (~7 ms), and its answer then costs some 1.5-2x as
much. ``--pause SECONDS`` (e.g. 0.01) waits that long before each request, so the figures are
those of a worker woken from cold caches, as the hook's are.

Usage: ``python tests/benchmarks/worker_roundtrip.py [--requests 300] [--pause S] [--tree DIR ...]
[--json]``
(``--json``: figures only, see benchjson.py; with several trees the first one's under the usual
names and the others' prefixed ``treeN_``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from benchjson import emit  # this folder's shared --json format
from worker_latency import ONGOING, Install, stop_worker, timed

KINDS = ("refused", "allow", "hard_block", ONGOING)


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` (all its threads, ended ones included)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Target:
    """One tree's project and worker, and how to ask it."""

    def __init__(self, install: Install) -> None:
        from forge_policy.worker import protocol

        self.install = install
        environ = {os.fsencode(k): os.fsencode(v) for k, v in install.env.items()}
        self.cwd = os.fsencode(install.project)
        self.relevant = protocol.relevant(environ)
        print_ = protocol.fingerprint(self.cwd, self.relevant)
        self.slot = protocol.slot_of(protocol.root_of(environ, self.cwd), print_)
        client = Path(install.client[-1]).with_name("client.py")
        self.identity = protocol.own_identity(os.fsencode(client))
        self.pid = int((Path(os.fsdecode(self.slot)) / "worker.pid").read_text())
        self.state = install.project / ".forge" / "runtime" / "state.json"
        self.wall: dict[str, list[float]] = {kind: [] for kind in KINDS}
        self.cpu: dict[str, float] = {}

    def request(self, kind: str, index: int) -> bytes:
        from forge_policy.worker import protocol

        cwd = self.cwd
        if kind == "refused":
            raw, cwd = b"{}", b"/elsewhere"
        else:
            if kind == "allow" and index % 10 == 0:
                self.state.unlink(missing_ok=True)
            raw = self.install.payload(kind)
        deadline = time.monotonic() + 5.0
        args = ["--harness", "claude-code"]
        return protocol.HookRequest(self.identity, deadline, cwd, args, raw, self.relevant).encode()

    def ask(self, kind: str, index: int) -> None:
        from forge_policy.worker import client

        request = self.request(kind, index)
        start = time.perf_counter()
        status, _, _, _ = client.exchange(self.slot, request, 5.0)
        self.wall[kind].append(time.perf_counter() - start)
        if status != (b"R" if kind == "refused" else b"A"):
            raise SystemExit(f"{self.install.label}: {kind} answered {status!r}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=300, help="requests per kind and tree")
    parser.add_argument("--tree", action="append", default=[], help="a source tree to measure")
    parser.add_argument(
        "--pause", type=float, default=0.0, help="seconds to wait before each request (cold)"
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    if not sys.platform.startswith("linux"):
        raise SystemExit("the worker's CPU is read from /proc: Linux only")
    trees = [str(Path(tree).resolve()) for tree in args.tree]
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    with tempfile.TemporaryDirectory(prefix="forge-worker-rtt-") as tmp:
        labels = [(f"tree{i}", tree) for i, tree in enumerate(trees)] or [("installed", None)]
        installs = [Install(label, tree, sys.executable, Path(tmp)) for label, tree in labels]
        try:
            for _ in range(3):  # the hook command starts each worker
                for install in installs:
                    timed(install.full, install.payload("allow"), install.env)
                time.sleep(0.3)
            targets = [Target(install) for install in installs]
            for kind in KINDS:
                count = args.requests * (3 if kind == "refused" else 1)
                if kind == ONGOING:  # the session begins here, untimed
                    for target in targets:
                        target.ask(kind, -1)
                        target.wall[kind].clear()
                before = {t.pid: cpu_seconds(t.pid) for t in targets}
                for index in range(count):
                    for target in targets:
                        if args.pause:  # the worker's caches go cold, as between hook calls
                            time.sleep(args.pause)
                        target.ask(kind, index)
                for target in targets:
                    target.cpu[kind] = (cpu_seconds(target.pid) - before[target.pid]) / count
        finally:
            for install in installs:
                stop_worker(install.project / ".forge")
    after = f"{os.getloadavg()[0]:.2f}"
    if args.json:
        figures: dict[str, float] = {}
        for index, target in enumerate(targets):
            pre = "" if index == 0 else f"tree{index}_"
            for kind in KINDS:
                figures[f"{pre}{kind}-wall-us"] = statistics.median(target.wall[kind]) * 1e6
                figures[f"{pre}{kind}-worker-cpu-us"] = target.cpu[kind] * 1e6
        emit("worker_roundtrip", figures, {}, load_before=load, trees=trees, pause=args.pause)
        return
    print(f"load average before the run: {load}, after: {after}")
    pause = f", {args.pause:g} s before each" if args.pause else ", back to back"
    print(
        f"requests: {args.requests} per kind and tree ({3 * args.requests} refused), "
        f"interleaved{pause}"
    )
    print("\n| tree | kind | round trip, median | p10 | worker CPU per request |")
    print("|---|---|---|---|---|")
    for target in targets:
        for kind in KINDS:
            wall = sorted(target.wall[kind])
            print(
                f"| {target.install.tree or 'installed'} | {kind} "
                f"| {statistics.median(wall) * 1e6:.0f} us | {wall[len(wall) // 10] * 1e6:.0f} us "
                f"| {target.cpu[kind] * 1e6:.0f} us |"
            )


if __name__ == "__main__":
    main()
