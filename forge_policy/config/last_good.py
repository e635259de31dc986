"""Last known good (SPEC §10): what enforces while a catalog or configuration fails to load.

One typo in a project's own behavior file used to leave the hook with no catalog at all, so
every tool call was refused, ``Read`` included, until someone found the file. Instead, each
time a document loads, a copy of what it gave is kept under ``<FORGE_ROOT>/runtime/``; when
the files later fail to load, that copy keeps enforcing and the user is told, on every call,
which file and line broke and the command that shows every error (``forge-policy
validate``). Only when no copy exists (the files never loaded in this project) does a tool
call fail closed.

What a last-good file is
------------------------
``<runtime>/last-good-<name>.json``, one per document ``name`` (``catalog-<hash of the
catalog folder>``; the layered settings use ``settings``): a header line and a JSON body::

    forge-policy-last-good 1 <HMAC-SHA256 of the body, hex>
    {"format": 1, "forge_policy": "0.1.0", "name": "…", "saved_at": "2026-…Z",
     "document": {…}}

sealed with the same key as the compiled catalog cache (``catalog-cache.key`` in the same
folder, :mod:`forge_policy.catalog.cache`), with the same reasoning: a copy written by
anything but this code — an agent's ``Write`` into ``.forge/runtime/`` (which
protect-governance refuses in the first place), a copy from another project (another key), a
copy made for another document (its ``name`` differs) — does not verify and is ignored, so
the hook then fails closed exactly as it would with no copy. Forging one needs the key and
an HMAC computed by code run as the user: SPEC §9's threat model leaves that to the operating
system's floor and a container boundary. A copy written by another forge-policy version is
ignored too: the specs it holds are that version's normal form.

The copy is never trusted over files that load: it is read only after a load failed, and
rewritten after every load that parsed the files (the catalog cache's ``rebuilt`` and
``refreshed``, or when the copy is missing). Writes are atomic (temp file + ``os.replace``)
and never through a symlinked ``runtime/`` or ``.forge/`` (the Harness Home contract).

The loud part: :class:`Fallback` holds the notice every decision carries while a copy
enforces (the first error's ``file:line: field: message`` and ``forge-policy validate``), and
audits one ``diagnostic`` record per distinct failure (a marker beside the copy remembers the
last failure reported, so a thousand calls under one typo write one record, and a new typo
writes another).

>>> import tempfile
>>> folder = tempfile.mkdtemp()
>>> save(folder, "demo", {"answer": 42})
True
>>> saved, why = load(folder, "demo")
>>> saved.document, why
({'answer': 42}, '')
>>> with open(path_of(folder, "demo"), "w") as planted:  # unsealed: an agent's Write
...     _ = planted.write('{"document": {"answer": 0}}')
>>> load(folder, "demo")
(None, 'not sealed by forge-policy (no header line)')
"""

from __future__ import annotations

import json
import time

import attrs

from forge_policy import __version__
from forge_policy.config.saved_copies import exists as exists
from forge_policy.config.saved_copies import path_of as path_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

FORMAT = 1
#: The first word of a last-good file's header line.
MAGIC = b"forge-policy-last-good"
MAX_BYTES = 32 * 1024 * 1024
#: The command that shows every error of the catalog (named in every notice).
VALIDATE = "forge-policy validate"


@attrs.frozen
class Saved:
    """A verified last-good copy: the ``document`` saved, when (``saved_at``, ISO 8601 UTC) and
    the file it was read from."""

    document: dict[str, Any]
    saved_at: str
    path: str


def save(folder: str, name: str, document: Mapping[str, Any]) -> bool:
    """Seal and write ``document`` as the last good copy of ``name`` in ``folder``; False when
    it cannot be written (never an error: the copy is a safety net, not a source of truth)."""
    from forge_policy._time import iso
    from forge_policy.catalog.cache import _write_sealed_as

    body_data = {
        "format": FORMAT,
        "forge_policy": __version__,
        "name": name,
        "saved_at": iso(time.time()),
        "document": dict(document),
    }
    try:
        body = json.dumps(body_data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except (TypeError, ValueError):
        return False
    return _write_sealed_as(path_of(folder, name), body, MAGIC, FORMAT)


def load(folder: str, name: str) -> tuple[Saved | None, str]:
    """``(the verified copy, "")``, or ``(None, why not)``: ``"none saved"`` when there is no
    file, else the reason it is not trusted (not sealed, wrong key, another document or
    version, damaged)."""
    from forge_policy.catalog.cache import Ignored, _linked_project_folder, _open_sealed

    path = path_of(folder, name)
    linked = _linked_project_folder(path)
    if linked:
        return None, f"{linked} is a symlink: the copy would be read from outside the project"
    try:
        data = _open_sealed(path, MAGIC, FORMAT, MAX_BYTES)
    except FileNotFoundError:
        return None, "none saved"
    except Ignored as why:
        return None, str(why)
    if not isinstance(data, dict):
        return None, "sealed but malformed"
    document, saved_at = data.get("document"), data.get("saved_at")
    if data.get("format") != FORMAT or data.get("forge_policy") != __version__:
        return None, f"written by forge-policy {data.get('forge_policy')!s}"
    if data.get("name") != name:
        return None, f"saved for another document ({data.get('name')!s})"
    if not isinstance(document, dict) or not isinstance(saved_at, str):
        return None, "sealed but malformed"
    return Saved(document, saved_at, path), ""


@attrs.frozen
class Fallback:
    """A last-good copy enforcing in place of ``what`` (``"catalog"``, ``"configuration"``),
    whose files fail to load with ``problem`` (the first error, ``file:line: field: message``).

    >>> f = Fallback("catalog", "b/behavior.yaml:3:5: policy.x: bad", "2026-01-02T03:04:05Z",
    ...              "/nowhere/last-good-catalog.json")
    >>> print(f.notice)  # doctest: +NORMALIZE_WHITESPACE
    forge-policy: the catalog does not load (b/behavior.yaml:3:5: policy.x: bad). The last
    catalog that loaded is enforcing instead until it is fixed. Run `forge-policy validate` to
    see every error, then fix the file or restore it (`git checkout -- FILE`).
    """

    what: str
    problem: str
    saved_at: str
    path: str

    @property
    def when(self) -> str:
        """``saved_at`` to the second: ``2026-01-02 03:04:05 UTC``."""
        return f"{self.saved_at[:19].replace('T', ' ')} UTC"

    @property
    def notice(self) -> str:
        """What the user reads on every call while the copy enforces (the same words in every
        project and on every call: when it was saved is in the audit record and ``validate``)."""
        return (
            f"forge-policy: the {self.what} does not load ({self.problem}). The last {self.what} "
            "that loaded is enforcing instead until it is fixed. Run "
            f"`{VALIDATE}` to see every error, then fix the file or restore it "
            "(`git checkout -- FILE`)."
        )

    def records(self, session_id: str, event: str) -> list[dict[str, Any]]:
        """The ``diagnostic`` audit record of this failure, the first time it is seen (a
        marker beside the copy remembers it); ``[]`` after that."""
        from forge_policy._time import iso
        from forge_policy.model import sha256_hex

        digest = sha256_hex(f"{self.what}\n{self.problem}".encode("utf-8", "replace"))
        marker = f"{self.path}.reported"
        try:
            with open(marker, encoding="utf-8") as handle:
                if handle.read(128).strip() == digest:
                    return []
        except OSError:
            pass
        from forge_policy.catalog.cache import _write_atomic

        _write_atomic(marker, digest.encode("ascii"))
        return [
            {
                "kind": "diagnostic",
                "code": f"{self.what}_last_good",
                "timestamp": iso(time.time()),
                "session_id": session_id,
                "event": event,
                "message": (
                    f"the {self.what} does not load ({self.problem}); the last {self.what} "
                    f"that loaded (saved {self.when}) enforces instead"
                ),
            }
        ]


def recovery(problem: str) -> str:
    """``problem`` (a catalog or configuration that does not load, with no last-good copy to
    enforce instead) followed by the recovery step.

    >>> recovery("catalog does not load: x.yaml:1:1: bad")  # doctest: +NORMALIZE_WHITESPACE
    'catalog does not load: x.yaml:1:1: bad. Run `forge-policy validate` to see every error,
    then fix the file or restore it (`git checkout -- FILE`).'
    """
    return (
        f"{problem.rstrip('.')}. Run `{VALIDATE}` to see every error, then fix the file or "
        "restore it (`git checkout -- FILE`)."
    )
