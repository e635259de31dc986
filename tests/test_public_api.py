"""The public surface (SPEC §12) is pinned, and importing it stays cheap."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import forge_policy as fp

EXPECTED = {
    "AuditError",
    "AuditIntegrityError",
    "AuditSink",
    "Behavior",
    "BehaviorInsight",
    "BehaviorStatus",
    "Catalog",
    "CatalogEntry",
    "CatalogError",
    "ConditionResult",
    "Decision",
    "Evaluator",
    "Event",
    "EventError",
    "ExplainReport",
    "FactRegistry",
    "FileStore",
    "FactTimeout",
    "ForgePolicyError",
    "GovernanceSummary",
    "OverrideGrant",
    "Issue",
    "JsonlAuditSink",
    "Level",
    "LockTimeout",
    "MemoryAuditSink",
    "MemoryStore",
    "OverrideRecord",
    "PostgresAuditSink",
    "PostgresStore",
    "RuntimeStore",
    "SQLiteAuditSink",
    "SQLiteStore",
    "SessionState",
    "Status",
    "StoreError",
    "Trigger",
    "VerifyReport",
    "Violation",
    "build_evaluator",
    "builtin_catalog",
    "builtin_facts",
    "load_catalog",
}


def test_all_matches_the_documented_surface() -> None:
    assert set(fp.__all__) == EXPECTED


def test_every_exported_name_resolves() -> None:
    for name in fp.__all__:
        assert getattr(fp, name) is not None, name


def test_backends_satisfy_the_protocols(tmp_path: Path) -> None:
    stores = [
        fp.MemoryStore(),
        fp.FileStore(tmp_path / "state.json"),
        fp.SQLiteStore(tmp_path / "state.db"),
        fp.PostgresStore("postgresql://u@localhost/db"),  # connects on first use only
    ]
    sinks = [
        fp.MemoryAuditSink(),
        fp.JsonlAuditSink(tmp_path / "audit.log"),
        fp.SQLiteAuditSink(tmp_path / "audit.db"),
        fp.PostgresAuditSink("postgresql://u@localhost/db"),
    ]
    assert all(isinstance(store, fp.RuntimeStore) for store in stores)
    assert all(isinstance(sink, fp.AuditSink) for sink in sinks)
    for backend in (*stores, *sinks):
        backend.close()


def test_errors_form_one_family() -> None:
    for name in (
        "CatalogError",
        "EventError",
        "StoreError",
        "LockTimeout",
        "AuditError",
        "AuditIntegrityError",
    ):
        assert issubclass(getattr(fp, name), fp.ForgePolicyError)
    assert issubclass(fp.CatalogError, ValueError)
    assert issubclass(fp.LockTimeout, fp.StoreError)


HEAVY = (
    *("ruamel", "cattrs", "portalocker", "pathspec", "argparse"),
    *("attr", "attrs", "typing", "dataclasses"),
)


def imported_after(code: str) -> set[str]:
    probe = f"import sys\n{code}\nprint(' '.join(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    return set(out.split())


def test_bare_import_pulls_in_no_heavy_module() -> None:
    modules = imported_after("import forge_policy")
    assert not {m for m in modules if m.split(".")[0] in HEAVY}


def test_evaluating_on_a_loaded_catalog_pulls_in_no_heavy_module() -> None:
    # the loader needs ruamel; evaluation itself must not
    code = (
        "import forge_policy as fp\n"
        "from forge_policy.catalog.behavior import Behavior\n"
        "from forge_policy.catalog.catalog import Catalog\n"
        "spec = {'id': 'aa', 'name': 'A', 'triggers': [{'event': 'PreToolUse', 'matcher': 'Bash',"
        " 'conditions': [{'field': 'command', 'operator': 'regex_match', 'value': 'rm'}]}],"
        " 'default_level': 'warning'}\n"
        "ev = fp.Evaluator(Catalog([Behavior(spec)]))\n"
        "d = ev.evaluate(fp.Event('PreToolUse', 's', tool_name='Bash',"
        " tool_input={'command': 'rm x'}))\n"
        "assert d.outcome == 'warning', d.outcome"
    )
    modules = imported_after(code)
    # attrs (the model classes: Event, Decision, Violation) and the typing it imports are the
    # accepted cost of evaluating; everything else heavy stays off
    accepted = ("attr", "attrs", "typing")
    assert not {m for m in modules if m.split(".")[0] in HEAVY and m.split(".")[0] not in accepted}


def test_result_types_are_attrs_classes_of_the_reports_module() -> None:
    import attrs

    import forge_policy.engine.reports

    names = ("Status", "BehaviorStatus", "ExplainReport", "OverrideGrant", "OverrideRecord")
    for name in (*names, "GovernanceSummary", "BehaviorInsight", "CatalogEntry"):
        cls = getattr(fp, name)
        assert attrs.has(cls) and cls.__module__.startswith("forge_policy.reports."), name
        assert getattr(forge_policy.engine.reports, name) is cls  # still importable from there


def test_results_are_built_without_cattrs_and_only_json_imports_it() -> None:
    # status, explain and override answer without the converter; to_json brings it. The catalog
    # is built in memory: loading one from files reads the compiled cache, which uses cattrs
    code = (
        "import forge_policy as fp\n"
        "from forge_policy.catalog.behavior import Behavior\n"
        "spec = {'id': 'gate', 'name': 'Gate', 'triggers': [{'event': 'PreToolUse',"
        " 'matcher': 'Bash', 'conditions': [{'field': 'command', 'operator': 'regex_match',"
        " 'value': 'rm'}]}], 'default_level': 'soft_block'}\n"
        "ev = fp.Evaluator(fp.Catalog([Behavior(spec)]))\n"
        "ls = fp.Event('PreToolUse', 's', tool_name='Bash', tool_input={'command': 'ls'})\n"
        "assert ev.evaluate(ls).outcome == 'allow'\n"
        "assert ev.status('s').session_id == 's'\n"
        "assert ev.explain(ls).decision.outcome == 'allow'\n"
        "assert ev.override('s', 'gate', reason='r').reason == 'r'\n"
        "fp.Status, fp.ExplainReport, fp.GovernanceSummary\n"
    )
    modules = imported_after(code)
    assert not {m for m in modules if m.split(".")[0] == "cattrs"}
    modules = imported_after(
        code + "from forge_policy.engine.reports import to_json\nto_json(ev.status('s'))\n"
    )
    assert "cattrs" in modules


def test_the_converter_is_our_own_not_the_global_one() -> None:
    import cattrs

    from forge_policy.reports.json import _converter, to_json

    assert isinstance(_converter(), cattrs.Converter)
    assert _converter() is not cattrs.global_converter
    assert _converter() is _converter()  # one instance, built once
    before = cattrs.global_converter.unstructure(fp.Level.WARNING)
    assert to_json(fp.Level.WARNING) == "warning"
    assert cattrs.global_converter.unstructure(fp.Level.WARNING) == before  # untouched


def test_the_version_is_written_in_one_place() -> None:
    import importlib.metadata
    import tomllib

    pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
    project = tomllib.loads(pyproject.read_text())["project"]
    assert "version" not in project and "version" in project["dynamic"]  # read from the source
    assert importlib.metadata.version("forge-policy") == fp.__version__


def test_build_evaluator_is_the_hooks_factory_with_its_bypass(tmp_path: Path) -> None:
    env = {"FORGE_ROOT": str(tmp_path), "FORGE_STORE": "memory", "FORGE_DISABLE": "search-first"}
    ev = fp.build_evaluator(env, cwd=str(tmp_path))
    assert isinstance(ev, fp.Evaluator)
    assert ev.catalog["search-first"].enabled is False
    assert ev.bypass is not None and [b.id for b in ev.bypass.bypassed] == ["search-first"]
