"""Records reach a sink redacted by one function, :func:`forge_policy.audit.base.write`: no
module of the package outside the audit package hands records to a sink any other way (issue:
records came from the hook, the CLI and the git hooks, and each sink redacted on its own)."""

from __future__ import annotations

import ast
from pathlib import Path

from forge_policy.audit.base import write
from forge_policy.audit.memory import MemoryAuditSink

PACKAGE = Path(__file__).resolve().parents[2] / "forge_policy"
#: Where ``append_many`` may be called: the sinks themselves (and the lazy one's delegation),
#: the one writer, and the conformance suite, which tests sinks directly.
ALLOWED = ("audit/", "testing/conformance/")


def test_no_module_calls_a_sinks_append_many_but_the_audit_package() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative.startswith(ALLOWED):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr == "append_many":
                found.append(f"{relative}:{node.lineno}")
    assert not found, f"write audit records through forge_policy.audit.base.write: {found}"


def test_write_redacts_keys_and_values_and_leaves_the_callers_record() -> None:
    sink = MemoryAuditSink()
    record = {"kind": "bypass", "password=hunter2hunter2": ["token: 'abcd1234'"]}
    write(sink, [record])
    assert next(sink.records()) == {
        "kind": "bypass",
        "password=[REDACTED]": ["token: '[REDACTED]'"],
    }
    assert record == {"kind": "bypass", "password=hunter2hunter2": ["token: 'abcd1234'"]}
