"""What the warm-worker client's environment fingerprint adds to every hook call (issue 25).

Since issue 25 the client finds the worker of its own environment: it computes
:func:`~forge_policy.worker.protocol.fingerprint` over its working directory and the
answer-relevant variables it already collected for the request, and checks one more folder
(the fingerprint's, beside the private worker folder). This times those steps in the client's
own interpreter mode (``python -I -S``, built-ins only), with this process's environment plus a
long ``PATH``, against the bare interpreter start every hook call pays anyway.

Usage: ``python tests/benchmarks/bench_worker_fingerprint.py [--runs 20000]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROBE = r"""
import posix, sys, time
sys.path.insert(0, sys.argv[1])
import protocol
runs, folder = int(sys.argv[2]), sys.argv[3].encode()
env = dict(posix.environ)
env[b"PATH"] = b":".join(b"/opt/tool%d/bin" % i for i in range(40)) + b":/usr/bin:/bin"
cwd = posix.getcwdb()
def best(step):
    out = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(runs):
            step()
        out.append((time.perf_counter() - start) / runs * 1e6)
    return min(out)
relevant = protocol.relevant(env)
size = len(cwd) + sum(len(e) for e in relevant)
print("relevant", best(lambda: protocol.relevant(env)))
print("fingerprint", best(lambda: protocol.fingerprint(cwd, relevant)), size)
print("private_folder", best(lambda: protocol.private_folder(folder)))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=20000)
    args = parser.parse_args()
    here = Path(__file__).resolve().parents[2] / "forge_policy" / "worker"
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "w"
        folder.mkdir(mode=0o700)
        out = subprocess.run(
            [sys.executable, "-I", "-S", "-c", PROBE, str(here), str(args.runs), str(folder)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    figures = {line.split()[0]: line.split()[1:] for line in out.splitlines()}
    bare = []
    for _ in range(30):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-I", "-S", "-c", "pass"], check=True)
        bare.append((time.perf_counter() - start) * 1e6)
    base = statistics.median(bare)
    added = float(figures["fingerprint"][0]) + float(figures["private_folder"][0])
    print(f"python {sys.version.split()[0]} on {os.uname().machine}, {args.runs} runs, best of 5")
    print(f"relevant() (already paid before issue 25): {float(figures['relevant'][0]):.2f} us")
    print(
        f"fingerprint() over {figures['fingerprint'][1]} bytes: "
        f"{float(figures['fingerprint'][0]):.2f} us"
    )
    print(f"one more private_folder() stat: {float(figures['private_folder'][0]):.2f} us")
    print(
        f"added per hook call: {added:.2f} us = {added / base * 100:.3f} % of a bare "
        f"python -I -S start ({base / 1000:.1f} ms median of 30)"
    )


if __name__ == "__main__":
    main()
