"""Keyed flags (extension of SPEC §5's flags): one session flag per item of a field.

A ``set_flag`` or ``check_flag`` trigger with ``keys: FIELD`` works on one flag per string the
field yields instead of on one flag: search-first sets ``searched`` keyed by each path a Grep,
Glob or Read looked at, and a write checks the keys that would cover its file. Each keyed flag
is an ordinary session flag named ``NAME:KEY`` (``searched:/repo/src/``), so the state keeps its
dotforge shape (``flags: {NAME: true}``).

**Bounded.** A flag holds at most :data:`KEY_LIMIT` keys. Setting a key that is there, or a
check that finds it, moves it to the end when it is in the older half; past the limit the first
keys in the session's order (the least recently used) are dropped. A session that reads 10,000
files keeps credit for the last :data:`KEY_LIMIT` paths it touched, not for all of them. (A
store that did not keep a document's key order would drop other keys than the oldest; the
bound would hold all the same.)

>>> flags = {}
>>> changes = set_keys(flags, "seen", ["/a", "/b"], limit=2)
>>> changes, sorted(flags)
([('seen:/a', True), ('seen:/b', True)], ['seen:/a', 'seen:/b'])
>>> set_keys(flags, "seen", ["/c"], limit=2), list(flags)
([('seen:/c', True), ('seen:/a', False)], ['seen:/b', 'seen:/c'])
>>> found_key(flags, "seen", ["/x", "/c"])
'seen:/c'
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, MutableMapping
    from typing import Any

#: the most keys one keyed flag holds in a session (each is a path of at most 4,096 characters)
KEY_LIMIT = 512


def keyed_name(flag: str, key: str) -> str:
    """The session flag that stands for ``key`` of ``flag``.

    >>> keyed_name("searched", "/r/src/")
    'searched:/r/src/'
    """
    return f"{flag}:{key}"


def as_keys(value: object) -> list[str]:
    """The keys a field's value gives: a string is one key, a list its non-empty strings.

    >>> as_keys("/a"), as_keys(["/a", "", 3, "/b"]), as_keys("")
    (['/a'], ['/a', '/b'], [])
    """
    items = value if isinstance(value, list) else [value]
    return [item for item in items if isinstance(item, str) and item]


def set_keys(
    flags: MutableMapping[str, Any], flag: str, keys: Iterable[str], limit: int = KEY_LIMIT
) -> list[tuple[str, bool]]:
    """Set ``flag`` for each key in ``flags`` (or refresh it, see :func:`touch`); returns the
    changes made, in order, as ``(flag name, present)``."""
    changes: list[tuple[str, bool]] = []
    held = _held(flags, flag)
    for key in list(dict.fromkeys(keys))[-limit:]:  # more than the limit: the last ones stay
        name = keyed_name(flag, key)
        if name in flags:
            changes.extend(touch(flags, flag, name, held, limit))
            continue
        flags[name] = True
        held.append(name)
        changes.append((name, True))
    while len(held) > limit:
        name = held.pop(0)
        del flags[name]
        changes.append((name, False))
    return changes


def found_key(flags: MutableMapping[str, Any], flag: str, keys: Iterable[str]) -> str:
    """The first of ``keys`` set for ``flag`` (its flag name), or ``""``."""
    for key in keys:
        name = keyed_name(flag, key)
        if flags.get(name) is True:
            return name
    return ""


def touch(
    flags: MutableMapping[str, Any],
    flag: str,
    name: str,
    held: list[str] | None = None,
    limit: int = KEY_LIMIT,
) -> list[tuple[str, bool]]:
    """Move a keyed flag that is in the older half of its flag's keys to the end (dropped and
    set again); a recent one stays where it is, so re-reading a file writes no state."""
    held = _held(flags, flag) if held is None else held
    try:
        position = held.index(name)
    except ValueError:
        return []
    if position >= len(held) - limit // 2:
        return []
    held.append(held.pop(position))
    del flags[name]
    flags[name] = True
    return [(name, False), (name, True)]


def _held(flags: MutableMapping[str, Any], flag: str) -> list[str]:
    """The names of ``flag``'s keyed flags, oldest first."""
    prefix = keyed_name(flag, "")
    return [name for name in flags if name.startswith(prefix)]
