"""Tuning suggestions from the audit log (``forge-policy suggest``, SPEC §11): what the records
say about the catalog, each proposal with its evidence, never applied by itself.

:func:`suggestions` reads records (oldest first, as :meth:`~forge_policy.AuditSink.records`
gives them) and proposes, in this order:

- ``demote`` / ``raise-threshold``: a behavior whose override rate (overrides / blocks, as
  ``forge-policy audit`` computes it) is *ineffective* (> 0.7) gets its blocking rungs one level
  lower (``soft_block`` → ``warning``); one in *review* (0.3 to 0.7) blocks later: its blocking
  rungs move up by the overrides a typical session spent on it (the median over the sessions
  it blocked in, at least one). At least :data:`MIN_BLOCKS` blocks are needed to say anything.
- ``exception``: one exact call (a shell command, runs of whitespace counted as one, which is
  how an exception's ``match: {command: …}`` compares, :mod:`forge_policy.engine.exceptions`)
  blocked and then let through by an override at least :data:`MIN_CLUSTER` times gets an
  expiring exception (:data:`EXCEPTION_DAYS` days) for exactly that command, listing the
  records it covers. Never for a ``bypass: never`` behavior, one whose ladder reaches
  ``hard_block``, or one the managed layer locks; never from a record whose command was cut
  or redacted (the match would not be the call).
- ``disable``: an enabled behavior that left no record in any of the N sessions of the log
  (N ≥ :data:`MIN_SESSIONS`, said in the evidence): switch it off, or check it can fire.
- ``ladder``: a behavior that fired but whose higher escalation rungs no session reached (a
  note: nothing to apply).

Records of a behavior from before its latest ``tuning`` record (a suggestion other than an
exception applied) are left out, and so are the calls an exception in force now lets through:
that evidence was acted on. A change to a behavior the managed layer locks, or a
``bypass: never`` one that it would loosen, is still listed (the evidence is worth seeing) with
``refused`` saying why; it is never applied. Each suggestion has a ``number`` (its place in
that order: the same log gives the same numbers) and a ``key``, a short hash of what it
changes (not of the evidence, nor of the day), so ``suggest --apply N:KEY`` can tell that N
still means what was shown.

>>> from forge_policy.catalog.behavior import Behavior
>>> from forge_policy.catalog.catalog import Catalog
>>> rule = Behavior({"id": "no-rm", "name": "N", "default_level": "soft_block",
...                  "triggers": [{"event": "PreToolUse"}]})
>>> call = {"tool_input": {"command": "rm  -rf build"}}
>>> log = []
>>> for n in range(3):
...     log += [{"kind": "block", "session_id": f"s{n}", "behavior_id": "no-rm", "counter": 1,
...              "event_input": call, "seq": 2 * n + 1},
...             {"kind": "override", "session_id": f"s{n}", "behavior_id": "no-rm",
...              "override_id": f"o{n}", "counter": 1, "mechanism": "retry", "seq": 2 * n + 2}]
>>> found = suggestions(log, Catalog([rule]), None, now=1_900_000_000.0)
>>> [(s.number, s.kind) for s in found]
[(1, 'demote'), (2, 'exception')]
>>> found[1].change["exceptions"][0]["match"]
{'command': 'rm -rf build'}
"""

from __future__ import annotations

import datetime
import hashlib
import json
import statistics

import attrs

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from typing import Any

    from forge_policy.catalog.behavior import Behavior
    from forge_policy.catalog.catalog import Catalog
    from forge_policy.config.layers import Settings

#: blocks a behavior needs before its override rate says anything
MIN_BLOCKS = 3
#: overrides of one exact call before an exception is proposed ("again and again")
MIN_CLUSTER = 3
#: sessions in the log before "never fired" means something
MIN_SESSIONS = 3
#: how long a proposed exception holds (its ``until``: today + this many days)
EXCEPTION_DAYS = 30
#: record references listed per suggestion (the newest)
REFS = 5
#: the order suggestions are numbered in
ORDER = ("demote", "raise-threshold", "exception", "disable", "ladder")
_DEMOTED = {"hard_block": "hard_block", "soft_block": "warning"}
_BLOCKING = frozenset({"soft_block", "hard_block"})


@attrs.frozen
class Suggestion:
    """One proposal: what it is (``kind``, ``behavior``, ``title``), the project-layer change
    that applies it (``change``, shaped as the layer file: ``{"behaviors": {id: {...}}}`` or
    ``{"exceptions": [{...}]}``; None for a note), why (``evidence``: counts, sessions,
    record numbers, dates) and, when it must not be applied, ``refused`` (why)."""

    number: int
    key: str
    kind: str
    behavior: str
    title: str
    change: Mapping[str, Any] | None
    evidence: Mapping[str, Any]
    refused: str = ""

    @property
    def applicable(self) -> bool:
        return self.change is not None and not self.refused

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (``suggest --json``)."""
        return {
            "number": self.number,
            "key": self.key,
            "kind": self.kind,
            "behavior": self.behavior,
            "title": self.title,
            "change": jsonable(self.change),
            "evidence": jsonable(self.evidence),
            "refused": self.refused or None,
            "apply": f"forge-policy suggest --apply {self.number}:{self.key}"
            if self.applicable
            else None,
        }


def suggestions(
    records: Iterable[Mapping[str, Any]],
    catalog: Catalog,
    settings: Settings | None,
    *,
    now: float,
) -> list[Suggestion]:
    """Every suggestion the records support (see the module doc), numbered from 1.

    ``catalog`` is the effective one (layers applied: the ladders the hook uses), ``settings``
    the layered settings (locks, exceptions, profile; None: no layers), ``now`` the time the
    proposed exceptions count their days from."""
    from forge_policy.audit.insights import summarize

    log = _Log.read(records)
    clusters = _clusters(log)
    excepted = _excepted(settings, now)
    # calls an exception now lets through are no evidence against their behavior any more
    covered = {
        ref
        for where, cluster in clusters.items()
        if where in excepted
        for ref, _ in cluster.blocks + cluster.overrides
    }
    summary = summarize(
        dict(r) for ref, r in zip(log.refs, log.records, strict=True) if ref not in covered
    )
    found: list[tuple[str, str, str, Mapping[str, Any] | None, dict[str, Any], str]] = []
    for behavior_id, insight in summary.behaviors.items():
        behavior = catalog.get(behavior_id)
        if (
            behavior is None
            or insight.blocks < MIN_BLOCKS
            or insight.band
            not in (
                "review",
                "ineffective",
            )
        ):
            continue
        per_session = [
            tallies[behavior_id].overrides
            for tallies in summary.sessions.values()
            if behavior_id in tallies and tallies[behavior_id].blocks
        ]
        proposal = _rate_change(behavior, str(insight.band), per_session)
        if proposal is None:
            continue
        kind, title, change, proposed = proposal
        evidence = {
            "blocks": insight.blocks,
            "overrides": insight.overrides,
            "override_rate": round(float(insight.override_rate or 0.0), 3),
            "band": insight.band,
            "mechanisms": dict(sorted(insight.mechanisms.items())),
            "sessions": len(per_session),
            "ladder_now": ladder_text(behavior.default_level.label, _steps(behavior)),
            "ladder_proposed": proposed,
            **log.span(behavior_id, ("block", "override")),
        }
        found.append((kind, behavior_id, title, change, evidence, _refusal(behavior, settings)))
    found += _exceptions(clusters, excepted, catalog, settings, now)
    found += _never_fired(log, catalog, settings)
    found += _ladders(log, catalog)
    ordered = sorted(found, key=lambda f: (ORDER.index(f[0]), f[1], _canonical(f[3])))
    return [
        Suggestion(
            number=index,
            key=_key(kind, behavior_id, change),
            kind=kind,
            behavior=behavior_id,
            title=title,
            change=change,
            evidence=evidence,
            refused=refused,
        )
        for index, (kind, behavior_id, title, change, evidence, refused) in enumerate(ordered, 1)
    ]


def find(found: Sequence[Suggestion], wanted: str) -> Suggestion:
    """The suggestion ``wanted`` names: ``N``, ``KEY`` or ``N:KEY`` (both must agree).
    :class:`LookupError` says why none fits (the log changed since it was listed).

    >>> s = Suggestion(1, "0a1b2c3d", "ladder", "x", "x's ladder", None, {})
    >>> find([s], "1:0a1b2c3d") is find([s], "0a1b2c3d") is find([s], "1") is s
    True
    >>> find([s], "1:ffffffff")
    Traceback (most recent call last):
    LookupError: suggestion 1 is now 0a1b2c3d (x's ladder), not ffffffff (it is gone): the \
audit log changed since it was listed; run forge-policy suggest again
    """
    number_text, _, key = wanted.partition(":")
    if not key and not number_text.isdigit():
        number_text, key = "", number_text
    by_key = {s.key: s for s in found}
    changed = "the audit log changed since it was listed; run forge-policy suggest again"
    if number_text and not number_text.isdigit():
        raise LookupError(f"--apply {wanted!r}: expected N, KEY or N:KEY (as suggest lists them)")
    if number_text:
        number = int(number_text)
        chosen = found[number - 1] if 1 <= number <= len(found) else None
        elsewhere = by_key.get(key)
        where = f" (it is now number {elsewhere.number})" if elsewhere else " (it is gone)"
        if chosen is None:
            if key:
                raise LookupError(
                    f"there is no suggestion {number} now, not {key}{where}: {changed}"
                )
            raise LookupError(
                f"no suggestion {number} (there are {len(found)}); run forge-policy suggest"
            )
        if key and chosen.key != key:
            raise LookupError(
                f"suggestion {number} is now {chosen.key} ({chosen.title}), not {key}{where}: "
                f"{changed}"
            )
        return chosen
    if key not in by_key:
        raise LookupError(f"no suggestion has the key {key!r} now (already applied, or {changed})")
    return by_key[key]


# --- reading the log ---------------------------------------------------------------------------


@attrs.define
class _Log:
    """The records with their numbers (``seq``, else the position from the oldest, 1 first:
    what ``audit log`` and ``explain --record`` show)."""

    records: list[Mapping[str, Any]]
    refs: list[int]

    @classmethod
    def read(cls, records: Iterable[Mapping[str, Any]]) -> _Log:
        """The records, less those of a behavior that come before its latest ``tuning``
        record: that evidence was acted on (applied again, it would tune twice)."""
        every = list(records)
        tuned = {  # an applied exception leaves the rest of its behavior's evidence
            r.get("behavior_id"): index
            for index, r in enumerate(every)
            if r.get("kind") == "tuning" and r.get("action") != "exception"
        }
        kept: list[Mapping[str, Any]] = []
        refs: list[int] = []
        for index, record in enumerate(every):
            behavior_id = record.get("behavior_id")
            if behavior_id in tuned and index < tuned[behavior_id]:
                continue
            seq = record.get("seq")
            kept.append(record)
            refs.append(seq if isinstance(seq, int) and not isinstance(seq, bool) else index + 1)
        return cls(kept, refs)

    def sessions(self) -> set[str]:
        return {str(r["session_id"]) for r in self.records if isinstance(r.get("session_id"), str)}

    def span(self, behavior_id: str, kinds: tuple[str, ...]) -> dict[str, Any]:
        """The newest :data:`REFS` record numbers of ``behavior_id`` of ``kinds``, and the
        first and last timestamps."""
        picked = [
            (ref, r)
            for ref, r in zip(self.refs, self.records, strict=True)
            if r.get("behavior_id") == behavior_id and r.get("kind") in kinds
        ]
        return _span(picked)


def _span(picked: Sequence[tuple[int, Mapping[str, Any]]]) -> dict[str, Any]:
    stamps = sorted(str(r["timestamp"]) for _, r in picked if isinstance(r.get("timestamp"), str))
    return {
        "records": [ref for ref, _ in picked[-REFS:]],
        "first": stamps[0] if stamps else None,
        "last": stamps[-1] if stamps else None,
    }


# --- override rates ----------------------------------------------------------------------------


def _steps(behavior: Behavior) -> list[tuple[int, str]]:
    return [(step.after, step.level.label) for step in behavior.escalation]


def _rate_change(
    behavior: Behavior, band: str, per_session: list[int]
) -> tuple[str, str, dict[str, Any], str] | None:
    """``(kind, title, change, the ladder it makes)`` for a behavior overridden too often, or
    None (nothing below its blocks to move: it hard-blocks, which no override passes)."""
    default = behavior.default_level.label
    steps = _steps(behavior)
    if band == "ineffective":
        level = _DEMOTED.get(default, default)
        lowered = _clean(level, [(after, _DEMOTED.get(lv, lv)) for after, lv in steps])
        if (level, lowered) == (default, steps):
            return None
        entry: dict[str, Any] = {}
        if level != default:
            entry["level"] = level
        if lowered != steps:
            entry["escalation"] = [{"after": a, "level": lv} for a, lv in lowered]
        title = (
            f"demote {behavior.id}: {ladder_text(default, steps)} → "
            f"{ladder_text(level, lowered)} (overridden too often to be worth a block)"
        )
        return "demote", title, {"behaviors": {behavior.id: entry}}, ladder_text(level, lowered)
    shift = max(1, int(statistics.median(per_session or [1])))
    if default in _BLOCKING:
        if default == "hard_block":
            return None
        level = "warning"
        raised = [(1 + shift, default), *((a + shift, lv) for a, lv in steps)]
    else:
        level = default
        raised = [(a + shift if lv in _BLOCKING else a, lv) for a, lv in steps]
        if raised == steps:
            return None
    raised = _clean(level, raised)
    entry = {"escalation": [{"after": a, "level": lv} for a, lv in raised]}
    if level != default:
        entry["level"] = level
    title = (
        f"raise {behavior.id}'s threshold: {ladder_text(default, steps)} → "
        f"{ladder_text(level, raised)} (a typical session overrode it {shift} time"
        f"{'s' if shift != 1 else ''})"
    )
    change = {"behaviors": {behavior.id: entry}}
    return "raise-threshold", title, change, ladder_text(level, raised)


def _clean(level: str, steps: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """The steps that still raise the level (SPEC §3.10: levels never go down)."""
    from forge_policy.config.layers import LEVELS

    kept: list[tuple[int, str]] = []
    current = LEVELS.index(level)
    for after, step in steps:
        if LEVELS.index(step) > current:
            kept.append((after, step))
            current = LEVELS.index(step)
    return kept


def ladder_text(level: str, steps: Sequence[tuple[int, str]]) -> str:
    """``warning, soft_block from 3``.

    >>> ladder_text("nudge", [(3, "soft_block"), (5, "hard_block")])
    'nudge, soft_block from 3, hard_block from 5'
    """
    return ", ".join([level, *(f"{lv} from {a}" for a, lv in steps)])


def _refusal(behavior: Behavior, settings: Settings | None) -> str:
    """Why no change of ``behavior`` may be applied here ("" when it may)."""
    if settings is not None and settings.locked(behavior.id):
        where = settings.origins.get(f"behaviors.{behavior.id}.locked") or "the managed layer"
        return f"{behavior.id} is locked by {where}: a project may tighten it, never loosen it"
    if behavior.bypass == "never":
        return f"{behavior.id} is marked bypass: never: it is not loosened"
    return ""


# --- exceptions --------------------------------------------------------------------------------


def command_of(record: Mapping[str, Any]) -> str | None:
    """The whole shell command of a ``block``/``violation`` record, runs of whitespace as one
    (what an exception's ``command`` compares), or None: no command, or one that was cut or
    redacted when recorded (a match on it would not be the call).

    >>> command_of({"event_input": {"tool_input": {"command": " npm  install  x "}}})
    'npm install x'
    >>> command_of({"event_input": {"tool_input": {"command": "x" * 9}, "cut": True}})
    """
    from forge_policy.secrets import REDACTED

    event_input = record.get("event_input")
    if not isinstance(event_input, dict) or event_input.get("cut"):
        return None
    tool_input = event_input.get("tool_input")
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    if not isinstance(command, str) or REDACTED in command or command.endswith("…"):
        return None
    return " ".join(command.split()) or None


def _clusters(log: _Log) -> dict[tuple[str, str], _Cluster]:
    """The blocked calls per (behavior, command), each with the overrides that let it through.
    An ``override`` record names no call: it is the block of its session, behavior and counter
    (the one it released); a ``violation`` marked ``overridden`` carries its own call."""
    clusters: dict[tuple[str, str], _Cluster] = {}
    blocked: dict[tuple[object, object, object], str] = {}  # (session, behavior, counter)
    seen: set[object] = set()
    for ref, record in zip(log.refs, log.records, strict=True):
        kind = record.get("kind")
        behavior_id = record.get("behavior_id")
        if not isinstance(behavior_id, str) or record.get("shadow"):
            continue
        where = (record.get("session_id"), behavior_id, record.get("counter"))
        if kind == "block":
            command = command_of(record)
            if command is None:
                blocked.pop(where, None)
                continue
            blocked[where] = command
            cluster = clusters.setdefault((behavior_id, command), _Cluster())
            cluster.blocks.append((ref, record))
        elif kind == "override" and where in blocked:
            override_id = record.get("override_id") or ref
            if override_id in seen:
                continue
            seen.add(override_id)
            clusters[(behavior_id, blocked[where])].overrides.append((ref, record))
        elif kind == "violation" and record.get("overridden"):
            command = command_of(record)
            if command is not None:
                cluster = clusters.setdefault((behavior_id, command), _Cluster())
                cluster.overrides.append((ref, record))
    return clusters


@attrs.define
class _Cluster:
    """One exact call of one behavior: the records that blocked it and those that let it
    through by an override."""

    blocks: list[tuple[int, Mapping[str, Any]]] = attrs.Factory(list)
    overrides: list[tuple[int, Mapping[str, Any]]] = attrs.Factory(list)


def _excepted(settings: Settings | None, now: float) -> set[tuple[str, str]]:
    """(behavior, command) of every command exception in force on the day of ``now``."""
    today = datetime.date.fromtimestamp(now)
    return {
        (rule.behavior, " ".join(rule.value.split()))
        for rule in (settings.active_exceptions(today) if settings is not None else ())
        if rule.kind == "command"
    }


def _exceptions(
    clusters: Mapping[tuple[str, str], _Cluster],
    existing: set[tuple[str, str]],
    catalog: Catalog,
    settings: Settings | None,
    now: float,
) -> list[tuple[str, str, str, Mapping[str, Any] | None, dict[str, Any], str]]:
    today = datetime.date.fromtimestamp(now)
    found: list[tuple[str, str, str, Mapping[str, Any] | None, dict[str, Any], str]] = []
    for (behavior_id, command), cluster in sorted(clusters.items()):
        behavior = catalog.get(behavior_id)
        if (
            len(cluster.overrides) < MIN_CLUSTER
            or behavior is None
            or (behavior_id, command) in existing
            or _refusal(behavior, settings)
            or "hard_block" in {behavior.default_level.label, *(lv for _, lv in _steps(behavior))}
        ):
            continue
        members = sorted(cluster.blocks + cluster.overrides, key=lambda m: m[0])
        sessions = {str(r.get("session_id")) for _, r in members}
        variants: dict[str, int] = {}
        for _, r in cluster.blocks:
            raw = r["event_input"]["tool_input"]["command"]
            variants[raw] = variants.get(raw, 0) + 1
        until = today + datetime.timedelta(days=EXCEPTION_DAYS)
        overrides = len(cluster.overrides)
        reason = (
            f"overridden {overrides} times in {len(sessions)} session"
            f"{'s' if len(sessions) != 1 else ''} (forge-policy suggest)"
        )
        rule = {
            "behavior": behavior_id,
            "match": {"command": command},
            "until": until.isoformat(),
            "reason": reason,
        }
        mechanisms = (
            str(r.get("mechanism") or r.get("overridden") or "unknown")
            for _, r in cluster.overrides
        )
        evidence = {
            "blocks": len(cluster.blocks),
            "overrides": overrides,
            "mechanisms": _count(mechanisms),
            "sessions": len(sessions),
            "covers": [{"command": raw, "blocks": n} for raw, n in sorted(variants.items())],
            **_span(members),
        }
        title = (
            f"exception for {behavior_id}: the command {command!r} until {until.isoformat()} "
            f"(blocked, then overridden {overrides} times)"
        )
        found.append(("exception", behavior_id, title, {"exceptions": [rule]}, evidence, ""))
    return found


def _count(values: Iterable[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for value in values:
        counts[value] = counts.get(value, 0) + 1
    return dict(sorted(counts.items()))


# --- behaviors that never fire, ladders never climbed ------------------------------------------


def _never_fired(
    log: _Log, catalog: Catalog, settings: Settings | None
) -> list[tuple[str, str, str, Mapping[str, Any] | None, dict[str, Any], str]]:
    from forge_policy.catalog.behavior import DEFAULT_PROFILE

    sessions = log.sessions()
    if len(sessions) < MIN_SESSIONS:
        return []
    fired = {r.get("behavior_id") for r in log.records if r.get("kind") != "tuning"}
    stamps = sorted(str(r["timestamp"]) for r in log.records if isinstance(r.get("timestamp"), str))
    profile = (settings.profile if settings is not None else None) or DEFAULT_PROFILE
    found: list[tuple[str, str, str, Mapping[str, Any] | None, dict[str, Any], str]] = []
    for behavior in catalog.enabled():
        switched_off = settings is not None and behavior.id in settings.disable  # FORGE_DISABLE
        if behavior.id in fired or behavior.excluded_by(profile) or switched_off:
            continue
        refused = _refusal(behavior, settings)
        if not refused and behavior.id == "protect-governance":
            refused = "protect-governance guards the governance files: it is never switched off"
        title = (
            f"{behavior.id} never fired in {len(sessions)} sessions: switch it off, or check "
            f"that it can fire ({', '.join(sorted(behavior.events))})"
        )
        evidence = {
            "sessions": len(sessions),
            "first": stamps[0] if stamps else None,
            "last": stamps[-1] if stamps else None,
            "events": sorted(behavior.events),
            "level": behavior.default_level.label,
        }
        change = {"behaviors": {behavior.id: {"enabled": False}}}
        found.append(("disable", behavior.id, title, change, evidence, refused))
    return found


def _ladders(
    log: _Log, catalog: Catalog
) -> list[tuple[str, str, str, Mapping[str, Any] | None, dict[str, Any], str]]:
    highest: dict[str, dict[str, int]] = {}  # behavior -> session -> highest counter
    for record in log.records:
        counter = record.get("counter")
        behavior_id = record.get("behavior_id")
        if (
            record.get("kind") not in ("violation", "block", "override", "exception")
            or not isinstance(behavior_id, str)
            or not isinstance(counter, int)
            or isinstance(counter, bool)
        ):
            continue
        session = highest.setdefault(behavior_id, {})
        sid = str(record.get("session_id"))
        session[sid] = max(session.get(sid, 0), counter)
    found: list[tuple[str, str, str, Mapping[str, Any] | None, dict[str, Any], str]] = []
    for behavior_id, sessions in sorted(highest.items()):
        behavior = catalog.get(behavior_id)
        if behavior is None or not behavior.escalation:
            continue
        top = max(sessions.values())
        steps = _steps(behavior)
        unreached = [(a, lv) for a, lv in steps if a > top]
        if not unreached:
            continue
        reached = [lv for a, lv in steps if a <= top]
        level = reached[-1] if reached else behavior.default_level.label
        title = (
            f"{behavior_id}'s ladder was never climbed past {level}: "
            f"{', '.join(f'{lv} from {a}' for a, lv in unreached)} never reached "
            f"(at most {top} in one session)"
        )
        evidence = {
            "sessions": len(sessions),
            "highest_count": top,
            "ladder_now": ladder_text(behavior.default_level.label, steps),
            **log.span(behavior_id, ("violation", "block", "override", "exception")),
        }
        found.append(("ladder", behavior_id, title, None, evidence, ""))
    return found


# --- identity ---------------------------------------------------------------------------------


def _canonical(change: Mapping[str, Any] | None) -> str:
    return json.dumps(jsonable(change), sort_keys=True)


def _key(kind: str, behavior_id: str, change: Mapping[str, Any] | None) -> str:
    """What a suggestion changes, hashed: an exception by its behavior and match (its ``until``
    and reason move with the day and the counts), anything else by the whole change."""
    identity: Any = change
    if change is not None and "exceptions" in change:
        identity = [{"behavior": e["behavior"], "match": e["match"]} for e in change["exceptions"]]
    text = json.dumps([kind, behavior_id, jsonable(identity)], sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


def jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return value
