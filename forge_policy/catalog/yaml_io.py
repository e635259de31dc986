"""The one owner of YAML: parsing with positions, the YAML-error mapping, round-trip edits.

Every module that reads or writes YAML (the catalog loader, project tuning, the project config)
goes through here, and this is the only module that imports ruamel.yaml, inside the functions
that need it: a warm hook, which reads the compiled cache, never loads it.

Positions are 1-based ``(line, column)``; a *path* addresses a value inside a document as a
tuple of mapping keys and sequence indexes, e.g. ``("policy", "triggers", 0, "action")``.

>>> import tempfile, os
>>> folder = tempfile.mkdtemp()
>>> with open(os.path.join(folder, "x.yaml"), "w") as handle:
...     _ = handle.write("a:\\n  b: [1, 2]\\n")
>>> document, issues = read_yaml(os.path.join(folder, "x.yaml"), "x.yaml")
>>> issues, position(document, ("a", "b", 1))
([], (2, 10))
"""

from __future__ import annotations

import os

from forge_policy._limits import MAX_DEPTH, too_deep
from forge_policy.errors import CatalogError, Issue

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    Path = Sequence[str | int]

MAX_FILE_BYTES = 1 << 20


def display(path: str | os.PathLike[str]) -> str:
    """Paths below the working directory are shown relative, others absolute."""
    absolute = os.path.abspath(path)
    cwd = os.getcwd()
    if absolute.startswith(cwd + os.sep):
        return os.path.relpath(absolute, cwd)
    return absolute


def _yaml() -> Any:
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.allow_duplicate_keys = False
    return yaml


def read_yaml(path: str | os.PathLike[str], shown: str) -> tuple[Any, list[Issue]]:
    """Parse one YAML file keeping positions; problems come back as issues, never raised.

    ``shown`` is how the file is named in the issues.
    """
    try:
        if os.path.islink(path) and not os.path.exists(path):
            return None, [Issue(shown, 0, 0, "", "broken symlink")]
        size = os.stat(path).st_size
        if size > MAX_FILE_BYTES:
            return None, [
                Issue(shown, 0, 0, "", f"file too large ({size} bytes, at most {MAX_FILE_BYTES})")
            ]
        with open(path, "rb") as handle:
            text = handle.read().decode("utf-8")
    except FileNotFoundError:
        return None, [Issue(shown, 0, 0, "", "file not found")]
    except UnicodeDecodeError as exc:
        return None, [Issue(shown, 0, 0, "", f"not UTF-8 text (byte {exc.start})")]
    except OSError as exc:
        return None, [Issue(shown, 0, 0, "", f"cannot read: {exc.strerror or exc}")]
    return parse_yaml(text, shown)


def parse_yaml(text: str, shown: str) -> tuple[Any, list[Issue]]:
    """Parse YAML text keeping positions; a syntax error becomes one issue with its mark.

    >>> parse_yaml("a: [1\\n", "f.yaml")[1][0].line
    2
    """
    from ruamel.yaml.error import YAMLError

    deep = f"nested deeper than {MAX_DEPTH} levels: refused"
    try:
        document = _yaml().load(text)
    except YAMLError as exc:
        return None, [yaml_error_issue(exc, shown)]
    except RecursionError:  # ruamel composes nodes recursively: a bounded depth, not a crash
        return None, [Issue(shown, 0, 0, "", deep)]
    if too_deep(document):  # before any recursive walk over it (plain, structuring, lints)
        return None, [Issue(shown, 0, 0, "", deep)]
    return document, []


def yaml_error_issue(exc: Exception, shown: str) -> Issue:
    """The one mapping of a ruamel.yaml error to an :class:`~forge_policy.errors.Issue`."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    if mark is None:
        return Issue(shown, 0, 0, "", f"invalid YAML: {exc}")
    parts = (getattr(exc, "context", None), getattr(exc, "problem", None))
    problem = " ".join(str(p) for p in parts if p)
    return Issue(shown, mark.line + 1, mark.column + 1, "", f"invalid YAML: {problem}")


def _mark(container: Any, step: str | int) -> tuple[int, int] | None:
    """Where the value under ``step`` of a ruamel container starts, if ruamel recorded it."""
    lc = getattr(container, "lc", None)
    if lc is None:
        return None
    try:
        line, column = lc.value(step) if isinstance(container, dict) else lc.item(step)
    except (KeyError, TypeError, IndexError, AttributeError):
        return None
    return int(line) + 1, int(column) + 1


def position(document: Any, path: Path) -> tuple[int, int]:
    """The position of the value at ``path``, or of its nearest ancestor that exists.

    A document without marks (plain data) is at ``(1, 1)``.
    """
    lc = getattr(document, "lc", None)
    line = lc.line + 1 if lc is not None and lc.line is not None else 1
    column = lc.col + 1 if lc is not None and lc.col is not None else 1
    node = document
    for step in path:
        in_mapping = isinstance(node, dict) and isinstance(step, str) and step in node
        in_sequence = isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node)
        if not (in_mapping or in_sequence):
            break
        found = _mark(node, step)
        node = node[step]
        if found is not None:
            line, column = found
    return line, column


def key_line(mapping: Any, key: str) -> int:
    """The 1-based line of ``key`` itself in a ruamel mapping (0 when unknown)."""
    try:
        return int(mapping.lc.key(key)[0]) + 1
    except (AttributeError, KeyError, TypeError, IndexError):
        return 0


def plain(value: Any) -> Any:
    """ruamel's commented containers and scalars as plain JSON values (str, int, float…).

    >>> from ruamel.yaml import YAML
    >>> document = YAML(typ="rt").load("a: 1.5\\nb: [x, null]\\n")
    >>> type(document["a"]).__name__, plain(document)
    ('ScalarFloat', {'a': 1.5, 'b': ['x', None]})
    """
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    return str(value)


# --- round-trip edits of index.yaml -------------------------------------------------------------


def _move_trailing_comment(entry: Any, source: str, target: str) -> None:
    """Keep comment lines that follow an entry's last key after the entry's new last key.

    ruamel.yaml attaches them to the last key (after its own end-of-line comment, if any), so a
    key appended after it, or the key's removal, would move or drop them.
    """
    import copy

    items = entry.ca.items
    slot = items.get(source)
    token = slot[2] if slot and len(slot) > 2 else None
    if token is None:
        return
    head, _, tail = token.value.partition("\n")
    if not tail:
        return
    if source in entry and head:
        token.value = head + "\n"
    else:
        items.pop(source, None)
    existing = items.get(target)
    if existing and len(existing) > 2 and existing[2] is not None:
        existing[2].value = existing[2].value.rstrip("\n") + "\n" + tail
        return
    moved = copy.copy(token)
    moved.value = "\n" + tail
    items[target] = [None, None, moved, None]


def edit_index_entry(
    index_path: str | os.PathLike[str], behavior_id: str, key: str, value: object
) -> bool:
    """Set ``key`` of a behavior's entry in an ``index.yaml`` (``None`` removes it).

    Comments, order, quoting and unknown keys are kept; a bare ``- id`` entry becomes a mapping.
    Returns whether the file changed; raises :class:`~forge_policy.CatalogError` when the id is
    not listed. The file is replaced atomically.
    """
    from io import StringIO

    from ruamel.yaml.comments import CommentedMap
    from ruamel.yaml.util import load_yaml_guess_indent

    with open(index_path, encoding="utf-8") as handle:
        text = handle.read()
    _, indent, offset = load_yaml_guess_indent(text)
    indent, offset = indent or 2, offset or 0
    yaml = _yaml()
    yaml.preserve_quotes = True
    # keep the file's own style ("  - id: x" is sequence 4, offset 2, mapping 2)
    yaml.indent(mapping=max(indent - offset, 2), sequence=indent, offset=offset)
    document = yaml.load(text)
    entries = (document.get("behaviors") if isinstance(document, dict) else None) or []
    for place, entry in enumerate(entries):
        if entry == behavior_id:
            entry = CommentedMap([("id", behavior_id)])
            entries[place] = entry
        if isinstance(entry, dict) and entry.get("id") == behavior_id:
            if entry.get(key) == value and (value is not None or key not in entry):
                return False
            last = list(entry)[-1]
            if value is None:
                del entry[key]
                if key == last and entry:
                    _move_trailing_comment(entry, key, list(entry)[-1])
            else:
                entry[key] = value
                if key != last and key == list(entry)[-1]:
                    _move_trailing_comment(entry, last, key)
            break
    else:
        where = display(index_path)
        raise CatalogError(
            [Issue(where, 0, 0, "behaviors", f"no behavior {behavior_id!r} is listed")]
        )
    buffer = StringIO()
    yaml.dump(document, buffer)
    tmp = f"{os.path.join(os.path.dirname(index_path), '.' + os.path.basename(index_path))}"
    tmp = f"{tmp}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write(buffer.getvalue())
    os.replace(tmp, index_path)
    return True


def round_trip_yaml(text: str) -> Any:
    """A round-trip YAML (comments, order and quoting kept) that writes in ``text``'s own
    indentation: the one place outside reading that knows ruamel (layer edits, unfork)."""
    from ruamel.yaml import YAML
    from ruamel.yaml.util import load_yaml_guess_indent

    indent, offset = 2, 0
    if text.strip():
        try:
            _, guessed, guessed_offset = load_yaml_guess_indent(text)
            indent, offset = guessed or 2, guessed_offset or 0
        except Exception:  # the real parse reports the error
            pass
    yaml = YAML(typ="rt")
    yaml.allow_duplicate_keys = False
    yaml.preserve_quotes = True
    yaml.width = 4096
    yaml.indent(mapping=max(indent - offset, 2), sequence=max(indent, 2), offset=offset)
    return yaml


def commented_map(items: Any = ()) -> Any:
    """A round-trip mapping (ruamel's ``CommentedMap``) holding ``items``."""
    from ruamel.yaml.comments import CommentedMap

    return CommentedMap(items)


def commented_list(items: Any = ()) -> Any:
    """A round-trip list (ruamel's ``CommentedSeq``) holding ``items``, in block style."""
    from ruamel.yaml.comments import CommentedSeq

    return CommentedSeq(items)


def flow_list(items: Any) -> Any:
    """A round-trip list written in flow style, its mappings too (an escalation's steps)."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    seq = CommentedSeq()
    for step in items:
        item = CommentedMap(step) if isinstance(step, dict) else step
        if isinstance(item, CommentedMap):
            item.fa.set_flow_style()
        seq.append(item)
    seq.fa.set_flow_style()
    return seq
