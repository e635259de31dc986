"""One secret table for detection and redaction (:mod:`forge_policy.secrets`).

The relation proven here: ``detect(text)`` is truthy exactly when ``redact(text) != text``, and
``redact`` leaves nothing ``detect`` would find, nor anything any pattern of the table matches
at any position (an oracle that shares no code with the module). Then every writer: the
stores, the override's grant, the CLI's output, the hook's error line, explanations.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from forge_policy.catalog.dsl import compile_regex
from forge_policy.facts.secrets import SECRET_PATTERNS as FACT_PATTERNS
from forge_policy.facts.secrets import find_secret
from forge_policy.secrets import (
    REDACTED,
    SECRET_PATTERNS,
    detect,
    placeholder,
    redact,
    redact_json,
    scan,
    summarize,
)

# 64 base64 characters: the least key material a PEM block must hold to be a key
KEY_LINE = "MIIEowIBAAKCAQEA" + "z9Qx7Lk2Vb9Rt4Wp" + "8Zn3Ys6Hd1Fg5Jc0" + "Me+/aB3dE6gH9jK2"

# The two disagreements of the former two tables, one in each direction.
DETECTED_NOT_REDACTED_BEFORE = 'key="hunter2hunter2"'
REDACTED_NOT_DETECTED_BEFORE = 'token="abcd1"'


def test_there_is_one_table() -> None:
    assert FACT_PATTERNS is SECRET_PATTERNS
    assert find_secret is detect


def test_a_detected_key_assignment_is_redacted() -> None:
    assert detect(DETECTED_NOT_REDACTED_BEFORE) == "password_assignment"
    assert redact(DETECTED_NOT_REDACTED_BEFORE) == f'key="{REDACTED}"'


def test_a_value_too_short_to_detect_is_not_redacted() -> None:
    assert detect(REDACTED_NOT_DETECTED_BEFORE) == ""
    assert redact(REDACTED_NOT_DETECTED_BEFORE) == REDACTED_NOT_DETECTED_BEFORE


@pytest.mark.parametrize(
    ("text", "redacted"),
    [
        ("sk-" + "a" * 48, REDACTED),
        ("key sk-abcdefghijklmnopqrstuvwx", f"key {REDACTED}"),  # 24 characters: redacted
        ("sk-ant-api03-" + "Zz9_-" * 18 + "abcAA", REDACTED),  # Anthropic keys were never found
        # Anthropic's documented shape only (93 characters, then AA), as peers' scanners have it
        ("sk-ant-api03-" + "Zz9_-" * 18, "sk-ant-api03-" + "Zz9_-" * 18),
        ("sk-ant-api03-short", "sk-ant-api03-short"),  # too short to be a token
        ("task-" + "a" * 48, "task-" + "a" * 48),  # "sk-" inside a word is no key
        ("AIzaSy" + "B" * 33, REDACTED),
        ("ASIA" + "Z7Q2X9W4V6T3R8P5", REDACTED),  # temporary AWS keys are detected too
        ("AKIA" + "IOSFODNN7EXAMPLE", "AKIA" + "IOSFODNN7EXAMPLE"),  # AWS's documented example
        ("TODAYINASIAASACKOFRICEFELLOVER", "TODAYINASIAASACKOFRICEFELLOVER"),  # inside a word
        ("schemaKey = 'DOC_Vector_5_32'", "schemaKey = 'DOC_Vector_5_32'"),  # names no secret
        ('publicToken = "9Cnzj4p4WGeKLs1Pt8Qu"', 'publicToken = "9Cnzj4p4WGeKLs1Pt8Qu"'),
        ('authToken = "9Cnzj4p4WGeKLs1Pt8Qu"', f'authToken = "{REDACTED}"'),
        ("xoxb-123456789012-123456789012-abcdefABCDEF", REDACTED),  # the whole Slack token
        ("Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc123-_", f"Bearer {REDACTED}"),
        ('{"password": "hunter2hunter2"}', f'{{"password": "{REDACTED}"}}'),  # JSON keys
        ("const apiKey = 'abcdef123456';", f"const apiKey = '{REDACTED}';"),  # camelCase
        ('dbPassword := "abcdef123456"', f'dbPassword := "{REDACTED}"'),
        ("'token' => 'abcdef123456'", f"'token' => '{REDACTED}'"),
        ('monkey: "bananabanana"', 'monkey: "bananabanana"'),
        ('turKEY = "deliciosa comida"', 'turKEY = "deliciosa comida"'),
        (
            "-----BEGIN RSA PRIVATE KEY-----\n" + KEY_LINE + "\n-----END RSA PRIVATE KEY-----\nok",
            f"{REDACTED}\nok",  # the key material goes too, not only its header
        ),
    ],
)
def test_redaction_table(text: str, redacted: str) -> None:
    assert redact(text) == redacted
    assert bool(detect(text)) is (redacted != text)


def test_secrets_next_to_each_other_are_all_redacted() -> None:
    # the closing quote of one assignment is the non-letter before the next key name
    assert redact('token="abcdefg"key="hijklmn"') == f'token="{REDACTED}"key="{REDACTED}"'
    # the key name hidden by the letter before it shows once the AWS key is redacted
    assert redact("AKIA" + "Z7Q2X9W4V6T3R8P5" + 'KEY="abcdefg"') == f'{REDACTED}KEY="{REDACTED}"'


def test_redacting_twice_changes_nothing_more() -> None:
    once = redact('password = "hunter22" AKIA' + "Z7Q2X9W4V6T3R8P5")
    assert redact(once) == once and detect(once) == ""
    assert detect(f'password = "{REDACTED}"') == ""


def test_scan_reports_byte_spans_in_text_order() -> None:
    text = 'ñ token: "hunter22" AKIA' + "Z7Q2X9W4V6T3R8P5"
    raw = text.encode()
    found = scan(text)
    assert [pid for pid, _, _ in found] == ["password_assignment", "aws_access_key"]
    assert [raw[start:end] for _, start, end in found] == [
        b"hunter22",
        b"AKIA" + b"Z7Q2X9W4V6T3R8P5",
    ]


def test_lone_surrogates_survive_redaction() -> None:
    text = "\ud800 password='hunter22' \udfff"
    assert redact(text) == f"\ud800 password='{REDACTED}' \udfff"


def test_summaries_are_redacted_and_short() -> None:
    summary = summarize(
        "Bash", {"command": "curl -H 'X-Key: AKIA" + "Z7Q2X9W4V6T3R8P5" + "' " + "x" * 200}
    )
    assert "AKIA" not in summary and len(summary) == 100 and REDACTED in summary


# --- detection (moved from test_facts.py); each case also holds for redaction -----------------

SECRETS = [
    ("sk-" + "a" * 48, "openai_key"),
    ("OPENAI=sk-proj-" + "Ab_9-" * 10, "openai_key"),
    ("AIzaSy" + "B" * 33, "google_api_key"),
    ("AKIA" + "Z7Q2X9W4V6T3R8P5", "aws_access_key"),
    ("xoxb-1234567890-abcdEFGH12", "slack_token"),
    ("Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc123-_", "jwt"),
    ('password: "superSecretAdmin123"', "password_assignment"),
    ('db_password = "superSecretAdmin123"', "password_assignment"),
    ("api_key = 'abcdef123456'", "password_assignment"),
    ('token: "abcdef123456"', "password_assignment"),
    ('contraseña = "miClaveSegura"', "password_assignment"),
    ('CONTRASEÑA = "miClaveSegura"', "password_assignment"),
    ('SECRET="deploy-secret-value"', "password_assignment"),
    ('línea uno\npassword: "superSecretAdmin123"', "password_assignment"),
    ("-----BEGIN OPENSSH PRIVATE KEY-----\n" + KEY_LINE, "private_key"),  # cut short
    (
        "AKIA" + "Z7Q2X9W4V6T3R8P5" + " sk-" + "a" * 48,
        "openai_key",
    ),  # pattern order, not text order
    ("sk-" + "a" * 20, "openai_key"),
    ("DEEPSEEK_API_KEY=sk-" + "0123456789abcdef" * 2, "openai_key"),
    # beyond AgentShield's table
    ("sk-ant-api03-" + "Zz9_-" * 18 + "abcAA", "anthropic_key"),
    ("sk-ant-admin01-" + "aZ09_-" * 15 + "bcdAA", "anthropic_key"),
    ("xoxe-4726837507825-4848681849303", "slack_token"),  # any xox?- token
    ("xoxo-1234567890-abc", "slack_token"),
    ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws_secret_key"),
    ("export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY;", "aws_secret_key"),
    (
        "aws configure set aws_secret_access_key wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "aws_secret_key",
    ),
    ("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", "github_token"),
    *(
        (f"{prefix}_aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hI6", "github_token")
        for prefix in ("gho", "ghs", "ghu", "ghr")
    ),
    ("github_pat_11AAGI73I0HFY8wJru4mTw_ZlpxaViSYQuKETGMTXMkbWFrZCqjas5Op", "github_token"),
    ("glpat-aBcDeFgHiJkLmNoPqRsT", "gitlab_token"),
    ("mysql -u root -pS3cretPass db", "mysql_password"),
    ("mysql -uroot -proot -e 'select 1'", "mysql_password"),
    ("mysqldump -h db --password=S3cret! app", "mysql_password"),
    ("mariadb-dump -p'my pass' app", "mysql_password"),
    ("pass: correcthorse1", "password_yaml"),
    ("  db_password: Tr0ub4dor&3  # prod", "password_yaml"),
    ("- MYSQL_ROOT_PASSWORD: s3cret-root\r\nnext: 1", "password_yaml"),
    ("spring.datasource.password: admin123", "password_yaml"),
    ("clientSecret: 9f8e7d6c5b4a", "password_yaml"),
    ('echo "password: hunter22"', "password_yaml"),
    (
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQWGBGSVV4YBDAClvRnxezIRy2Yv7SFlzC0i\n"
        + KEY_LINE
        + "\n=8xQN\n",
        "private_key",
    ),
]
NOT_SECRETS = [
    'monkey: "bananabanana"',
    'turkey = "deliciosa comida"',
    'compass: "north-north-west"',
    'Key rule: inject compact rules text when available.\n\nSee "skills/angular/SKILL.md" for '
    "details.",
    'The token budget advisor\nuses "150k-token" thresholds.',
    'secret = "short"',
    "password = superSecretAdmin123",
    'password = "line\nbreak!"',
    "",
    "sk-" + "a" * 19,  # one table with redaction: 20 characters make a key (see test_secrets)
    "task-" + "a" * 48,  # "sk-" inside a word
    "AKIA" + "z" * 16,
    "xox-1234567890abcd",
    "xoxb-123456789",  # too short
    "sk-ant-api03-short",  # too short to be a token
    # the variable of an AWS secret key, but no key: 39 and 56 characters, a reference
    "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKE",
    "AWS_SECRET_ACCESS_KEY = R6WCNd0erkAuZyD+Fe8C4IwjpYQtniKqnHAzE7Pk5fPrBRpwOnuYxA==",
    "aws_secret_access_key: ${{ secrets.AWS_SECRET_ACCESS_KEY }}",
    # placeholders of a token's shape
    "ghp_" + "x" * 36,
    "github_pat_" + "x" * 22 + "_" + "x" * 59,
    "glpat-XXXXXXXXXXXXXXXXXXXX",
    "glpat-abc",
    # a -p that is no MySQL password
    "mysql -u root -p db",
    'mysqldump -p"$MYSQL_PWD" app',
    "mysql -p${PASSWORD} app",
    "mkdir -pv build && cp -pr a b",
    "gcc -pthread -lmysqlclient main.c",
    "ssh -p2222 host",
    "docker run -p8080:80 mysql",
    # an unquoted ``password:`` whose value is code, a reference or a word
    "password: str",
    "    password: SecretStr",
    "password: string;",
    "password: Optional[str] = None",
    "def login(user: str, password: str) -> None:",
    "  password: password,",
    "  password: this.password",
    "  password: process.env.DB_PASSWORD",
    "  password: Joi.string().min(8).required(),",
    "  password: ${{ secrets.DOCKER_PASSWORD }}",
    "  password: ${DB_PASSWORD}",
    "  password: *default_password",
    "  password: !vault |",
    "  password: <your-password>",
    "  password: changeme",
    "  password_file: /run/secrets/db_password",
    "  key: value-12345",  # ``key`` alone names no credential when unquoted
    "  token: 1234567890",
    "keyVaultToStoreSecrets: cmp2-qat-1208358310",
    "The password: must hold 8 characters",
    "password: abc123 and more words",
]


@pytest.mark.parametrize(("text", "expected"), SECRETS)
def test_secret_patterns_match(text: str, expected: str) -> None:
    assert find_secret(text) == expected
    assert find_secret(text.encode()) == expected


@pytest.mark.parametrize("text", NOT_SECRETS)
def test_secret_patterns_do_not_match(text: str) -> None:
    assert find_secret(text) == ""


@given(st.one_of(st.text(max_size=2000), st.binary(max_size=2000)))
def test_secret_matcher_never_raises(data: str | bytes) -> None:
    assert find_secret(data) in {"", *(pid for pid, _ in SECRET_PATTERNS)}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('password = "' + "a" * 1_000_000, ""),
        ("sk-" * 300_000, ""),
        ("eyJ" + "a" * 500_000 + ".eyJ" + "b" * 500_000, ""),
        ("x" * 1_000_000 + ' token: "abcdef123456"', "password_assignment"),
        ("x" * 1_000_000 + 'token: "abcdef123456"', ""),  # "xtoken" is not a key name
        ("mysql " * 200_000, ""),
        ("mysql -u " + "a" * 1_000_000 + " -p", ""),
        ("password: " + "a1" * 500_000 + " x", ""),
        (("ghp_" + "x" * 36 + " ") * 25_000 + "ghp_" + "aZ09" * 9, "github_token"),
        ("-----BEGIN PRIVATE KEY-----" + "\n" + "A" * 1_000_000, "private_key"),
        ("-----BEGIN PRIVATE KEY-----\n" * 40_000, ""),  # armour, no key material
        ("aws_secret_access_key=" * 40_000, "password_env"),
    ],
)
def test_secret_matcher_on_long_input(text: str, expected: str) -> None:
    assert find_secret(text) == expected


@pytest.mark.parametrize(("text", "expected"), SECRETS)
def test_every_detected_sample_is_redacted(text: str, expected: str) -> None:
    assert redact(text) != text and detect(redact(text)) == ""


@pytest.mark.parametrize("text", NOT_SECRETS)
def test_no_undetected_sample_is_redacted(text: str) -> None:
    assert redact(text) == text


# --- the property ---------------------------------------------------------------------------

FRAGMENTS = st.sampled_from(
    [
        "sk-",
        "sk-proj-",
        "AIzaSy",
        "AKIA",
        "ASIA",
        "xoxb-",
        "eyJ",
        ".",
        "-----BEGIN RSA PRIVATE KEY-----",
        "-----END RSA PRIVATE KEY-----",
        "password",
        "Password",
        "token",
        "KEY",
        "key",
        "apiKey",
        "monkey",
        "contraseña",
        " = ",
        ": ",
        ":=",
        "=>",
        "=",
        '"',
        "'",
        "\n",
        " ",
        "_",
        REDACTED,
        "abcdefgh",
        "ZZZZZZZZ",
        "01234567",
        "Ab_9-",
        "ñ",
        # beyond AgentShield's table
        "sk-ant-",
        "xoxe-",
        "ghp_",
        "github_pat_",
        "glpat-",
        "aZ09bY18cX27dW36",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "aws_secret_access_key",
        "AWS_SECRET_ACCESS_KEY",
        "mysql",
        "mysqldump ",
        " -p",
        "--password=",
        "$",
        "pass",
        "db_password",
        "clientSecret",
        "  - ",
        " # ",
        "\r\n",
        "\\n",
        "s3cr3t!",
        "-----BEGIN PGP PRIVATE KEY BLOCK-----",
        "-----END PRIVATE KEY-----",
        "Proc-Type: 4,ENCRYPTED",
        "MIIEowIBAAKCAQEA",
        ";",
        # the families added with peers' tables, and their placeholders
        KEY_LINE,
        "https://",
        "://",
        "user:",
        "@",
        "PGPASSWORD=",
        "DB_PASSWORD=",
        "=",
        "${X}",
        "{{ x }}",
        "<redacted>",
        "EXAMPLE",
        "xxxx",
        '"auth": "',
        '"api_token", "',
        "dXNlcjpWYjhxVDN4THc5",
        "xoxb-1234567890-",
        "xoxe.xoxp-1-",
        "xapp-1-A1B2C3-123456-",
        "hooks.slack.com/services/",
        "sk_live_",
        "tskey-api-",
        "MY_",
        "SG.",
        "sk-ant-api03-",
        "AA",
        "Kq7_vR2-mX9p" * 8,
    ]
)
TEXTS = st.one_of(
    st.lists(st.one_of(FRAGMENTS, st.text(max_size=6)), max_size=40).map("".join),
    st.text(max_size=300),
)


@given(TEXTS)
@example('password = "' + REDACTED + '"')
@example("AKIA" + "0" * 16 + 'KEY="abcdefg"')
@example('token="abcdefg"key="hijklmn"')
def test_detect_is_truthy_exactly_when_redaction_changes_the_text(text: str) -> None:
    redacted = redact(text)
    assert bool(detect(text)) is (redacted != text)
    assert detect(redacted) == ""
    assert redact(redacted) == redacted
    assert bool(detect(text)) is bool(scan(text))
    assert detect(text.encode("utf-8", "surrogatepass")) == detect(text)


def _oracle(text: str) -> list[tuple[str, bytes]]:
    """Every secret any pattern matches at any position of ``text``: each pattern compiled on
    its own, tried at every start (no code shared with the module's search, only its documented
    rules: the ``value`` or ``assigned`` group is the secret, and :func:`placeholder`, tested
    on its own below, tells placeholders)."""
    data = text.encode("utf-8", "surrogatepass")
    found = []
    for pid, pattern in SECRET_PATTERNS:
        regex = compile_regex(pattern)
        names = regex.groupindex
        for pos in range(len(data) + 1):
            match = regex.match(data, pos)
            if match is None:
                continue
            groups = [
                (n.rstrip("0123456789"), match.group(i))
                for n, i in names.items()
                if match.group(i) is not None
            ]
            kind, secret = next(
                ((k, v) for k, v in groups if k in ("value", "assigned", "blob")),
                ("value", match.group(0)),
            )
            user = next((v for k, v in groups if k == "user"), None)
            bodies = [v for k, v in groups if k == "body"]
            if placeholder(kind, secret, user) or any(placeholder("body", b) for b in bodies):
                continue
            found.append((pid, secret))
    return found


@given(TEXTS)
@example("mysql -h AKIA" + "Z7Q2X9W4V6T3R8P5" + " -pS3cret db")  # a secret inside another's context
@example('private_key: "-----BEGIN RSA PRIVATE KEY-----\\nMIIEowIBAAKCAQEAz9\\n"')
@example("pass: s3cr3t!\r\npassword: [REDACTED]x1")
def test_redaction_leaves_nothing_any_pattern_matches_anywhere(text: str) -> None:
    redacted = redact(text)
    assert _oracle(redacted) == []
    assert bool(_oracle(text)) is bool(detect(text))


def test_redaction_of_many_secrets_is_linear() -> None:
    text = ("ghp_" + "aZ09" * 9 + " mysql -pS3cret; pass: s3cr3t!\n") * 20_000  # ~1.2 MB
    assert redact(text) == ("[REDACTED] mysql -p[REDACTED]; pass: [REDACTED]\n") * 20_000


# --- every writer ----------------------------------------------------------------------------

GHP = "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"
PEM = "\n".join(
    [
        "-----BEGIN RSA PRIVATE KEY-----",
        "MIIEowIBAAKCAQEAz9PEMBODYsecret77" + "Qx7Lk2Vb9Rt4Wp8Zn3Ys6Hd1Fg5Jc0Me",
        "-----END RSA PRIVATE KEY-----",
    ]
)


def test_redact_json_copies_and_keeps_keys() -> None:
    value: dict[str, Any] = {GHP: [GHP, {"reason": PEM}], "n": (1, 2.5, None, True)}
    redacted = redact_json(value)
    assert redacted == {GHP: [REDACTED, {"reason": REDACTED}], "n": [1, 2.5, None, True]}
    assert value[GHP][0] == GHP  # the original is untouched


def _stores(tmp_path: Path) -> list[Any]:
    from forge_policy.stores import FileStore, MemoryStore, SQLiteStore

    return [
        MemoryStore(),
        FileStore(tmp_path / "state.json", fsync=False),
        SQLiteStore(tmp_path / "state.db", synchronous="OFF"),
    ]


def test_every_store_writes_the_state_redacted(tmp_path: Path) -> None:
    from forge_policy.state import SessionState

    for store in _stores(tmp_path):
        state = SessionState.new(0.0)
        state.behavior("b").overrides.append({"reason": f"token {GHP}", "n": 1})
        state.data["note"] = PEM
        store.transact("s1", lambda _cur, state=state: (None, state))
        stored = store.load("s1").to_dict()
        assert stored["behaviors"]["b"]["overrides"] == [{"reason": f"token {REDACTED}", "n": 1}]
        assert stored["note"] == REDACTED
        store.close()
    for path in tmp_path.iterdir():
        data = path.read_bytes()
        assert GHP.encode() not in data and b"PEMBODY" not in data, path


def test_an_override_reason_is_redacted_in_the_grant_and_its_answer() -> None:
    import forge_policy as fp

    store = fp.MemoryStore()
    evaluator = fp.Evaluator(fp.builtin_catalog(), store=store, clock=lambda: 0.0)
    answer = evaluator.override("s1", "search-first", reason=f"ok {GHP}")
    assert answer.reason == f"ok {REDACTED}"
    grant = store.load("s1").behavior("search-first").grant
    assert grant is not None and grant.reason == f"ok {REDACTED}"


def test_cli_output_is_redacted() -> None:
    from forge_policy.cli._format import short
    from forge_policy.cli.context import Context

    out, err = io.StringIO(), io.StringIO()
    ctx = Context(out, err)
    ctx.print(f"reason: {GHP}")
    ctx.print_json({"reason": 'password="correct horse battery"', GHP: PEM})
    ctx.note(f"failed: {PEM}")
    text = out.getvalue() + err.getvalue()
    assert GHP not in text and "PEMBODY" not in text and "correct horse" not in text
    assert json.loads(out.getvalue().split("\n", 1)[1])[REDACTED] == REDACTED
    # a value is redacted before it is cut, when a cut secret would no longer be recognized
    assert "correct" not in short('password="correct horse battery staple" and more', 20)


def test_an_explanation_redacts_before_it_cuts() -> None:
    from forge_policy.model import ConditionResult

    command = 'curl -d password="correct horse battery staple" ' + "x" * 300
    shown = ConditionResult("command", "contains", "curl", command, True).to_dict()["actual"]
    assert isinstance(shown, str) and "correct" not in shown and len(shown) == 200


def test_a_hook_error_line_is_redacted() -> None:
    from forge_policy.hook import _describe

    line = _describe(RuntimeError(f"cannot parse {PEM} near {GHP}"))
    assert "PEMBODY" not in line and GHP not in line and REDACTED in line


def test_a_fact_in_a_message_is_redacted() -> None:
    from forge_policy.templates import TemplateValues

    values = TemplateValues({}, lambda name: ["mysql -pS3cretPass db"], None)
    assert values["facts.commands"] == "mysql -p[REDACTED] db"


def test_the_worker_log_is_redacted(capsys: pytest.CaptureFixture[str]) -> None:
    from forge_policy.worker.server import log

    log(f"request failed: ValueError: {GHP}")
    assert GHP not in capsys.readouterr().err


def test_two_threads_compiling_the_table_at_once_both_redact() -> None:
    """The first redaction in a process compiles the secret table lazily; the adapters run the
    evaluator in worker threads, so two threads can compile at once. Both first compiles are
    held until the other has started too: each must then find the table it needs (a positional
    cache once kept two copies of the one-regex entry and handed one out as the table)."""
    import subprocess
    import sys

    script = """
import threading
import forge_policy.catalog.dsl as dsl
import forge_policy.secrets as secrets

real, barrier, calls = dsl.compile_regex, threading.Barrier(2, timeout=10), []
def held(pattern):
    calls.append(pattern)
    if len(calls) <= 2:
        barrier.wait()  # both threads are past the "not compiled yet" check
    return real(pattern)
dsl.compile_regex = held

results = []
def redact():
    results.append(secrets.redact("export AWS_ACCESS_KEY_ID=AKIA" + "IOSFODNN7EXAMPL3"))
threads = [threading.Thread(target=redact) for _ in range(2)]
for t in threads: t.start()
for t in threads: t.join()
print(results)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("[REDACTED]") == 2 and "IOSFODNN7" not in done.stdout, done.stderr


@given(TEXTS, st.sampled_from(["content", "new_string", "body", "text"]))
@example('password="correct horse battery"', "content")
@example('export API_KEY="ghp_' + "aZ09" * 9 + '"', "new_string")
# found by this test: spaces collapsed after redacting made `-psk-` a mysql password match
@example("mysqldump  -psk- -psk-", "content")
@settings(max_examples=60)
def test_a_summary_of_any_input_leaves_no_secret_a_pattern_matches(text: str, key: str) -> None:
    # the JSON summary of an input with none of the usual keys: quoting must not hide a secret
    # (password="…" became password=\"…\" before it was redacted, and stayed in the summary)
    summary = summarize("Write", {key: text}, limit=1_000_000).removeprefix("Write: ")
    try:
        inner = json.loads(summary)[key]
    except ValueError:  # the whole text hidden (fail closed): nothing of it is left
        inner = summary
    assert _oracle(inner) == [], summary


def test_a_remembered_clean_text_is_redacted_as_a_new_one() -> None:
    """Issue 28: redaction remembers the short texts it found clean (every write redacts the
    same ids, levels and tools again); a secret is never remembered, so every sample is
    redacted the first time and every time after, and a clean one stays as it is."""
    from forge_policy import secrets

    for _round in range(3):
        for text, _pid in SECRETS:
            assert redact(text) != text and detect(redact(text)) == ""
            assert text not in secrets._CLEAN
        for text in NOT_SECRETS:
            assert redact(text) == text
        assert redact_json({"a": [SECRETS[0][0]], "b": NOT_SECRETS[0]}) == {
            "a": [redact(SECRETS[0][0])],
            "b": NOT_SECRETS[0],
        }
    assert any(text in secrets._CLEAN for text in NOT_SECRETS)
    # a full set is emptied, never grown past its bound
    for n in range(secrets._CLEAN_MAX + 10):
        redact(f"clean text {n}")
    assert len(secrets._CLEAN) <= secrets._CLEAN_MAX


def test_a_remembered_clean_content_is_detected_as_a_new_one() -> None:
    """Issue 28: detection remembers the contents it found clean (a file read on every call
    that names it); a content with a secret is never remembered, so every sample is found the
    first time and every time after, also once its clean twin is remembered."""
    from forge_policy import secrets

    for _round in range(3):
        for text, pid in SECRETS:
            assert detect(text) == pid
            assert detect(text.encode()) == pid
            assert text.encode() not in secrets._CLEAN_DATA
        for text in NOT_SECRETS:
            assert detect(text) == ""
    assert any(text.encode() in secrets._CLEAN_DATA for text in NOT_SECRETS)
    # a long content is scanned every time, never kept; a full set is emptied, never grown
    long_clean = b"x " * (secrets._CLEAN_DATA_LONGEST + 1)
    assert detect(long_clean) == "" and long_clean not in secrets._CLEAN_DATA
    for n in range(secrets._CLEAN_DATA_MAX + 10):
        detect(f"clean content {n}")
    assert len(secrets._CLEAN_DATA) <= secrets._CLEAN_DATA_MAX
