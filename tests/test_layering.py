"""Which part of the package may import which: an import-linter-style *layers* contract,
written as a test beside the cycle test of ``tests/test_layout.py`` (whose AST scan it reuses:
run-time imports at module level and inside functions, ``if TYPE_CHECKING:`` left out).

A *unit* is a subpackage or a top-level module of ``forge_policy`` (``engine``, ``secrets``),
or a module named in :data:`LAYERS` on its own (``harness.registry``: data that the catalog's
lints read, below the adapters of its package; ``worker.protocol``, which the hook reads).
:data:`LAYERS` lists them from the top (the command line) to the bottom (value types and
errors). A unit may import the units of any layer below its own; units of one layer are
independent of one another, unless the layer is marked as peers. :data:`DEBTS` names the few
module imports that go against the layering today, each with its reason; nothing else may.

Beside it, a second contract: no module imports another package's private module. A module
whose dotted path has a component starting with ``_`` (``forge_policy.facts._runtime``,
``forge_policy._infra.filelock``) is private to the package that holds that component: only
modules inside that package may import it.

The ``commands`` package (the shell and interpreter analyser), ``integrations`` (the SDK
integrations) and ``worker.protocol`` may or may not exist yet (:data:`COMING`): each has its
layer either way.
"""

from __future__ import annotations

import pytest

from tests.test_layout import PACKAGE, import_graph

ROOT = "forge_policy"

#: From the top down. A tuple starting with ``PEERS`` may import within itself.
PEERS = "peers:"
LAYERS: tuple[tuple[str, ...], ...] = (
    ("cli",),  # the command line: everything below is its to call
    ("ui",),  # the read-only local dashboard: shows what the operator reports gather
    ("ops",),  # operator actions: init, doctor, replay, git hooks, admin
    ("worker",),  # the warm worker: answers hook calls from a long-lived process
    (PEERS, "hook", "serve"),  # the hook entry point and the serve daemon call one another
    ("testing",),  # the testing kit: fixtures, assertions, conformance suites, strategies
    ("integrations",),  # SDK integrations (Claude Agent SDK, OpenAI Agents, LangChain)
    ("harness",),  # harness adapters: a hook payload in, the harness's answer out
    ("config",),  # FORGE_* configuration: builds stores, sinks, catalogs and evaluators
    ("engine",),  # the decision and its transaction
    ("floor",),  # the enforcement floor: derived from the catalog, enforced by the OS
    # what a decision says; where session state is kept; what a decision exports (OpenTelemetry)
    ("render", "stores", "telemetry"),
    ("audit",),  # the audit log: sinks, verification, insights, record shapes
    ("catalog", "reports"),  # behaviors and their condition language; typed results
    ("facts",),  # the fact registry and its providers
    ("commands",),  # the static analyser of shell and interpreter commands
    ("model", "state", "templates", "_infra"),  # events, decisions, session state, messages
    ("secrets",),  # redaction: every writer of text uses it
    ("_budget",),  # the running fact's time budget: facts and the command analyser read it
    # a harness settings file judged as the harness reads it (facts.governance asks; no imports)
    ("harness.settings_check",),
    # data and value types: the harness table, the worker's wire protocol (built-ins only)
    ("harness.registry", "worker.protocol", "values", "events", "levels"),
    # the worker protocol's rules, functions only: all the hook client loads (built-ins only)
    ("worker.wire",),
    # the error family: the data types above raise its members (it imports nothing of the package)
    ("errors",),
    ("_time", "_limits", "_lazy"),  # private helpers of the whole package
)

#: Units the table places before they exist (issue 21 creates them): a missing one is fine.
COMING = frozenset({"commands", "integrations", "worker.protocol"})

#: Imports against the layering, module by module: ``(importer, imported): why``.
DEBTS: dict[tuple[str, str], str] = {
    **{
        (f"forge_policy.harness.{name}", f"forge_policy.integrations.{name}"): (
            "the old import path of an SDK integration, kept as a re-export"
        )
        for name in ("claude_agent_sdk", "langchain", "openai_agents")
    },
    **{
        ("forge_policy.harness.registry", f"forge_policy.harness.{name}"): (
            "the registry imports a harness's adapter class on first use (never at lint time)"
        )
        for name in (
            "antigravity",
            "claude_code",
            "codex",
            "copilot",
            "cursor",
            "gemini",
            "opencode",
        )
    },
    ("forge_policy.floor.status", "forge_policy.config.layers"): (
        "floor: is a layered setting (SPEC §10): the layers own its rule, locks included"
    ),
    ("forge_policy.secrets", "forge_policy.catalog.dsl"): (
        "the RE2 compile helper (compile_regex) lives in the condition language"
    ),
    ("forge_policy.facts.project", "forge_policy.catalog.dsl"): "compile_regex, as above",
    ("forge_policy.facts.gitignore", "forge_policy.catalog.dsl"): "compile_regex, as above",
    ("forge_policy.facts.files", "forge_policy.catalog.dsl"): "compile_regex, for searches",
    ("forge_policy.facts.project", "forge_policy.config.project"): (
        "the tdd_untested_files fact reads the project's config.yaml"
    ),
    **{
        (f"forge_policy.worker.{name}", "forge_policy.ops.statusline"): (
            "the status line's floor word is the floor report's (ops.floor_report reads the "
            "harness settings init wrote); the worker answers the line, the client computes it "
            "when no worker does (its slow paths, worker.fallback)"
        )
        for name in ("fallback", "server")
    },
}


def _units() -> dict[str, int]:
    """``unit -> its layer's index`` (0 at the top)."""
    return {unit: i for i, layer in enumerate(LAYERS) for unit in layer if unit != PEERS}


def unit_of(module: str, units: dict[str, int]) -> str | None:
    """The unit a module belongs to: the longest unit its dotted path starts with; None for
    the package itself (the facade, checked on its own).

    >>> unit_of("forge_policy.harness.registry", {"harness": 4, "harness.registry": 14})
    'harness.registry'
    >>> unit_of("forge_policy.harness.codex", {"harness": 4, "harness.registry": 14})
    'harness'
    """
    if module == ROOT:
        return None
    parts = module.split(".")[1:]
    for end in range(len(parts), 0, -1):
        name = ".".join(parts[:end])
        if name in units:
            return name
    raise AssertionError(f"{module} belongs to no unit of LAYERS: give it a layer")


def _peers(unit: str) -> bool:
    return any(unit in layer and layer[0] == PEERS for layer in LAYERS)


def layering_violations(graph: dict[str, set[str]]) -> list[str]:
    """Every import of ``graph`` that goes up the layers or across independent units."""
    units = _units()
    found = []
    for module, imported in sorted(graph.items()):
        mine = unit_of(module, units)
        if mine is None:
            continue
        for target in sorted(imported):
            theirs = unit_of(target, units)
            if theirs is None or theirs == mine or (module, target) in DEBTS:
                continue
            below = units[theirs] > units[mine]
            if not below and not (units[theirs] == units[mine] and _peers(mine)):
                found.append(f"{module} ({mine}) imports {target} ({theirs})")
    return found


def owner_of_private(module: str) -> str | None:
    """The package a private module is private to, or None for a public one.

    >>> owner_of_private("forge_policy.facts._runtime"), owner_of_private("forge_policy._infra.pg")
    ('forge_policy.facts', 'forge_policy')
    >>> owner_of_private("forge_policy.engine.decide") is None
    True
    """
    parts = module.split(".")
    for i, part in enumerate(parts):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[:i])
    return None


def private_violations(graph: dict[str, set[str]]) -> list[str]:
    """Every import of a private module from outside the package it is private to."""
    found = []
    for module, imported in sorted(graph.items()):
        for target in sorted(imported):
            owner = owner_of_private(target)
            if owner is not None and module != owner and not module.startswith(owner + "."):
                found.append(f"{module} imports {target}, private to {owner}")
    return found


# -- the contracts ---------------------------------------------------------------------------


def test_every_module_imports_only_downwards() -> None:
    assert layering_violations(import_graph()) == []


def test_no_module_imports_another_packages_private_module() -> None:
    assert private_violations(import_graph()) == []


def test_the_facade_imports_only_its_lazy_loader() -> None:
    # every unit may import ``forge_policy`` itself (its __version__), because it loads nothing
    assert import_graph()[ROOT] <= {"forge_policy._lazy"}


def test_every_unit_of_the_table_exists_or_is_one_being_built() -> None:
    for unit in _units():
        path = PACKAGE.joinpath(*unit.split("."))
        exists = path.with_suffix(".py").exists() or (path / "__init__.py").exists()
        assert exists or unit in COMING, unit


def test_every_debt_is_still_an_import_of_the_package() -> None:
    # a debt paid off leaves the table with it (and a new one needs its reason written here)
    graph = import_graph()
    modules = set(graph)
    for importer, imported in DEBTS:
        if importer in modules:
            assert imported in graph[importer], (importer, imported)


@pytest.mark.parametrize("leaf", ["templates", "values"])
def test_the_leaves_import_nothing_of_the_package_when_loaded(leaf: str) -> None:
    import ast

    tree = ast.parse((PACKAGE / f"{leaf}.py").read_text())
    loaded = [
        node.module
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(ROOT)
    ] + [
        alias.name
        for node in tree.body
        if isinstance(node, ast.Import)
        for alias in node.names
        if alias.name.startswith(ROOT)
    ]
    assert loaded == []


def error_family_outside_errors() -> list[str]:
    """Classes outside ``errors.py`` that derive from a class of ``errors.py`` by name."""
    import ast

    import forge_policy.errors as errors

    family = {name for name, value in vars(errors).items() if isinstance(value, type)}
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == PACKAGE / "errors.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ClassDef):
                bases = {
                    b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases
                }
                if bases & family:
                    found.append(f"{path.relative_to(PACKAGE)}: {node.name}")
    return found


def test_the_error_family_is_defined_in_errors_only() -> None:
    # errors.py's docstring says so; private control-flow exceptions elsewhere derive from
    # Exception and never reach a caller
    assert error_family_outside_errors() == []


# -- the checkers themselves find what they look for -----------------------------------------


def test_an_upward_import_is_found() -> None:
    graph = {
        "forge_policy.levels": {"forge_policy.engine.decide"},  # the bottom reaching the engine
        "forge_policy.engine.decide": {"forge_policy.levels", "forge_policy.catalog.dsl"},
        "forge_policy.catalog.dsl": set(),
    }
    assert layering_violations(graph) == [
        "forge_policy.levels (levels) imports forge_policy.engine.decide (engine)"
    ]


def test_independent_units_of_one_layer_may_not_import_each_other() -> None:
    graph = {"forge_policy.render.text": {"forge_policy.stores.file"}}
    assert layering_violations(graph) == [
        "forge_policy.render.text (render) imports forge_policy.stores.file (stores)"
    ]
    assert layering_violations({"forge_policy.hook": {"forge_policy.serve.warm"}}) == []


def test_a_module_outside_the_table_is_an_error() -> None:
    with pytest.raises(AssertionError, match="no unit of LAYERS"):
        layering_violations({"forge_policy.newroom.x": set()})


def test_a_private_module_is_found_from_outside_its_package_only() -> None:
    graph = {
        "forge_policy.catalog.dsl": {"forge_policy.facts._runtime"},
        "forge_policy.facts.git": {"forge_policy.facts._runtime"},
        "forge_policy.facts.interpreters._node": {"forge_policy.facts._io"},
        "forge_policy.audit.jsonl": {"forge_policy._infra.filelock", "forge_policy._time"},
    }
    assert private_violations(graph) == [
        "forge_policy.catalog.dsl imports forge_policy.facts._runtime, private to "
        "forge_policy.facts"
    ]
