"""The exceptions of forge_policy, one family under :class:`ForgePolicyError`.

::

    ForgePolicyError
    ├── CatalogError (ValueError)       a catalog or behavior file does not load; .issues lists all
    ├── RegexError (ValueError)         RE2 refused a pattern (its own reason)
    ├── ConfigError (ValueError)        a FORGE_* environment variable has an unusable value
    ├── ProjectConfigError (ValueError) .forge/config.yaml cannot be used (file and line named)
    ├── EventError (ValueError)         a harness payload is not a usable event
    │   ├── UnknownEventError           an event name the engine does not know (close names)
    │   └── HookInputError              the hook's stdin is not a usable event (one line)
    ├── FactTimeout                     a fact provider ran past its time budget
    ├── StoreError                      the runtime store failed (backend errors are chained)
    │   └── LockTimeout                 the store lock was not acquired in time
    ├── AuditError                      the audit sink failed
    │   └── AuditIntegrityError         the audit log was edited, truncated or reordered
    ├── Refused (ValueError)            understood but not allowed (unknown id, no override, …)
    │   └── UnknownBehavior (KeyError)  no behavior of that id in the catalog
    ├── InvalidArgument (ValueError)    an argument of a public call has an unusable value
    │   └── UnknownName (KeyError)      a name (harness, …) that is not known
    ├── SetupError (ValueError)         a project file init cannot merge into without loss
    ├── GitHookError                    git hooks cannot be installed here
    └── ServeUnavailable                the serve endpoint did not answer usefully

This module is the only place an exception that reaches a caller of the package is defined
(``tests/test_layering.py`` checks that no other module derives from this family). A few
modules keep a private exception of their own for control flow, raised and caught inside the
package and never seen by a caller: the catalog cache's ``Ignored`` (a cache file not used),
the prefilter's ``_GiveUp``, the interpreter lexers' ``LexError``, the file store's
``_Corrupt`` and the worker client's ``Unavailable`` (the CLI falls back to the hook).

Every exception has a stable machine ``code`` beside its human text.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence


class ForgePolicyError(Exception):
    """Base class of every error raised by forge_policy."""

    code = "forge_policy_error"


class Issue:
    """One problem found in a catalog, addressed by file, line, column and field path.

    >>> str(Issue("b/behavior.yaml", 14, 9, "policy.enforcement.escalation[1].after",
    ...           "must be greater than 3"))
    'b/behavior.yaml:14:9: policy.enforcement.escalation[1].after: must be greater than 3'
    """

    __slots__ = ("column", "field", "file", "line", "message")

    def __init__(self, file: str, line: int, column: int, field: str, message: str) -> None:
        self.file = file
        self.line = line
        self.column = column
        self.field = field
        self.message = message

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}:{self.column}" if self.line else self.file
        return (
            f"{where}: {self.field}: {self.message}" if self.field else f"{where}: {self.message}"
        )

    def __repr__(self) -> str:
        return f"Issue({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Issue) and str(self) == str(other)

    def __hash__(self) -> int:
        return hash(str(self))

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready form, for ``--json`` output."""
        return {
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "field": self.field,
            "message": self.message,
        }


class CatalogError(ForgePolicyError, ValueError):
    """The catalog does not load. ``issues`` holds every problem found, not just the first."""

    code = "catalog_invalid"

    def __init__(self, issues: Sequence[Issue]) -> None:
        self.issues = tuple(issues)
        count = len(self.issues)
        head = f"catalog does not load: {count} problem{'s' if count != 1 else ''}"
        super().__init__("\n".join([head, *(f"  {issue}" for issue in self.issues)]))


class EventError(ForgePolicyError, ValueError):
    """A harness payload cannot be turned into an :class:`~forge_policy.Event`."""

    code = "event_invalid"


class UnknownEventError(EventError):
    """An event name that is not one the engine knows: evaluating it would match no behavior
    and allow anything, so it is refused. ``close`` holds the known names it resembles.

    >>> print(UnknownEventError("pretooluse", ["PostToolUse", "PreToolUse", "Stop"]))
    event: hook_event_name: unknown event 'pretooluse' (did you mean 'PreToolUse'?)
    """

    code = "event_unknown"

    def __init__(self, name: str, known: Sequence[str]) -> None:
        known = sorted(known)
        folded = {each.lower().replace("_", "").replace("-", ""): each for each in known}
        key = name.strip().lower().replace("_", "").replace("-", "")
        close = [folded[key]] if key in folded else []
        if not close:
            import difflib

            close = [folded[k] for k in difflib.get_close_matches(key, list(folded), n=3)]
        self.name = name
        self.close = tuple(close)
        hint = (
            f" (did you mean {' or '.join(repr(c) for c in close)}?)"
            if close
            else f" (known: {', '.join(known)})"
        )
        super().__init__(f"event: hook_event_name: unknown event {name!r}{hint}")


class StoreError(ForgePolicyError):
    """The runtime store could not read or write session state."""

    code = "store_error"


class LockTimeout(StoreError):
    """The store lock was not acquired within ``FORGE_LOCK_TIMEOUT``."""

    code = "store_lock_timeout"


class AuditError(ForgePolicyError):
    """The audit sink could not record."""

    code = "audit_error"


class AuditIntegrityError(AuditError):
    """The audit log's hash chain is broken: a record was edited, removed or reordered."""

    code = "audit_integrity"


class RegexError(ForgePolicyError, ValueError):
    """RE2 refused a pattern; the message is RE2's own reason."""

    code = "regex_invalid"


class ConfigError(ForgePolicyError, ValueError):
    """An environment variable has an unusable value; the message names the variable."""

    code = "config_invalid"


class ProjectConfigError(ForgePolicyError, ValueError):
    """The project config file cannot be used; the message names the file and line."""

    code = "project_config_invalid"


class HookInputError(EventError):
    """The hook's stdin is not a usable event; the message is one line."""

    code = "hook_input_invalid"


class FactTimeout(ForgePolicyError):
    """A fact provider ran past its time budget. Its value is thrown away and becomes empty."""

    code = "fact_timeout"


class Refused(ForgePolicyError, ValueError):
    """The request is understood but not allowed (unknown id, no override, bypass: never …)."""

    code = "refused"


class UnknownBehavior(Refused, KeyError):
    """No behavior of that id in the catalog (a ``KeyError`` too, as it used to be)."""

    code = "behavior_unknown"

    def __str__(self) -> str:  # KeyError's own quotes the message
        return str(self.args[0]) if self.args else ""


class InvalidArgument(ForgePolicyError, ValueError):
    """An argument of a public call (a constructor's option, a level's name, …) has a value
    that cannot be used; the message names the argument."""

    code = "invalid_argument"


class UnknownName(InvalidArgument, KeyError):
    """A name looked up in a registry (a harness, …) that is not there; the message lists the
    known ones (a ``KeyError`` too, as it used to be)."""

    code = "unknown_name"

    def __str__(self) -> str:  # KeyError's own quotes the message
        return str(self.args[0]) if self.args else ""


class SetupError(ForgePolicyError, ValueError):
    """A project file is not in a shape ``init`` can merge into without losing anything."""

    code = "setup_refused"


class GitHookError(ForgePolicyError):
    """Git hooks cannot be installed here (not a git repository, unwritable hooks folder)."""

    code = "git_hooks"


class ServeUnavailable(ForgePolicyError):
    """The server did not answer usefully (not configured, down, refused the token, failed)."""

    code = "serve_unavailable"
