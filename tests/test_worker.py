"""The warm worker with real processes: the client starts it, it answers exactly as the
in-process hook does, parallel clients start one, and it is stopped, idles out or is refused when
the environment differs."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from hookrun import ClientProject, stop_workers, worker_pids

from forge_policy.config.env import Config
from forge_policy.harness.payload import MAX_INPUT
from forge_policy.serve.warm import Warm
from forge_policy.worker import protocol

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the worker needs Linux (SO_PEERCRED, /proc)"
)


@pytest.fixture
def twins(tmp_path: Path) -> Iterator[tuple[ClientProject, ClientProject]]:
    """Two projects with the same catalog and session: one through the worker, one
    in-process (``FORGE_WORKER=off``). Their workers are stopped afterwards."""
    warm, cold = ClientProject(tmp_path / "warm"), ClientProject(tmp_path / "cold")
    cold.session = warm.session
    cold.env["FORGE_WORKER"] = "off"
    yield warm, cold
    for project in (warm, cold):
        stop_workers(project.root)
        assert worker_pids(project.root) == []


@pytest.fixture
def project(tmp_path: Path) -> Iterator[ClientProject]:
    project = ClientProject(tmp_path)
    yield project
    stop_workers(project.root)
    assert worker_pids(project.root) == []


def test_the_client_imports_only_built_in_modules(project: ClientProject) -> None:
    project.call(project.bash("ls"))  # starts the worker
    project.wait_worker()
    answer = project.call(project.bash("ls"), PYTHONPROFILEIMPORTTIME="1")  # -I ignores it
    assert answer.stderr == ""
    result = subprocess.run(
        [sys.executable, "-I", "-S", "-X", "importtime", str(project.client)],
        input=json.dumps(project.bash("ls")).encode(),
        capture_output=True,
        env=project.env,
        cwd=project.dir,
        timeout=30,
    )
    imported = {
        line.split("|")[-1].strip()
        for line in result.stderr.decode().splitlines()
        if line.startswith("import time:") and "imported package" not in line
    }
    started_by_the_interpreter = {"_io", "marshal", "posix", "_frozen_importlib_external"}
    started_by_the_interpreter |= {"zipimport", "_codecs", "codecs", "encodings.aliases"}
    started_by_the_interpreter |= {"encodings", "encodings.utf_8", "_signal", "_abc", "abc", "io"}
    # the client module and the protocol's rules it needs (worker.wire: built-ins only, no
    # class), from cached bytecode; gc to turn the collector off; neither worker.protocol (its
    # classes) nor the client's slow paths (worker.fallback): the worker answered
    expected = {"client", "wire", "_socket", "time", "gc"}
    assert imported - started_by_the_interpreter == expected
    assert protocol.MAX_INPUT == MAX_INPUT


def test_the_first_call_starts_a_worker_and_later_calls_use_it(project: ClientProject) -> None:
    first = project.call(project.bash("echo hard-me"))
    assert b'"permissionDecision":"deny"' in first.stdout and first.stderr == ""
    pid = project.wait_worker()
    folder = project.slot()
    assert (project.folder.stat().st_mode & 0o777) == 0o700
    assert (folder.stat().st_mode & 0o777) == 0o700
    assert ((folder / "worker.sock").stat().st_mode & 0o777) == 0o600
    assert not (folder / "worker.starting").exists()
    before = project.requests()
    second = project.call(project.bash("echo hard-me"))
    assert second.stdout == first.stdout and project.requests() == before + 1
    assert project.counter("hardy") == 2 and worker_pids(project.root) == [pid]


def test_worker_answers_are_the_in_process_answers(
    twins: tuple[ClientProject, ClientProject],
) -> None:
    warm, cold = twins
    warm.call(warm.bash("ls"))
    warm.wait_worker()
    table: list[bytes | dict[str, object]] = [
        warm.payload(tool_name="Read", tool_input={"file_path": "/p/a.py"}),  # allow
        warm.bash("echo nudge-me"),
        warm.bash("echo warn-me"),
        warm.bash("echo soft-me"),  # soft_block (agent override)
        warm.bash("echo ask-me"),  # soft_block (user override)
        warm.bash("echo hard-me"),
        warm.bash("echo nudge-me"),  # counters escalate the same way
        warm.payload("UserPromptSubmit", prompt="this is forbidden"),
        b"not json",
        b'{"hook_event_name": "PreToolUse"',
        b"",
        b"x" * (MAX_INPUT + 1),
    ]
    for event in table:
        # the same tool_use_id on both sides: only the answer path differs
        before = warm.requests()
        got, want = warm.call(event), cold.call(event)
        assert (got.stdout, got.stderr) == (want.stdout, want.stderr), event
        assert warm.requests() == before + 1
    for behavior_id in ("nudger", "warner", "softy", "asker", "hardy"):
        assert warm.counter(behavior_id) == cold.counter(behavior_id) > 0
    # a broken catalog: the last one that loaded keeps enforcing (softy still blocks), with the
    # notice naming file:line, through the worker too
    for project in twins:
        rule = project.root / "behaviors" / "softy" / "behavior.yaml"
        rule.write_text(rule.read_text().replace("soft_block", "loud"))
    event = warm.bash("echo soft-me again")  # not a retry of the earlier call: no override
    got, want = warm.call(event), cold.call(event)
    assert (got.stdout, got.stderr) == (want.stdout, want.stderr)
    assert b".forge/behaviors/softy/behavior.yaml:" in got.stdout and b'"deny"' in got.stdout
    assert b"forge-policy validate" in got.stdout


def test_request_threads_wait_for_the_next_call_and_stay_bounded(project: ClientProject) -> None:
    """A request thread waits for its turn to accept the next connection instead of ending (no
    thread start per call); a burst gets a thread per connection, and afterwards at most
    SPARE_THREADS stay."""
    from forge_policy.worker.server import SPARE_THREADS

    project.call(project.bash("ls"))
    pid = project.wait_worker()
    tasks = Path(f"/proc/{pid}/task")

    def settled(bound: int) -> set[str]:
        deadline = time.monotonic() + 5
        while len(found := set(p.name for p in tasks.iterdir())) > bound:
            if time.monotonic() > deadline:
                break
            time.sleep(0.02)
        return found

    threads = settled(3)
    # the main thread (it watches), the request thread whose turn it is to accept and the one
    # that answered, waiting for its turn (a spare more, should a call have come before it was)
    assert 3 <= len(threads) <= 1 + SPARE_THREADS
    before = project.requests()
    for _ in range(4):  # one at a time: answered by the threads that wait, which wait again
        assert b'"deny"' in project.call(project.bash("echo hard-me")).stdout
    # (a call that arrives before the last thread is back waiting gets a new one: a spare more)
    assert threads <= settled(1 + SPARE_THREADS) and project.requests() == before + 4
    barrier = threading.Barrier(12)

    def call(_: int) -> bytes:
        barrier.wait()
        return project.call(project.bash("echo hard-me")).stdout

    with ThreadPoolExecutor(12) as pool:
        assert all(b'"deny"' in out for out in pool.map(call, range(12)))
    assert len(settled(1 + SPARE_THREADS)) <= 1 + SPARE_THREADS
    assert project.requests() == before + 16 and worker_pids(project.root) == [pid]


def test_parallel_clients_start_one_worker(project: ClientProject) -> None:
    with ThreadPoolExecutor(16) as pool:
        answers = list(pool.map(lambda _: project.call(project.bash("echo hard-me")), range(16)))
    assert all(b'"permissionDecision":"deny"' in a.stdout for a in answers)
    pid = project.wait_worker()
    # one process started, not one listening and others waiting for the worker lock until
    # they give up ("not started"): a client whose connect failed just before the worker
    # listened (and removed the start marker) checks again after taking the marker
    assert worker_pids(project.root) == [pid]
    assert project.log().count("listening on") == 1, project.log()
    assert "not started" not in project.log(), project.log()
    assert project.counter("hardy") == 16  # no increment lost, whichever path answered


def test_each_environment_and_folder_gets_its_own_warm_worker(
    twins: tuple[ClientProject, ClientProject],
) -> None:
    """Issue 25 item 3: another PATH, another CLAUDE_PROJECT_DIR (Codex, Cursor) or another
    folder used to be refused by the one worker ("refused: other values of PATH") and evaluated
    in-process on every call; each now gets a worker of its own, answering warm."""
    warm, cold = twins
    warm.env["FORGE_WORKER_MAX"] = "8"  # a client-only knob: the LRU bound has its own test
    warm.call(warm.bash("ls"))
    first = warm.wait_worker(slot=warm.slot())
    sub = warm.dir / "sub"
    sub.mkdir()
    others: list[tuple[dict[str, str], Path | None]] = [
        ({"PATH": warm.env.get("PATH", "/usr/bin") + ":/opt/forge-test/bin"}, None),
        ({"FORGE_DISABLE": "nudger"}, None),
        ({"GIT_DIR": "/x"}, None),
        ({"CLAUDE_PROJECT_DIR": str(warm.dir)}, sub),
    ]
    for env, cwd in others:
        slot = warm.slot(cwd, **env)
        assert slot != warm.slot()
        got, want = (
            warm.call(warm.bash("echo nudge-me"), cwd=cwd, **env),
            cold.call(warm.bash("echo nudge-me"), cwd=cwd, **env),
        )
        assert got.stdout == want.stdout and got.stderr == ""  # cold: starts its worker
        pid = warm.wait_worker(slot=slot)
        assert pid != first
        before = warm.requests(slot)
        got, want = (
            warm.call(warm.bash("echo hard-me"), cwd=cwd, **env),
            cold.call(warm.bash("echo hard-me"), cwd=cwd, **env),
        )
        assert got.stdout == want.stdout and b'"deny"' in got.stdout
        assert got.stderr == "" and warm.requests(slot) == before + 1  # answered warm
    # a harness that sets no CLAUDE_PROJECT_DIR (Codex, Cursor): its own worker too
    claude_env = dict(warm.env)
    del warm.env["CLAUDE_PROJECT_DIR"]
    try:
        slot = warm.slot()
        assert warm.call(warm.bash("ls")).stderr == ""
        warm.wait_worker(slot=slot)
        before = warm.requests(slot)
        got = warm.call(warm.bash("echo hard-me"))
        assert got.stderr == "" and b'"deny"' in got.stdout and warm.requests(slot) == before + 1
    finally:
        warm.env = claude_env
    assert len(worker_pids(warm.root)) == 6  # one per environment (FORGE_WORKER_MAX=8)
    assert warm.call(warm.bash("ls"), FORGE_WORKER_TIMEOUT="5").stderr == ""  # client-only knob
    for name in ("FORGE_WORKER_TIMEOUT", "FORGE_WORKER_IDLE_SECONDS"):  # unusable: as in-process
        got, want = (p.call(warm.bash("echo hard-me"), **{name: "soon"}) for p in twins)
        assert got.stdout == want.stdout and f"{name}: expected a number".encode() in got.stdout


#: ``FORGE_WORKER_MAX`` of 2, a client-only knob: the same environment for the worker
BOUND = {"FORGE_WORKER_MAX": "2"}
#: three environments, so three workers for one root: one too many for :data:`BOUND`
ENVIRONMENTS = [{"GIT_DIR": f"/git/{n}"} for n in range(3)]


def two_workers(project: ClientProject) -> tuple[list[Path], list[int]]:
    """The slots of the :data:`ENVIRONMENTS`' workers, and the pids of the first two, started
    (and used) in that order."""
    slots = [project.slot(**env) for env in ENVIRONMENTS]
    pids = []
    for env, slot in zip(ENVIRONMENTS[:2], slots[:2], strict=True):
        project.call(project.bash("ls"), **env, **BOUND)
        pids.append(project.wait_worker(slot=slot))
    return slots, pids


def the_third_stops(project: ClientProject, slots: list[Path], gone: int, kept: int) -> None:
    """Start the third environment's worker: the one of ``gone`` stops, ``kept``'s goes on."""
    project.call(project.bash("ls"), **ENVIRONMENTS[2], **BOUND)
    project.wait_worker(slot=slots[2])
    deadline = time.monotonic() + 10
    while gone in worker_pids(project.root) and time.monotonic() < deadline:
        time.sleep(0.05)
    live = worker_pids(project.root)
    assert len(live) == 2 and kept in live and gone not in live, project.log()
    assert "more than 2 environments" in project.log()


def test_asking_a_worker_about_itself_is_no_use_of_it(project: ClientProject) -> None:
    """``status`` (another worker making room, ``worker settle``, ``worker status``) and the
    idle time it reports leave the worker's idle time alone: otherwise the worker asked last
    would count as the most recently used, and one asked often enough would never idle out."""
    from forge_policy.cli.worker_cmds import ask_slot

    slots, pids = two_workers(project)
    time.sleep(0.3)
    first = ask_slot(bytes(slots[0]), b"status")
    time.sleep(0.2)
    second = ask_slot(bytes(slots[0]), b"status")
    assert isinstance(first, dict) and isinstance(second, dict)
    assert first["idle"] >= 0.3 and second["idle"] >= first["idle"] + 0.2, (first, second)
    the_third_stops(project, slots, gone=pids[0], kept=pids[1])  # 0 was used first, 1 after


def test_the_least_recently_used_worker_stops_beyond_the_bound(project: ClientProject) -> None:
    slots, pids = two_workers(project)
    assert project.call(project.bash("ls"), **ENVIRONMENTS[0], **BOUND).stderr == ""  # 0 again
    the_third_stops(project, slots, gone=pids[1], kept=pids[0])
    assert project.call(project.bash("ls"), **ENVIRONMENTS[0], **BOUND).stderr == ""  # warm
    status = project.run_cli("worker", "status").stdout
    assert status.startswith("worker: 2 answering, one per environment (at most 4;")
    assert status.count(" pid ") == 2 and "differs in GIT_DIR" in status
    assert "GIT_DIR=" not in status  # values other than paths are never shown, only a digest
    assert "      3  no worker for this environment: started one\n" in status, status
    shown = json.loads(project.run_cli("worker", "status", "--json").stdout)
    assert len(shown["workers"]) == 2 and shown["refusals"]["reasons"] == {
        "no worker for this environment: started one": 3
    }
    assert not slots[1].exists() or not (slots[1] / "worker.sock").exists()


def test_forge_worker_off_never_starts_one(project: ClientProject) -> None:
    answer = project.call(project.bash("echo hard-me"), FORGE_WORKER="off")
    assert b'"deny"' in answer.stdout and not project.folder.exists()
    bad = project.call(project.bash("echo hard-me"), FORGE_WORKER="maybe")
    assert b"FORGE_WORKER: unknown value 'maybe': expected on or off" in bad.stdout
    assert b'"deny"' in bad.stdout and not project.folder.exists()
    for n in (1, 2):  # the memory store starts empty in every hook process, and no worker
        # keeps one: the count comes from the audit log, the source of truth (SPEC §9)
        memory = project.call(project.bash("echo nudge-me"), FORGE_STORE="memory")
        assert (
            f"[nudger] nudger: Bash ({n})".encode() in memory.stdout and not project.folder.exists()
        )


def test_worker_status_stop_and_idle_exit(project: ClientProject) -> None:
    assert "\n    forge-policy worker status|stop|settle " in project.run_cli("--help").stdout
    status = project.run_cli("worker", "status", check=1)
    assert status.stdout == "worker: not running (no worker folder)\n"
    project.call(project.bash("ls"))
    pid = project.wait_worker()
    status = project.run_cli("worker", "status")
    assert status.stdout.startswith("worker: 1 answering, one per environment")
    assert f"  {project.slot().name}  pid {pid}, version " in status.stdout
    assert json.loads(project.run_cli("worker", "status", "--json").stdout)["running"] is True
    assert project.run_cli("worker", "stop").stdout == f"worker: stopped (pid {pid})\n"
    assert worker_pids(project.root) == [] and not (project.slot() / "worker.sock").exists()
    assert "stopped after" in project.log() and "asked to stop" in project.log()

    project.call(project.bash("ls"), FORGE_WORKER_IDLE_SECONDS="0.5")
    project.wait_worker()
    deadline = time.monotonic() + 5
    while worker_pids(project.root) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert worker_pids(project.root) == [] and "idle for 0.5 s" in project.log()


def test_worker_settle_waits_for_the_requests_in_flight(project: ClientProject) -> None:
    """A warm answer precedes its state write and seen record: ``worker settle`` waits until
    no request is in flight, so a reader of the state or the log sees a call's writes."""
    from forge_policy._infra.filelock import FileLock

    assert project.run_cli("worker", "settle").stdout == ""  # no worker: nothing to wait for
    project.call(project.bash("ls"))
    project.wait_worker()
    lock = project.root / "runtime" / "state.json.lock"
    # the state lock held here: the next counted call waits for it
    with FileLock(str(lock), timeout=1.0), ThreadPoolExecutor(1) as pool:
        waiting = pool.submit(project.call, project.bash("echo nudge-me"))
        deadline = time.monotonic() + 10
        while (
            time.monotonic() < deadline
            and project.run_cli("worker", "settle", "--timeout", "0.2", check=None).returncode == 0
        ):
            time.sleep(0.05)
        busy = project.run_cli("worker", "settle", "--timeout", "0.2", check=1)
        assert "worker: still busy after 0.2 s" in busy.stderr
    waiting.result(timeout=30)  # the lock released: it answers, then writes
    assert project.run_cli("worker", "settle").returncode == 0
    assert project.counter("nudger") == 1


def test_the_shared_handler_evaluates_concurrently_without_losing_increments(
    tmp_path: Path,
) -> None:
    project = ClientProject(tmp_path)
    warm = Warm(Config.from_env(project.env, cwd=str(project.dir)))
    barrier = threading.Barrier(16)

    def call(_: int) -> str:
        barrier.wait()
        return warm.answer(json.dumps(project.bash("echo nudge-me")).encode())[0]

    with ThreadPoolExecutor(16) as pool:
        answers = list(pool.map(call, range(16)))
    assert len(answers) == 16 and all("[nudger] nudger: Bash (" in a for a in answers)
    assert sorted(json.loads(a)["systemMessage"] for a in answers) == sorted(
        f"[nudger] nudger: Bash ({n})" for n in range(1, 17)
    )
    assert project.counter("nudger") == 16 and warm.requests == 16


def test_a_layer_file_created_or_removed_later_reloads_the_warm_evaluator(tmp_path: Path) -> None:
    """The warm evaluator watches every layer's file, missing ones included (asked with
    ``access`` first, then ``stat``): one that appears, changes or goes reloads it."""
    project = ClientProject(tmp_path)
    warm = Warm(Config.from_env(project.env, cwd=str(project.dir)))
    layer = project.root / "config.local.yaml"
    assert not layer.exists()
    first = warm.current()
    assert warm.current() is first and warm.reloads == 0
    layer.write_text("coverage: false\n")
    second = warm.current()
    assert second is not first and warm.reloads == 1
    assert warm.current() is second
    layer.unlink()
    assert warm.current() is not second and warm.reloads == 2
