"""Round-trip edits of a configuration layer file (``<FORGE_ROOT>/config.yaml``, SPEC §10).

``forge-policy on|off|strict|relaxed ID`` write one key of a behavior's entry in the project
layer instead of copying the catalog (upgrades of the built-in catalog keep reaching the
project)::

    behaviors:
      search-first: {enabled: false}
      verify-before-done: {tuning: strict}

:func:`set_behavior_setting` sets or removes one such key. The file is edited as a document, not
rewritten from data: comments, key order, quoting, flow or block style, and every other key
(``floor:``, ``testing:``, ``exceptions:``…) stay as they were; an entry it creates is written
in the flow style above. Removing the last key of an entry removes the entry, an emptied
``behaviors:`` goes too, and a file left with nothing to say is removed (its top-level comments
kept, if any), so ``off`` then ``on`` leaves the project as it was. A file that does not
parse, or whose ``behaviors`` is not a mapping, is refused with :class:`ProjectConfigError`
naming ``file:line`` and nothing is written. The file is replaced atomically.

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp(), "config.yaml")
>>> _ = path.write_text("# team settings\\nfloor: off  # CI has its own\\n")
>>> set_behavior_setting(str(path), "search-first", "enabled", False)
True
>>> print(path.read_text(), end="")
# team settings
floor: off  # CI has its own
behaviors:
  search-first: {enabled: false}
>>> set_behavior_setting(str(path), "search-first", "enabled", None)
True
>>> print(path.read_text(), end="")
# team settings
floor: off  # CI has its own
"""

from __future__ import annotations

import contextlib
import datetime
import os

from forge_policy.errors import ProjectConfigError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

BEHAVIORS = "behaviors"
EXCEPTIONS = "exceptions"


def read_setting(path: str, behavior_id: str, key: str) -> tuple[object, int]:
    """``behaviors.<id>.<key>`` of a layer file and its 1-based line: ``(None, 0)`` when the
    file, the entry or the key is absent. :class:`ProjectConfigError` when it does not parse.

    >>> read_setting("/nonexistent/config.yaml", "x", "enabled")
    (None, 0)
    """
    from forge_policy.catalog.yaml_io import key_line, plain

    text = _read(path)
    if text is None:
        return None, 0
    document = _load(_yaml_for(text), text, path)
    behaviors = _behaviors(document, path, create=False)
    entry = behaviors.get(behavior_id) if behaviors is not None else None
    if not isinstance(entry, dict) or key not in entry:
        return None, 0
    return plain(entry[key]), key_line(entry, key)


def set_behavior_setting(path: str, behavior_id: str, key: str, value: object) -> bool:
    """Set ``behaviors.<behavior_id>.<key>`` of the layer file at ``path`` to ``value``
    (``None`` removes it; see the module doc). Returns whether the file changed; a file that
    does not exist is created only when there is something to write."""
    from io import StringIO

    from forge_policy.catalog.yaml_io import commented_map

    text = _read(path)
    yaml = _yaml_for(text or "")
    document = _load(yaml, text, path) if text and text.strip() else None
    if document is None:
        if value is None:
            return False
        document = commented_map()
    behaviors = _behaviors(document, path, create=value is not None)
    if behaviors is None:
        return False
    entry = behaviors.get(behavior_id)
    if entry is not None and not isinstance(entry, dict):
        raise ProjectConfigError(
            f"{_where(path, behaviors, behavior_id)}: {BEHAVIORS}.{behavior_id}: expected a "
            f"mapping such as {{enabled: false}}, got {type(entry).__name__}; nothing was changed"
        )
    if value is None:
        if entry is None or key not in entry:
            return False
        del entry[key]
        if not entry:
            del behaviors[behavior_id]
        if not behaviors:
            del document[BEHAVIORS]
    else:
        if entry is None:
            entry = commented_map()
            entry.fa.set_flow_style()
            behaviors[behavior_id] = entry
        elif key in entry and entry[key] == value and type(entry[key]) is type(value):
            return False
        entry[key] = value
    if not document:  # nothing left to say: its comments stay, else the file goes
        comments = [line for line in (text or "").splitlines(True) if line.startswith("#")]
        if comments:
            write_text(path, "".join(comments))
        elif text is not None:
            os.unlink(path)
        return text is not None
    buffer = StringIO()
    yaml.dump(document, buffer)
    new = buffer.getvalue()
    if new == (text or ""):
        return False
    write_text(path, new)
    return True


def add_exception(
    path: str, behavior_id: str, kind: str, value: str, until: datetime.date, reason: str
) -> bool:
    """Append ``{behavior, match: {kind: value}, until, reason}`` to ``exceptions:`` of the
    layer file at ``path`` (made when absent, in flow style as SPEC §10 writes it; every other
    key and comment kept). Returns False when the same behavior and match is already there
    with that ``until`` (nothing written); an entry of the same behavior and match with
    another ``until`` is updated in place rather than doubled.

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp(), "config.yaml")
    >>> _ = path.write_text("floor: off  # CI has its own\\n")
    >>> add_exception(str(path), "risky-commands", "command", "npm install left-pad",
    ...               datetime.date(2030, 1, 31), "vendored")
    True
    >>> print(path.read_text(), end="")
    floor: off  # CI has its own
    exceptions:
    - {behavior: risky-commands, match: {command: npm install left-pad}, until: 2030-01-31, reason: vendored}
    """  # noqa: E501 (the flow entry is one line, as written)
    from io import StringIO

    from forge_policy.catalog.yaml_io import commented_list, commented_map

    text = _read(path)
    yaml = _yaml_for(text or "")
    document = _load(yaml, text, path) if text and text.strip() else None
    if document is None:
        document = commented_map()
    listed = document.get(EXCEPTIONS)
    if listed is None:
        listed = document[EXCEPTIONS] = commented_list()
    if not isinstance(listed, list):
        raise ProjectConfigError(
            f"{_where(path, document, EXCEPTIONS)}: {EXCEPTIONS}: expected a list of "
            "{behavior, match, until, reason}; nothing was changed"
        )
    for entry in listed:
        if (
            isinstance(entry, dict)
            and entry.get("behavior") == behavior_id
            and isinstance(entry.get("match"), dict)
            and dict(entry["match"]) == {kind: value}
        ):
            if str(entry.get("until")) == until.isoformat():
                return False
            entry["until"] = until
            entry["reason"] = reason
            break
    else:
        match = commented_map([(kind, value)])
        match.fa.set_flow_style()
        entry = commented_map(
            [("behavior", behavior_id), ("match", match), ("until", until), ("reason", reason)]
        )
        entry.fa.set_flow_style()
        listed.append(entry)
    buffer = StringIO()
    yaml.dump(document, buffer)
    write_text(path, buffer.getvalue())
    return True


# --- helpers ----------------------------------------------------------------------------------


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except FileNotFoundError:
        return None
    except UnicodeDecodeError as exc:
        raise ProjectConfigError(f"{path}: not UTF-8 text (byte {exc.start})") from None


def _yaml_for(text: str) -> Any:
    """A round-trip YAML that writes in the file's own indentation."""
    from forge_policy.catalog.yaml_io import round_trip_yaml

    return round_trip_yaml(text)


def _load(yaml: Any, text: str | None, path: str) -> Any:
    from forge_policy.catalog.yaml_io import parse_yaml

    if not text or not text.strip():
        return None
    _, issues = parse_yaml(text, path)  # positions and the one error mapping
    if issues:
        raise ProjectConfigError(f"{issues[0]}; fix it first, nothing was changed")
    document = yaml.load(text)
    if document is not None and not isinstance(document, dict):
        raise ProjectConfigError(
            f"{path}:1: expected a mapping at the top level; nothing was changed"
        )
    return document


def _behaviors(document: Any, path: str, *, create: bool) -> Any:
    """The ``behaviors`` mapping of ``document`` (made when ``create``), or None."""
    from forge_policy.catalog.yaml_io import commented_map

    if document is None:
        return None
    behaviors = document.get(BEHAVIORS)
    if behaviors is None:
        if not create:
            return None
        behaviors = commented_map()
        document[BEHAVIORS] = behaviors
    if not isinstance(behaviors, dict):
        raise ProjectConfigError(
            f"{_where(path, document, BEHAVIORS)}: {BEHAVIORS}: expected a mapping of behavior "
            "ids (such as 'search-first: {enabled: false}'); nothing was changed"
        )
    return behaviors


def _where(path: str, mapping: Any, key: str) -> str:
    from forge_policy.catalog.yaml_io import key_line

    return f"{path}:{key_line(mapping, key) or 1}"


def write_text(path: str, text: str) -> None:
    """Replace the file at ``path`` with ``text`` atomically (its mode kept)."""
    folder = os.path.dirname(path) or "."
    os.makedirs(folder, exist_ok=True)
    tmp = os.path.join(folder, f".{os.path.basename(path)}.tmp-{os.getpid()}")
    try:
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.write(text)
        with contextlib.suppress(FileNotFoundError):
            os.chmod(tmp, os.stat(path).st_mode & 0o777)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
