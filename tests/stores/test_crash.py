"""Crash safety: a writer SIGKILLed at any point leaves a state that loads, with every acknowledged
increment and at most the one in flight (SPEC §9: temp file + fsync + atomic rename).

Each trial forks a writer that increments one counter and reports every acknowledged value over a
pipe; it is killed inside ``apply`` (lock held), right after the temp file's fsync, just before or
just after the rename, after the commit but before the acknowledgement, or at a random moment.
200 trials per store run here (a few seconds); the stress command runs more:
``python tests/benchmarks/bench_stores.py crash --trials 1000``.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import signal
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from forge_policy.stores import FileStore

from . import harness
from .test_concurrency import assert_lock_free

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX signals")

TRIALS = 200


@pytest.mark.parametrize("kind", ["file", "sqlite"])
def test_sigkill_at_any_point_keeps_the_state_whole(kind: str, tmp_path: Path) -> None:
    path = harness.store_path(kind, tmp_path / "runtime")
    ctx = multiprocessing.get_context("fork")
    rng = random.Random(f"crash-{kind}")  # seeded: a failure replays
    results = [harness.run_crash_trial(ctx, kind, path, rng) for _ in range(TRIALS)]
    failures = [r for r in results if not r["ok"]]
    assert failures == []
    points = Counter(r["point"] for r in results)
    assert set(points) == set(
        harness.CRASH_POINTS if kind == "file" else harness.SQLITE_CRASH_POINTS
    )
    # the trials did work: increments were acknowledged, and some were in flight at the kill
    # (after_commit guarantees such trials; random kills land there only now and then)
    assert results[-1]["after"] >= sum(r["acknowledged"] for r in results)
    assert any(r["after"] == r["before"] + r["acknowledged"] + 1 for r in results)
    assert list(Path(path).parent.glob("*.corrupt-*")) == []
    assert_lock_free(kind, path)


def _write_in_place(self: FileStore, doc: dict[str, Any]) -> None:
    """A broken writer: truncates the state and writes it in two halves, with no rename."""
    data = json.dumps(doc).encode()
    fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    try:
        os.write(fd, data[: len(data) // 2])
        os.fsync(fd)  # the "fsync" crash point lands between the halves
        os.write(fd, data[len(data) // 2 :])
    finally:
        os.close(fd)


def test_the_harness_catches_a_writer_that_is_not_atomic(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(FileStore, "_write", _write_in_place)  # inherited by the forked writers
    path = harness.store_path("file", tmp_path / "runtime")
    ctx = multiprocessing.get_context("fork")
    rng = random.Random("broken")
    results = []
    while len(results) < 20 and all(r["ok"] for r in results):
        results.append(harness.run_crash_trial(ctx, "file", path, rng, points=("fsync",)))
    assert not results[-1]["ok"]  # a torn file: moved aside, the acknowledged count lost
    assert "corrupt state" in capsys.readouterr().err
