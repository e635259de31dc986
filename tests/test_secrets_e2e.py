"""No secret reaches a file under ``.forge/`` or any output, through the real processes.

Secrets are driven through ``forge-policy hook`` (blocks, retries, warnings, nudges), through
``forge-policy override --reason`` (the grant in the state, then the override record of its use)
and through ``forge-policy explain`` (``--json`` too), with the file store and with SQLite. Then
every file under ``.forge/`` and every stdout and stderr is searched for each raw secret.

The secrets are the leak routes found on main, and the ``secret_content`` cases of the
agent-safety benchmark corpus (``../shared/benchmarks``): for each case, the spans
:func:`~forge_policy.secrets.scan` finds in its content. Its cases go in batches, one text
joined from many cases, so that a run costs a few dozen processes.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from hookrun import SCRIPT, Project

from forge_policy.secrets import REDACTED, redact, scan

#: In ``../shared`` beside the repository, as ``tests/conftest.py`` finds it.
CORPUS = Path(__file__).resolve().parents[2] / "shared/benchmarks/agent-safety/corpus.jsonl"

PEM_BODY = "MIIEowIBAAKCAQEAzz9PEMBODYsecretQQ7v2Kq0n"
#: ``(text, the secret in it)``: each route that leaked on main.
ROUTES = [
    ('password="correct horse battery"', "correct horse battery"),
    ('pass: "correcthorsebattery77"', "correcthorsebattery77"),
    ("pass: Tr0ub4dor&3x", "Tr0ub4dor&3x"),
    (
        f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\nAAAAB3NzaC1yc2EAAAADAQAB\n"
        "-----END RSA PRIVATE KEY-----",
        PEM_BODY,
    ),
    ("-----BEGIN PRIVATE KEY-----\n" + PEM_BODY + "x" * 24, PEM_BODY),  # no footer
    ("aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYLEAKEDKEYX", "bPxRfiCYLEAKEDKEYX"),
    ("AWS_SECRET_ACCESS_KEY wJalrXUtnFEMI/K7MDENG/bPxRfiCYLEAKEDKEYX", "bPxRfiCYLEAKEDKEYX"),
    ("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", "wWPw5k4aXcaT4fNP0UcnZwJUVFk6LO0pINUx"),
    ("gho_" + "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hI6", "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hI6"),
    ("glpat-Xq7vR2mK9pL4sT6wY1zB", "Xq7vR2mK9pL4sT6wY1zB"),
    ("sk-ant-api03-" + "Kq7_vR2-mX9p" * 7 + "L4sT6wY1zAA", "Kq7_vR2-mX9pKq7_vR2-mX9pL4sT6"),
    # the families added with the peers' tables (gitleaks, secretlint)
    ("git clone https://deploy:Vb8-qT3xLw@git.example.org/r.git", "Vb8-qT3xLw"),
    ("export DB_PASSWORD=Vb8qT3xLw9 && ./run", "Vb8qT3xLw9"),
    ('{"user_auth": "dXNlcjpWYjhxVDN4THc5eno="}', "dXNlcjpWYjhxVDN4THc5eno="),
    ('"private_key": "-----BEGIN PRIVATE KEY-----\\n' + PEM_BODY + "Zq" * 12 + '\\n"', PEM_BODY),
    ("hooks.slack.com/services/" + "T0DC8JB1Q/B0DD08H5G/bJtrpFi1fO1JMCcwLx8uZyAg", "bJtrpFi1fO1J"),
    ("xoxb-23984754863-2348975623112-Vb8qT3xLw9", "2348975623112-Vb8qT3xLw9"),
    ("sk_" + "live_" + "Vb8qT3xLw9zR4mK7pN2sT5wY", "Vb8qT3xLw9zR4mK7pN2sT5wY"),
    ("xoxe-4726837507825-4848681849303", "4726837507825-4848681849303"),
    ("mysql -u root -pS3cretPassw0rd db", "S3cretPassw0rd"),
    ("mysqldump --password=S3cretPassw0rd db", "S3cretPassw0rd"),
]
#: Separates the cases of a batch; it ends every pattern's context (a line, ``;``, ``(``).
JOIN = "\n;(next case);\n"
#: Cases per batch: one ``--reason`` argument stays well under Linux's 128 KiB per argument.
BATCH = 40


def corpus_cases() -> list[str]:
    """The contents of the corpus' ``secret_content`` cases."""
    lines = CORPUS.read_text(encoding="utf-8").splitlines()
    cases = [json.loads(line) for line in lines if line.strip()]
    return [c["input"]["content"] for c in cases if c["category"] == "secret_content"]


def secrets_of(text: str) -> list[str]:
    """The raw secrets :func:`scan` finds in ``text``."""
    data = text.encode("utf-8", "surrogatepass")
    return [data[start:end].decode("utf-8", "surrogatepass") for _, start, end in scan(data)]


class Run:
    """One temporary project and everything its processes printed."""

    def __init__(self, base: Path, store: str) -> None:
        self.project = Project(base)
        self.env: dict[str, str] = {}
        if store == "sqlite":
            self.env["FORGE_STORE"] = f"sqlite:{self.project.root / 'runtime' / 'state.db'}"
        self.outputs: list[str] = []

    def hook(self, command: str) -> None:
        out, err = self.project.run(self.project.bash(command), **self.env)
        self.outputs += [json.dumps(out, ensure_ascii=False), err]

    def cli(self, *args: str, stdin: str | None = None, check: int = 0) -> str:
        result = subprocess.run(
            [str(SCRIPT), *args],
            input=stdin,
            capture_output=True,
            text=True,
            env={**self.project.env, **self.env},
            cwd=self.project.dir,
            timeout=60,
        )
        assert result.returncode == check, result.stderr
        assert "Traceback" not in result.stderr, result.stderr
        self.outputs += [result.stdout, result.stderr]
        return result.stdout

    def override(self, reason: str) -> None:
        """Grant with ``reason`` (its ``--json`` answer too), look at the state while the grant
        is live, then spend it: the override record of its use carries the reason."""
        session = self.project.session
        self.cli("override", "softy", "--session", session, "--reason", reason, "--new-session")
        granted = json.loads(
            self.cli(
                "override",
                "softy",
                "--session",
                session,
                "--reason",
                reason,
                "--json",
                "--new-session",
            )
        )
        assert REDACTED in granted["reason"]
        self.outputs.append(self.files())  # the live grant is in the state
        self.hook("soft-me spend the grant")

    def explain(self, command: str, *, shown: bool = True) -> None:
        """Dry-run a call; ``shown``: a secret is within the 200 characters of the command
        that the report quotes."""
        payload = json.dumps(self.project.bash(f"soft-me {command}"), ensure_ascii=False)
        report = json.loads(self.cli("explain", "--json", stdin=payload))
        assert not shown or REDACTED in json.dumps(report)  # it reached the output, redacted
        self.cli("explain", stdin=payload)

    def report(self) -> None:
        session = self.project.session
        for args in (["status", "--session", session], ["audit"]):
            self.cli(*args)
            self.cli(*args, "--json")

    def files(self) -> str:
        """Every file under ``.forge/`` (the state, the audit log, the catalog cache, SQLite's
        database and WAL), as text."""
        return "\n".join(
            path.read_bytes().decode("utf-8", "replace")
            for path in sorted(self.project.root.rglob("*"))
            if path.is_file()
        )

    def leaks(self, secrets: list[str]) -> list[str]:
        """The secrets found in any file under ``.forge/`` or in any output."""
        seen = "\n".join([self.files(), *self.outputs])
        # JSON outputs escape what a secret may hold (quotes, line breaks, non-ASCII)
        escaped = [json.dumps(s, ensure_ascii=False)[1:-1] for s in secrets]
        return [s for s, e in zip(secrets, escaped, strict=True) if s in seen or e in seen]


STORES = ["file", "sqlite"]


@pytest.mark.parametrize("store", STORES)
def test_the_routes_that_leaked_on_main_leak_nothing(tmp_path: Path, store: str) -> None:
    for text, secret in ROUTES:
        assert secret in text and secret not in redact(text), text
    run = Run(tmp_path, store)
    for i, (text, _) in enumerate(ROUTES):
        word = ("soft-me", "hard-me", "warn-me", "nudge-me")[i % 4]
        run.hook(f"{word} {text}")
        run.hook(f"{word} {text}")  # a soft block's retry: an override record with the summary
    run.override("\n".join(text for text, _ in ROUTES))  # one route a line: no context spans two
    run.explain("\n".join(text for text, _ in ROUTES))
    run.report()
    audit = run.project.audit()
    assert {r["kind"] for r in audit} >= {"block", "override"}
    assert any(REDACTED in str(r.get("reason")) for r in audit if r["kind"] == "override")
    assert run.leaks([secret for _, secret in ROUTES]) == []


@pytest.mark.parametrize("store", STORES)
def test_no_secret_of_the_corpus_leaks(tmp_path: Path, store: str) -> None:
    if not CORPUS.is_file():
        pytest.skip(f"the agent-safety corpus is not at {CORPUS} (../shared is absent)")
    cases = corpus_cases()
    batches = [JOIN.join(cases[i : i + BATCH]) for i in range(0, len(cases), BATCH)]
    # a case's secret may stand in another case outside any secret's context (``publicToken =``
    # holds no secret, ``public_key =`` does): only what redaction removes must not be found
    kept = "\n".join(redact(batch) for batch in batches)
    secrets = sorted({s for case in cases for s in secrets_of(case)} - {""})
    secrets = [s for s in secrets if s not in kept]
    assert len(secrets) > 100  # the corpus holds a secret of every pattern
    run = Run(tmp_path, store)
    for batch in batches:
        run.override(batch)
        run.hook(f"hard-me {batch}")
        run.explain(batch, shown=False)
    run.report()
    assert run.leaks(secrets) == []
