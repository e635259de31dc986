"""One secret table for detection and redaction (:mod:`forge_policy.secrets`).

The relation proven here: ``detect(text)`` is truthy exactly when ``redact(text) != text``, and
``redact`` leaves nothing ``detect`` would find.
"""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from forge_policy.facts.secrets import SECRET_PATTERNS as FACT_PATTERNS
from forge_policy.facts.secrets import find_secret
from forge_policy.secrets import REDACTED, SECRET_PATTERNS, detect, redact, scan, summarize

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
        ("sk-ant-api03-" + "Zz9_-" * 18, "sk-ant-api03-" + "Zz9_-" * 18),  # a lookalike: no key
        ("task-" + "a" * 48, "task-" + "a" * 48),  # "sk-" inside a word is no key
        ("AIzaSy" + "B" * 33, REDACTED),
        ("ASIA" + "Q" * 16, REDACTED),  # temporary AWS keys are detected too
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
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----\nok",
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
    assert redact("AKIA" + "Z" * 16 + 'KEY="abcdefg"') == f'{REDACTED}KEY="{REDACTED}"'


def test_redacting_twice_changes_nothing_more() -> None:
    once = redact('password = "hunter22" AKIA' + "Z" * 16)
    assert redact(once) == once and detect(once) == ""
    assert detect(f'password = "{REDACTED}"') == ""


def test_scan_reports_byte_spans_in_text_order() -> None:
    text = 'ñ token: "hunter22" AKIA' + "Z" * 16
    raw = text.encode()
    found = scan(text)
    assert [pid for pid, _, _ in found] == ["password_assignment", "aws_access_key"]
    assert [raw[start:end] for _, start, end in found] == [b"hunter22", b"AKIA" + b"Z" * 16]


def test_lone_surrogates_survive_redaction() -> None:
    text = "\ud800 password='hunter22' \udfff"
    assert redact(text) == f"\ud800 password='{REDACTED}' \udfff"


def test_summaries_are_redacted_and_short() -> None:
    summary = summarize("Bash", {"command": "curl -H 'X-Key: AKIA" + "Q" * 16 + "' " + "x" * 200})
    assert "AKIA" not in summary and len(summary) == 100 and REDACTED in summary


# --- detection (moved from test_facts.py); each case also holds for redaction -----------------

SECRETS = [
    ("sk-" + "a" * 48, "openai_key"),
    ("OPENAI=sk-proj-" + "Ab_9-" * 10, "openai_key"),
    ("AIzaSy" + "B" * 33, "google_api_key"),
    ("AKIA" + "Z" * 16, "aws_access_key"),
    ("xoxb-1234567890abcd", "slack_token"),
    ("Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc123-_", "jwt"),
    ('password: "superSecretAdmin123"', "password_assignment"),
    ('db_password = "superSecretAdmin123"', "password_assignment"),
    ("api_key = 'abcdef123456'", "password_assignment"),
    ('token: "abcdef123456"', "password_assignment"),
    ('contraseña = "miClaveSegura"', "password_assignment"),
    ('CONTRASEÑA = "miClaveSegura"', "password_assignment"),
    ('private_key: "-----BEGIN"', "password_assignment"),
    ('SECRET="deploy-secret-value"', "password_assignment"),
    ('línea uno\npassword: "superSecretAdmin123"', "password_assignment"),
    ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbg==", "private_key"),
    ("AKIA" + "Z" * 16 + " sk-" + "a" * 48, "openai_key"),  # pattern order, not text order
    ("sk-" + "a" * 20, "openai_key"),
    ("DEEPSEEK_API_KEY=sk-" + "0123456789abcdef" * 2, "openai_key"),
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
    "xoxq-1234567890abcd",
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
    assert find_secret(data) in {"", *(pid for pid, _ in SECRETS)}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('password = "' + "a" * 1_000_000, ""),
        ("sk-" * 300_000, ""),
        ("eyJ" + "a" * 500_000 + ".eyJ" + "b" * 500_000, ""),
        ("x" * 1_000_000 + ' token: "abcdef123456"', "password_assignment"),
        ("x" * 1_000_000 + 'token: "abcdef123456"', ""),  # "xtoken" is not a key name
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
