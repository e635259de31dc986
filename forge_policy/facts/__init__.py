"""Fact providers (SPEC §6): named host functions that compute what an event does not carry.

A provider is ``Callable[[Event], object]``. A condition naming ``facts.NAME`` makes the
evaluator call provider ``NAME`` once per event. Providers must be cheap and must never break
the hook, so each one runs under a **time budget**:

- :class:`FactRegistry` wraps every provider in a :class:`BudgetedProvider`. The wrapper sets a
  deadline for the duration of the call. Built-in providers check it between units of work
  (:func:`check_deadline`) and give :func:`remaining` to ``subprocess`` as ``timeout=``. File
  reads are bounded by size.
- The budget is CPU time of the providing thread; wall-clock time is bounded at
  :data:`WALL_FACTOR` times the budget (see :mod:`forge_policy.facts._runtime`).
- A provider that returns after its deadline gets its result thrown away: the wrapper raises
  :class:`FactTimeout`. The evaluator's ``FactCache`` turns any exception into an
  :class:`Unknown` (the empty value, with the reason) plus a diagnostic, and a provider that
  stops at a cap says so with :func:`truncated` (its list becomes a :class:`Partial`). The
  condition language never reads either as a plain false for a blocking behavior (fail
  closed; see :mod:`forge_policy.catalog.dsl`).
- ``register(..., isolate=True)`` runs the provider in a daemon thread and stops waiting when its
  wall-clock allowance (:data:`WALL_FACTOR` times the budget) is spent. Use it for third-party
  providers that may block (network, slow mounts). The thread is abandoned, not killed.
- Providers report soft problems with :func:`note` (for example a file skipped because it is too
  large). :func:`call_provider` returns these notes beside the value.

The modules form layers, each importing only the ones above it, so there is no import cycle:

1. ``facts._runtime`` (budgets, notes, :func:`call_provider`, over :mod:`forge_policy._budget`)
   and ``facts._io`` (bounded file reads, :func:`event_cwd`, the event's shell commands, the git
   directory);
2. ``facts.gitignore`` (git's ignore rules), and, outside this package, the command analyser
   :mod:`forge_policy.commands` (the shell lexer, the command model), which imports none of it;
3. the providers: ``facts.files`` (paths, sizes, tokens, file-name classes), ``facts.secrets``
   (over :mod:`forge_policy.secrets`), ``facts.commit`` (``git commit`` messages), ``facts.git``
   (staged files), ``facts.commands``, ``facts.project``, ``facts.governance`` and
   ``facts.search``;
4. this package, the registry, which imports a provider by name on its first call.

>>> from forge_policy.model import Event
>>> facts = builtin_facts()
>>> ev = Event("PreToolUse", "s", tool_name="Bash",
...            tool_input={"command": 'git add . && git commit -m "feat: x" -m "body"'})
>>> facts["commit_message"](ev)
'feat: x\\n\\nbody'
>>> registry = FactRegistry.with_builtins()
>>> registry.register("branch", lambda event: "main", budget_ms=50)
>>> registry["branch"](ev), registry.budget_ms("branch")
('main', 50.0)
"""

from __future__ import annotations

from collections.abc import Mapping

from forge_policy.errors import InvalidArgument

# The budget machinery lives in a leaf module that every provider imports; it is re-exported here,
# where callers have always imported it. No provider module imports this package, so the
# registry may import them (lazily, by name) without a cycle.
from forge_policy.facts._io import event_cwd
from forge_policy.facts._runtime import (
    DEFAULT_BUDGET_MS,
    WALL_FACTOR,
    BudgetedProvider,
    call_provider,
    check_deadline,
    note,
    remaining,
    truncated,
)
from forge_policy.values import Partial, Unknown, undetermined

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    from forge_policy.facts._runtime import FactProvider
    from forge_policy.model import Event

__all__ = [
    "DEFAULT_BUDGET_MS",
    "WALL_FACTOR",
    "BudgetedProvider",
    "FactRegistry",
    "Partial",
    "Unknown",
    "builtin_facts",
    "call_provider",
    "check_deadline",
    "commit_messages",
    "event_cwd",
    "note",
    "remaining",
    "staged_files",
    "truncated",
    "undetermined",
]


class FactRegistry(Mapping[str, "BudgetedProvider"]):
    """Fact providers by name (a read-only mapping), each with its time budget.

    Pass it, or :func:`builtin_facts`, as ``Evaluator(..., facts=...)``. Registering a name again
    replaces the provider, so an orchestrator can override a built-in.

    >>> registry = FactRegistry()
    >>> registry.register("answer", lambda event: 42, budget_ms=10)
    >>> sorted(registry), len(registry), "answer" in registry
    (['answer'], 1, True)
    """

    __slots__ = ("_providers",)

    def __init__(self) -> None:
        self._providers: dict[str, BudgetedProvider] = {}

    @classmethod
    def with_builtins(cls) -> FactRegistry:
        """A registry that holds the built-in providers (see :func:`builtin_facts`)."""
        registry = cls()
        for name, (module, function, budget) in _BUILTINS.items():
            registry.register(name, _lazy(module, function), budget_ms=budget)
            registry._providers[name].commands_only = name in _COMMANDS_ONLY
        return registry

    def register(
        self,
        name: str,
        provider: FactProvider,
        *,
        budget_ms: float | None = None,
        isolate: bool | None = None,
    ) -> None:
        """Add or replace provider ``name``. Conditions then read it as ``facts.NAME``.

        ``budget_ms`` defaults to :data:`DEFAULT_BUDGET_MS`. A :class:`BudgetedProvider`
        (e.g. from another registry) keeps its own budget and isolation unless they are given.
        """
        if not name or name.startswith(".") or name.endswith(".") or not callable(provider):
            raise InvalidArgument(f"invalid fact name or provider: {name!r}")
        func: FactProvider = provider
        commands_only = False
        if isinstance(provider, BudgetedProvider):
            func = provider.func
            budget_ms = provider.budget_ms if budget_ms is None else budget_ms
            isolate = provider.isolate if isolate is None else isolate
            commands_only = provider.commands_only  # the same function: the same reading
        budget = DEFAULT_BUDGET_MS if budget_ms is None else budget_ms
        if not budget > 0:
            raise InvalidArgument(f"fact {name!r}: budget_ms must be positive, got {budget!r}")
        self._providers[name] = BudgetedProvider(name, func, budget, bool(isolate))
        self._providers[name].commands_only = commands_only

    def budget_ms(self, name: str) -> float:
        """The budget of provider ``name`` in milliseconds."""
        return self._providers[name].budget_ms

    def __getitem__(self, name: str) -> BudgetedProvider:
        return self._providers[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._providers)

    def __len__(self) -> int:
        return len(self._providers)

    def __repr__(self) -> str:
        return f"<FactRegistry {', '.join(self._providers)}>"


def builtin_facts() -> dict[str, FactProvider]:
    """The built-in providers, each budgeted, by name (without the ``facts.`` prefix).

    ======================  ====  ===============================================================
    fact                    type  value
    ======================  ====  ===============================================================
    paths                   list  existing files the call names (tool_input strings, readers)
    path_basenames          list  their basenames, plus declared operands that do not exist
    sensitive_file          str   secret-file family class: private_key, git_config, env_file …
    file_bytes              int   bytes the call reads from them: a Read's lines only
    estimated_tokens        int   token advisor's estimate of those (bytes/4 code, bytes/6*1.3)
    secret_in_files         str   first secret pattern id in a file under 1 MiB, e.g. openai_key
    commit_message          str   the messages of the ``git commit`` commands, blank-line joined
    staged_files            list  paths staged for that commit (git hooks, ``git commit`` calls)
    commands                list  the call's shell commands as sent (``command``, ``commands``)
    shell_commands          list  each command they run, resolved: quotes removed, wrappers stripped
    git_commands            list  those running git subcommands that can discard work, as git
                                  reads them (``git reset --hard``), for messages
    executed_commands       list  every program they run, however reached, canonical (rm -r -f /)
    command_readings        list  the same, with the route: rm -r -f / reached through xargs
    recursive_deletes       list  each rm -r / find -delete target with its scope: root, home,
                                  project, inside, temp, outside or unknown
    shell_data              list  strings they hold only as data: echo text, grep patterns,
                                  here-documents fed to a program that is not a shell
    unignored_secret_files  list  root ``.env*``/``.npmrc`` not git-ignored; ``.git/config``
                                  with credentials in a remote URL (SessionStart)
    tdd_untested_files      list  staged production files with no test or tasks.md (strict TDD)
    governance_changes      list  what the call would change in forge-policy's own governance:
                                  ``.forge/``, the hook settings, the cache, the CLI's toggles
    search_credits          list  paths a Read/Grep/Glob/LS looked at (``/dir/``: all under it)
    write_credits           list  a Write/Edit's file and each folder above it (``/dir/``)
    ======================  ====  ===============================================================

    >>> sorted(builtin_facts())  # doctest: +NORMALIZE_WHITESPACE
    ['command_readings', 'commands', 'commit_message', 'estimated_tokens', 'executed_commands',
     'file_bytes', 'git_commands', 'governance_changes', 'path_basenames', 'paths',
     'recursive_deletes', 'search_credits', 'secret_in_files', 'sensitive_file',
     'shell_commands', 'shell_data', 'staged_files', 'tdd_untested_files',
     'unignored_secret_files', 'write_credits']
    """
    return dict(FactRegistry.with_builtins().items())


def commit_messages(command: str, cwd: str) -> list[str]:
    """The message of each ``git commit`` in a shell command, in order (for the git hooks too).

    >>> commit_messages("git commit -am 'fix: a' && git -C sub commit --message=b", "/repo")
    ['fix: a', 'b']
    """
    from forge_policy.commands import commit_messages as parse

    return parse(command, cwd)


def staged_files(cwd: str, *, include_modified: bool = False, timeout: float = 5.0) -> list[str]:
    """Paths staged in the repository at ``cwd``, relative to its root (``[]`` on any failure)."""
    from forge_policy.facts.git import staged

    return staged(cwd, include_modified=include_modified, timeout=timeout)


# name -> (module, function, budget in ms). Modules are imported on the first call, so importing
# this module stays cheap. The functions' docstrings define each fact.
_BUILTINS: dict[str, tuple[str, str, float]] = {
    "paths": ("facts.files", "provide_paths", 250.0),
    "path_basenames": ("facts.files", "provide_path_basenames", 250.0),
    "sensitive_file": ("facts.files", "provide_sensitive_file", 250.0),
    "file_bytes": ("facts.files", "provide_file_bytes", 250.0),
    "estimated_tokens": ("facts.files", "provide_estimated_tokens", 250.0),
    "secret_in_files": ("facts.files", "provide_secret_in_files", 750.0),
    "commit_message": ("facts.commit", "provide_commit_message", 500.0),
    "staged_files": ("facts.git", "provide_staged_files", 2500.0),
    "commands": ("facts.commands", "provide_commands", 250.0),
    "shell_commands": ("facts.commands", "provide_shell_commands", 250.0),
    "git_commands": ("facts.git", "provide_git_commands", 250.0),
    "executed_commands": ("facts.commands", "provide_executed_commands", 250.0),
    "command_readings": ("facts.commands", "provide_command_readings", 250.0),
    "recursive_deletes": ("facts.commands", "provide_recursive_deletes", 250.0),
    "shell_data": ("facts.commands", "provide_shell_data", 250.0),
    "unignored_secret_files": ("facts.project", "provide_unignored_secret_files", 500.0),
    "tdd_untested_files": ("facts.project", "provide_tdd_untested_files", 2500.0),
    "governance_changes": ("facts.governance", "provide_governance_changes", 250.0),
    "search_credits": ("facts.search", "provide_search_credits", 250.0),
    "write_credits": ("facts.search", "provide_write_credits", 250.0),
}


#: The built-in facts read from ``tool_input.command``/``commands`` alone
#: (:func:`~forge_policy.facts._io.event_commands`): ``[]`` for a call that has neither key
#: (a Read, a Write, a Grep), whatever else it holds; ``tests/test_facts.py`` checks each.
_COMMANDS_ONLY = frozenset({"commands", "shell_commands", "executed_commands", "git_commands",
                            "command_readings", "recursive_deletes", "shell_data"})  # fmt: skip


def _lazy(module: str, function: str) -> FactProvider:
    #: the function, once imported (its module and name never change: nothing to go stale)
    found: list[FactProvider] = []

    def provider(event: Event) -> object:
        if found:
            return found[0](event)
        import sys
        from importlib import import_module

        name = f"forge_policy.{module}"
        first = name not in sys.modules
        func: FactProvider = getattr(import_module(name), function)
        found.append(func)
        if first:  # the import is the process's cost (once), not the event's
            from forge_policy._budget import restart

            restart()
        return func(event)

    provider.__name__ = provider.__qualname__ = function
    return provider
