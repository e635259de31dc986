"""The 10-rule deny workload in forge_policy and in peer policy engines, same traffic, same run.

Not collected by pytest. The peers come with the optional ``bench`` extra
(``pip install '.[bench]'``: cedarpy, pycasbin); a peer whose package is absent is skipped with a
message. Run:

    .venv/bin/python tests/benchmarks/bench_peers.py [--rounds 7] [--json]

The workload is bench_scaling.py's ``deny-10`` (imported from it): 10 deny rules, rule ``i``
denying a Bash command that matches ``(?:^|[;&|\\s])tool{i}\\s+--(?:force|wipe)\\b``
(:func:`bench_scaling.deny_pattern`), fed :func:`bench_scaling.bash_traffic` (2,000 Bash
commands, 5 % of them matching a rule). Each engine answers allow or deny for every event:

- ``forge_policy``: in-process, one :class:`~forge_policy.Evaluator` over a ``MemoryStore``
  (the default), :func:`bench_scaling.deny_catalog` (hard_block rules). It does more than the
  peers: each block increments the session's counter in the store and renders the message.
- ``cedarpy``: 10 ``forbid`` policies and one ``permit``; the policy set and the (empty)
  entities parsed once into handles and reused, one ``is_authorized`` call per event
  (``is_authorized_batch`` over the whole traffic is given too, as a figure). Cedar has no
  regular expressions, only ``like`` with ``*`` wildcards, so each rule is the disjunction of
  the ``like`` patterns that spell the regex's common cases: the rule's word at the start or
  after a space, ``;``, ``&`` or ``|``; one space before the flag; the flag at the end or
  followed by a space -- 5 x 2 x 2 = 20 ``like`` clauses per rule. It never denies what the
  regex allows, and misses spellings the regex denies (a tab or newline, two spaces,
  ``--force;`` or ``--force=x``); on this traffic its decisions must equal the regex's, and the
  script checks they do.
- ``pycasbin``: a model whose matcher is ``r.tool == p.tool && regexMatch(r.command,
  p.pattern)`` with ``deny`` effects (``e = !some(where (p.eft == deny))``) and the 10 patterns
  as policies. Casbin's ``regexMatch`` is ``re.match`` (anchored at the start), so each
  pattern is prefixed with ``(?s:.*?)`` to search, as the rule does.
- ``re loop``: a plain Python loop of ``re.search`` over the 10 compiled patterns (the floor of
  any engine in Python), and ``re2 loop``, the same with RE2 (what forge_policy's conditions
  use).

Every engine runs once per round, interleaved, ``--rounds`` rounds; the figures are the medians of
the rounds' decisions/s. Every engine's decisions are checked against the ``re`` loop's.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import re
import statistics
import time
from collections.abc import Callable

from bench_scaling import MATCH_SHARE, bash_traffic, deny_catalog, deny_pattern
from benchjson import emit, ratio  # this folder's shared --json format

import forge_policy as fp

RULES = 10
#: Issue 28's targets for forge_policy on this workload, in the same run.
TARGET_OVER_CEDAR = 3.0
TARGET_PER_S = 40_000.0
#: Cedar ``like`` spellings of the regex (see the module docstring).
CEDAR_BEFORE = ("", "* ", "*;", "*&", "*|")
CEDAR_FLAGS = ("force", "wipe")
CEDAR_AFTER = ("", " *")

Engine = Callable[[list[str]], list[bool]]  # commands -> denied?


def forge_engine(events: list[fp.Event]) -> tuple[Engine, str]:
    clock = [1_800_000_000.0]
    evaluator = fp.Evaluator(deny_catalog(), clock=lambda: clock[0])
    evaluator.evaluate(events[0])  # warm: lazy regexes, imports

    def run(_: list[str]) -> list[bool]:
        out = []
        for event in events:
            clock[0] += 0.001
            out.append(evaluator.evaluate(event).blocked)
        return out

    return run, f"forge_policy {fp.__version__}"


def re_loop() -> tuple[Engine, str]:
    patterns = [re.compile(deny_pattern(i)) for i in range(RULES)]

    def run(commands: list[str]) -> list[bool]:
        return [any(p.search(c) for p in patterns) for c in commands]

    return run, "Python re"


def re2_loop() -> tuple[Engine, str]:
    import re2

    patterns = [re2.compile(deny_pattern(i)) for i in range(RULES)]

    def run(commands: list[str]) -> list[bool]:
        return [any(p.search(c) for p in patterns) for c in commands]

    return run, "google-re2"


def cedar_policies() -> str:
    policies = ["permit(principal, action, resource);"]
    for i in range(RULES):
        clauses = [
            f'context.command like "{before}tool{i} --{flag}{after}"'
            for before in CEDAR_BEFORE
            for flag in CEDAR_FLAGS
            for after in CEDAR_AFTER
        ]
        policies.append(
            f'@id("deny-{i:04d}")\nforbid(principal, action == Action::"Bash", resource)\n'
            f"when {{ {' || '.join(clauses)} }};"
        )
    return "\n".join(policies)


def cedar_engine() -> tuple[Engine, str] | str:
    try:
        import cedarpy
    except ImportError:
        return "cedarpy is not installed (pip install '.[bench]')"
    from importlib.metadata import version

    policies = cedarpy.PolicySet.from_str(cedar_policies())
    entities = cedarpy.Entities.from_json_str("[]")

    def request(command: str) -> dict[str, object]:
        return {
            "principal": 'Agent::"agent"',
            "action": 'Action::"Bash"',
            "resource": 'Tool::"Bash"',
            "context": {"command": command},
        }

    def run(commands: list[str]) -> list[bool]:
        out = []
        for command in commands:
            result = cedarpy.is_authorized(request(command), policies, entities)
            out.append(not result.allowed)
        return out

    def batch(commands: list[str]) -> list[bool]:
        results = cedarpy.is_authorized_batch([request(c) for c in commands], policies, entities)
        return [not r.allowed for r in results]

    run.batch = batch  # type: ignore[attr-defined]
    return run, f"cedarpy {version('cedarpy')}"


CASBIN_MODEL = """
[request_definition]
r = tool, command

[policy_definition]
p = tool, pattern, eft

[policy_effect]
e = !some(where (p.eft == deny))

[matchers]
m = r.tool == p.tool && regexMatch(r.command, p.pattern)
"""


def casbin_engine() -> tuple[Engine, str] | str:
    try:
        import casbin
    except ImportError:
        return "pycasbin is not installed (pip install '.[bench]')"
    from importlib.metadata import version

    model = casbin.Enforcer.new_model(text=CASBIN_MODEL)
    enforcer = casbin.Enforcer(model)
    for i in range(RULES):
        enforcer.add_policy("Bash", "(?s:.*?)" + deny_pattern(i), "deny")

    def run(commands: list[str]) -> list[bool]:
        return [not enforcer.enforce("Bash", c) for c in commands]

    return run, f"pycasbin {version('pycasbin')}"


def timed(engine: Engine, commands: list[str]) -> tuple[float, list[bool]]:
    gc.collect()
    start = time.perf_counter()
    decisions = engine(commands)
    return len(commands) / (time.perf_counter() - start), decisions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="passes per engine (default 7)")
    parser.add_argument("--json", action="store_true", help="print figures and ratios as JSON")
    args = parser.parse_args()
    say = (lambda *a: None) if args.json else print
    events = bash_traffic(list(range(RULES)), MATCH_SHARE)
    commands = [str(e.tool_input["command"]) for e in events]

    engines: dict[str, Engine] = {}
    versions: dict[str, str] = {}
    skipped: dict[str, str] = {}
    for name, make in (
        ("forge_policy", lambda: forge_engine(events)),
        ("re loop", re_loop),
        ("re2 loop", re2_loop),
        ("cedarpy", cedar_engine),
        ("pycasbin", casbin_engine),
    ):
        made = make()
        if isinstance(made, str):
            skipped[name] = made
            say(f"skipped {name}: {made}")
            continue
        engines[name], versions[name] = made

    rates: dict[str, list[float]] = {name: [] for name in engines}
    expected = engines["re loop"](commands)
    mismatches: dict[str, int] = {}
    for name, engine in engines.items():  # warm-up pass, and the decisions check
        got = engine(commands)
        mismatches[name] = sum(a != b for a, b in zip(got, expected, strict=True))
    batch_rates: list[float] = []
    for _ in range(args.rounds):
        for name, engine in engines.items():
            rates[name].append(timed(engine, commands)[0])
        if "cedarpy" in engines:
            batch_rates.append(timed(engines["cedarpy"].batch, commands)[0])  # type: ignore[attr-defined]
    medians = {name: statistics.median(values) for name, values in rates.items()}
    denied = sum(expected)

    figures: dict[str, float] = {f"{name}-decisions-per-s": v for name, v in medians.items()}
    if batch_rates:
        figures["cedarpy batch-decisions-per-s"] = statistics.median(batch_rates)
    figures.update({f"{name}-mismatches": float(n) for name, n in mismatches.items()})
    compared: dict[str, dict[str, object]] = {}
    forge = medians["forge_policy"]
    for name, value in medians.items():
        if name == "forge_policy":
            continue
        key = name.replace(" ", "_")
        compared[f"forge_over_{key}"] = ratio(
            forge / value,
            "higher",
            f"forge_policy decisions/s over {versions[name]}'s, 10-rule deny workload",
        )
    if "cedarpy" in medians:
        compared["forge_over_cedarpy"]["target"] = TARGET_OVER_CEDAR
    compared["forge_decisions_per_s_over_target"] = ratio(
        forge / TARGET_PER_S,
        "higher",
        f"forge_policy decisions/s over issue 28's {TARGET_PER_S:,.0f}/s (an absolute figure: "
        "machine-dependent, hence the wide tolerance)",
        tolerance=1.0,
        target=1.0,
    )
    for name, n in mismatches.items():
        compared[f"{name.replace(' ', '_')}_decision_mismatches"] = ratio(
            n, "zero", f"{name}: decisions differing from the re.search loop's (must be 0)"
        )
    if args.json:
        emit(
            "bench_peers",
            figures,
            compared,
            versions=versions,
            skipped=skipped,
            events=len(commands),
            denied=denied,
            rounds=args.rounds,
        )
        return

    print(
        f"Machine: {os.cpu_count()} cores, {platform.machine()}, "
        f"{platform.python_implementation()} {platform.python_version()}, {platform.system()}, "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    print(
        f"{len(commands):,} Bash commands ({denied} denied), {RULES} rules, "
        f"median of {args.rounds} interleaved passes\n"
    )
    print("| engine | decisions/s | forge_policy / engine | decisions differing from re |")
    print("|---|---|---|---|")
    for name, value in medians.items():
        print(f"| {versions[name]} | {value:,.0f} | {forge / value:.2f}x | {mismatches[name]} |")
    if batch_rates:
        batch = statistics.median(batch_rates)
        print(
            f"| cedarpy, `is_authorized_batch` of all {len(commands):,} | {batch:,.0f} "
            f"| {forge / batch:.2f}x | |"
        )
    over = medians.get("cedarpy")
    print(
        f"\nTargets (issue 28): forge_policy >= {TARGET_OVER_CEDAR:g}x cedarpy "
        f"({'not measured' if over is None else f'{forge / over:.2f}x'}) and "
        f">= {TARGET_PER_S:,.0f} decisions/s ({forge:,.0f}, {forge / TARGET_PER_S:.2f}x)"
    )
    for name, why in skipped.items():
        print(f"\n{name} skipped: {why}")


if __name__ == "__main__":
    main()
