"""The cold path in instructions: one in-process hook process (allow, hard block) under callgrind.

Wall time on a shared machine moves with its load; the instructions a process runs do not
(within ~0.5%: paths and timestamps differ from run to run). For each install (this tree and,
with ``--before``, a source tree run by the same interpreter through ``PYTHONPATH``) a project is
set up as :mod:`bench_cold_path` sets one up and warmed (catalog cache, bytecode), then
``valgrind --tool=callgrind`` counts the instructions of ``forge-policy hook`` for each payload,
and of ``python -c pass``. Beside them: the attrs classes the process builds (those whose
generated methods attrs evaluates: its own and forge_policy's), how many of them it compiled
(not read back from :mod:`forge_policy._infra.attrs_code`'s cache) and the modules it holds
beyond ``python -c pass``'s.

Usage: ``python tests/benchmarks/cold_instructions.py [--python VENV/bin/python]
[--before DIR]`` (valgrind must be installed).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_cold_path import KINDS, hook, setup

#: The hook in-process, counting the attrs classes it builds and the modules it loads.
COUNT = """import builtins, sys
compile_, eval_ = builtins.compile, builtins.eval
built, compiled = [], []
def name(filename):
    return filename[:-1].rsplit(" ", 1)[-1]  # "<attrs generated WHAT CLASS>"
def counting(source, filename, *args, **kwargs):
    if isinstance(filename, str) and filename.startswith("<attrs generated "):
        compiled.append(name(filename))
    return compile_(source, filename, *args, **kwargs)
def evaluating(code, *args, **kwargs):  # attrs evaluates each generated script, compiled or not
    filename = getattr(code, "co_filename", "")
    if filename.startswith("<attrs generated "):
        built.append(name(filename))
    return eval_(code, *args, **kwargs)
builtins.compile, builtins.eval = counting, evaluating
before = set(sys.modules)
from forge_policy.hook import main
main(argv=[])
classes = set(built)
ours = sum(name.startswith("forge_policy.") for name in classes)
print(len(classes), ours, len(set(compiled)), len(set(sys.modules) - before), file=sys.stderr)
"""


def instructions(argv: list[str], folder: Path, env: dict[str, str], data: bytes) -> int:
    """The instructions callgrind counts for one run of ``argv``."""
    out = folder / "callgrind.out"
    subprocess.run(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *argv],
        input=data, env=env, cwd=folder, capture_output=True, check=True,
    )  # fmt: skip
    found = re.search(rb"^(?:summary|totals): (\d+)", out.read_bytes(), re.MULTILINE)
    out.unlink()
    if found is None:
        raise SystemExit(f"no instruction count in callgrind's output for {argv}")
    return int(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--python", default=sys.executable, help="interpreter of the venv to test")
    parser.add_argument("--before", default="", help="a forge_policy source tree to compare")
    args = parser.parse_args()
    python = os.path.abspath(args.python)
    installs = {"now": ""} | ({"before": str(Path(args.before).absolute())} if args.before else {})
    rows: list[tuple[str, int, str]] = []
    with tempfile.TemporaryDirectory(prefix="forge-cold-ir-") as tmp:
        bare = instructions([python, "-c", "pass"], Path(tmp), dict(os.environ), b"")
        rows.append(("bare", bare, ""))
        for install, pythonpath in installs.items():
            folder = Path(tmp) / install
            env = setup(python, folder, pythonpath)
            for kind in KINDS:
                data = (folder / f"{kind}.json").read_bytes()
                for _ in range(2):  # the first run compiles the catalog cache
                    subprocess.run(hook(python), input=data, env=env, cwd=folder, check=True,
                                   capture_output=True)  # fmt: skip
                counted = subprocess.run(
                    [python, "-c", COUNT], input=data, env=env, cwd=folder, capture_output=True,
                    check=True,
                )  # fmt: skip
                built, ours, compiled, modules = counted.stderr.decode().split()[-4:]
                extra = f"{built} ({ours} of forge_policy) | {compiled} | {modules}"
                rows.append((f"{install}_{kind}", instructions(hook(python), folder, env, data),
                             extra))  # fmt: skip
    print("| process | instructions | / bare | attrs classes built | compiled | modules |")
    print("|---|---|---|---|---|---|")
    for name, count, extra in rows:
        print(f"| {name} | {count / 1e6:.1f}M | {count / bare:.2f} | {extra or ' | | '} |")


if __name__ == "__main__":
    main()
