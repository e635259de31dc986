"""The secret screen's gate (issue 28): how often a text skips the RE2 screen, and what it costs.

:func:`forge_policy.secrets.may_hold` refuses a text when no secret pattern can match it (none
of the literals a match needs is in it), so that a hook process whose texts are all clean never
compiles the screen (one relaxed regex of every pattern: ~22M instructions, ~4 ms). Short
literals (``sk``, ``gh``, ``key``, ``pass``, ``token``) are in many commands, so the gate only
pays where most texts skip. For a corpus of commands (JSON lines with an ``input``: by default
the agent-safety benchmark's, ``../shared/benchmarks/agent-safety/corpus.jsonl`` beside the
repository) it prints how many skip, how many of those that hold no secret skip, the patterns
that admit the rest, and the gate's cost per text against the screen's compile.

Usage: ``python tests/benchmarks/bench_secret_gate.py [--corpus FILE]``
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from pathlib import Path

from forge_policy import secrets
from forge_policy.catalog.dsl import compile_regex

DEFAULT = Path(__file__).resolve().parents[3] / "shared/benchmarks/agent-safety/corpus.jsonl"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", default=str(DEFAULT), help="JSON lines with an 'input'")
    args = parser.parse_args()
    # first: RE2's binding keeps compiled patterns, a second compile would be free
    start = time.perf_counter()
    compile_regex("|".join(f"(?:{secrets.relaxed(p)})" for p in _plain(secrets.SECRET_PATTERNS)))
    compile_ms = (time.perf_counter() - start) * 1e3
    texts = []
    for line in Path(args.corpus).read_text().splitlines():
        value = json.loads(line)["input"]
        texts.append(value if isinstance(value, str) else json.dumps(value))
    data = [text.encode("utf-8", "surrogatepass") for text in texts]
    admitted = [d for d in data if secrets.may_hold(d)]
    holding = sum(1 for text in texts if secrets.detect(text))
    clean = len(texts) - holding
    skipped = len(texts) - len(admitted)
    regexes = secrets.SECRET_PATTERNS
    alone = {pid: _needs_of(pid) for pid, _regex in regexes}
    admitting: Counter[str] = Counter()
    for d in admitted:  # which pattern's alternatives let it through (several may)
        for pid, needs in alone.items():
            if secrets.may_hold(d, needs):
                admitting[pid] += 1
    start = time.perf_counter()
    for _ in range(20):
        for d in data:
            secrets.may_hold(d)
    gate_us = (time.perf_counter() - start) / 20 / len(data) * 1e6
    print(f"corpus: {args.corpus}: {len(texts)} texts, {holding} hold a secret")
    print(f"skip the screen: {skipped} of {len(texts)} ({skipped / len(texts):.1%}); of the")
    print(f"{clean} without a secret: {skipped / clean:.1%}")
    print(f"admitted by (a text may count for several): {admitting.most_common()}")
    print(f"gate: {gate_us:.2f} us per text; the screen's compile it saves, RE2's import")
    print(f"included: {compile_ms:.2f} ms")


def _plain(patterns: tuple[tuple[str, str], ...]) -> list[str]:
    import re

    return [re.sub(r"\(\?P<\w+>", "(?:", pattern) for _pid, pattern in patterns]


def _needs_of(pid: str) -> secrets.Needs:
    from secrets_gate import derived  # tests/secrets_gate.py: one pattern's own table

    pattern = dict(secrets.SECRET_PATTERNS)[pid]
    return derived(((pid, pattern),)) or ()


if __name__ == "__main__":
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, for secrets_gate
    main()
