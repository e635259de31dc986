"""Each family of the secret table, both ways: what it must find and what it must leave alone.

The shapes are the vendors' documented formats and the placeholders peers' scanners (gitleaks,
secretlint) allow; the strings are this file's own. Anything that looks like a real token is
assembled at runtime (``"ghp_" + …``) so that the repository itself trips no secret scanner.
Every case checks detection and redaction together: ``detect`` names the family exactly when
``redact`` changes the text, and the redacted text keeps the context (the variable's name,
the URL's user and host).
"""

from __future__ import annotations

import pytest

from forge_policy.secrets import REDACTED, detect, placeholder, redact

R = REDACTED
# random-looking bodies, built here
B24 = "Vb8qT3xLw9zR4mK7pN2sT5wY"
B40 = B24 + "Hd1Fg5Jc0Me3aB6d"
B48 = B40 + "E9gH2jK5"
PEM_LINE = "MIIEowIBAAKCAQEA" + "z9Qx7Lk2Vb9Rt4Wp" + "8Zn3Ys6Hd1Fg5Jc0" + "Me+/aB3dE6gH9jK2"
ANTHROPIC = "sk-ant-api03-" + "Kq7_vR2-mX9p" * 7 + "L4sT6wY1zAA"
JWT_HEAD = "eyJhbGciOiJub25lIn0"  # {"alg":"none"}
JWT_BODY = "eyJzdWIiOiJ0In0"  # {"sub":"t"}

#: ``(text, pattern id, text once redacted)``
FOUND = [
    # JSON/YAML-style and quoted assignments
    ('{"password": "Vb8qT3xLw9"}', "password_assignment", f'{{"password": "{R}"}}'),
    ('"client_secret": "' + B24 + '"', "password_assignment", f'"client_secret": "{R}"'),
    ('"credentials" : "' + B40 + '"', "password_assignment", f'"credentials" : "{R}"'),
    ('"user_auth": "dXNlcjpWYjhxVDN4THc5"', "password_assignment", f'"user_auth": "{R}"'),
    ("api_key = '" + B24 + "'", "password_assignment", f"api_key = '{R}'"),
    ('STRIPE_SIGNING_KEY="' + B24 + '"', "password_assignment", f'STRIPE_SIGNING_KEY="{R}"'),
    ('key = "' + B24 + '"', "password_assignment", f'key = "{R}"'),
    ('getenv("api_token", "' + B24 + '")', "password_assignment", f'getenv("api_token", "{R}")'),
    ("password: Vb8qT3xLw9", "password_yaml", f"password: {R}"),
    # unquoted NAME=value: dotenv files, shell commands, flags
    ("DB_PASSWORD=Vb8qT3xLw9", "password_env", f"DB_PASSWORD={R}"),
    ("export API_KEY=Vb8q-T3xLw9 && make", "password_env", f"export API_KEY={R} && make"),
    ("PGPASSWORD=str0ng@pw psql -h db", "password_env", f"PGPASSWORD={R} psql -h db"),
    ("docker login --password=Vb8qT3xLw9!", "password_env", f"docker login --password={R}"),
    ("url?user=me&password=Vb8qT3xLw9", "password_env", f"url?user=me&password={R}"),
    # credentials in a URL
    ("https://user:pass@example.com/x", "url_password", f"https://user:{R}@example.com/x"),
    ("ftp://deploy:s3cr3t-Pw@ftp.example.org", "url_password", f"ftp://deploy:{R}@ftp.example.org"),
    (
        "mongodb+srv://app:myP@ssw0rd@cluster0.example.net/db",
        "url_password",
        f"mongodb+srv://app:{R}@cluster0.example.net/db",
    ),
    ("redis://:Vb8qT3xLw9@cache:6379", "url_password", f"redis://:{R}@cache:6379"),
    # Anthropic, by its documented shape
    (ANTHROPIC, "anthropic_key", R),
    (f"ANTHROPIC_API_KEY='{ANTHROPIC}'", "anthropic_key", f"ANTHROPIC_API_KEY='{R}'"),
    # GitHub, GitLab
    ("ghp_" + B40[:36], "github_token", R),
    ("github_pat_" + B24 + "_" + B40, "github_token", R),
    ("glpat-" + B24[:20], "gitlab_token", R),
    # Slack: bot, user, legacy, app, configuration and refresh tokens, webhooks
    ("xoxb-123456789012-123456789012-" + B24, "slack_token", R),
    ("token=xoxa-23984754863-2348975623114", "slack_token", f"token={R}"),
    ("xoxb-50014434-" + B24[:18], "slack_token", R),
    ("xapp-1-A052FGTS2DL-5171572773297-" + B40.lower(), "slack_token", R),
    ("xoxe.xoxp-1-" + B40 * 3, "slack_token", R),
    ("xoxe-1-" + B40 * 3, "slack_token", R),
    (
        "https://hooks.slack.com/services/T0DC8JB1Q/B0DD08H5G/" + B24,
        "slack_webhook",
        "https://" + R,
    ),
    # AWS
    ("AKIA" + "Z7Q2X9W4V6T3R8P5", "aws_access_key", R),
    ("aws_secret_access_key = " + B40, "aws_secret_key", f"aws_secret_access_key = {R}"),
    # vendors' token formats
    ("sk_live_" + B24, "service_token", R),
    ("STRIPE_KEY=rk_test_" + B24, "service_token", f"STRIPE_KEY={R}"),
    ("npm_" + B40[:36], "service_token", R),
    ("shpat_" + B40[:32], "service_token", R),
    ("cfat_" + B48, "service_token", R),
    ("dckr_pat_" + B40[:27], "service_token", R),
    ("figd_" + B40, "service_token", R),
    ("MY_tskey-api-" + B24[:12] + "-" + B24, "service_token", "MY_" + R),
    ("glsa_" + B40[:32] + "_0123abcd", "service_token", R),
    ("lin_api_" + B40, "service_token", R),
    ("vcp_" + B24, "service_token", R),
    ("SG." + B24[:22] + "." + B40 + "Qx7", "service_token", R),
    ("ABSKQmVkcm9ja0FQSUtleS" + B40 * 3, "service_token", R),
    # PEM keys, also inside a JSON string, also cut short
    (
        f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_LINE}\n-----END RSA PRIVATE KEY-----",
        "private_key",
        R,
    ),
    (
        '"private_key": "-----BEGIN PRIVATE KEY-----\\n'
        + PEM_LINE
        + '\\n-----END PRIVATE KEY-----"',
        "private_key",
        f'"private_key": "{R}"',
    ),
    (f"-----BEGIN OPENSSH PRIVATE KEY-----\n{PEM_LINE}", "private_key", R),
    # JWTs, also unsigned
    (f"Bearer {JWT_HEAD}.{JWT_BODY}.{B24}", "jwt", f"Bearer {R}"),
    (f'token = "{JWT_HEAD}.{JWT_BODY}."', "jwt", f'token = "{R}"'),
]

#: texts that hold no secret: placeholders, names that are not credentials, near misses
NOT_FOUND = [
    # placeholders of an assignment's value
    'password = "${DB_PASSWORD}"',
    'password = "$DB_PASSWORD"',
    'password = "$(cat /run/secrets/pw)"',
    'password: "{{ vault_password }}"',
    'secret: "<redacted>"',
    "password = '<your-password>'",
    'api_key = "%API_KEY%"',
    'token = "xxxxxxxxxxxxxxxx"',
    'password = "********"',
    'apiKey: "AIza' + "a" * 35 + '"',
    'password = "changeme"',
    'password = "password"',
    'password: "YOUR_PASSWORD"',
    'secret = "REPLACE_WITH_SECRET"',
    'conf("auth", "confirmationRequired")',
    'aws_access_key = "AKIA' + 'IOSFODNN7EXAMPLE"',
    '<entry key="com.example.feature_flag" value="on" />',
    # names that hold no credential
    '"bucket_key": "SalesResults-1.2"',
    'public_key = "' + B40 + '"',
    'DOTENV_PUBLIC_KEY="' + B40 + '"',
    'primary_key = "user_id_2024"',
    '"private_key_id": "..."',
    '["token", "confirm_password"]',
    # unquoted assignments that are code or config, not secrets
    "PASSWORD=",
    "PASSWORD = Vb8qT3xLw9",  # spaces around "=": not a dotenv or shell assignment
    "csrf-token=" + B40,
    "PASSWORD_FILE=/run/secrets/pw",
    "DB_PASSWORD=$DB_PASSWORD",
    "DB_PASSWORD=${DB_PASSWORD:-x}",
    # URLs without credentials or with placeholders
    "https://api.example.com:8443/v1",
    "https://${user}:${password}@api.example.com",
    "https://{{user}}:{{pass}}@api.example.com",
    "postgres://$(PGUSER):$(PGPASSWORD)@$(PGHOST)/db",
    "https://username:password@example.com",
    "https://YOUR_USER:YOUR_PASSWORD@example.com",
    "postgres://postgres:postgres@localhost/db",
    "https://user:abc@example.com",
    "https://user:xxxx@example.com",
    "ssh://git@github.com:22/o/r.git",
    # Anthropic near misses
    "sk-ant-api03-" + "Kq7_vR2-mX9p" * 7 + "L4sT6wY1zBB",  # not "AA"
    "sk-ant-api03-" + "Kq7_vR2-mX9p" * 5 + "AA",  # too short
    "sk-ant-api03-notarealkey",
    # Slack placeholders and near misses
    "xoxb-xxxxxxxxxxx-xxxxxxxxxxxxxxxxxxxxxxxx",
    "xoxp-XXXXXXXXXX-XXXXXXXXXX-XXXXXXXXXXX-XXXXXXXXXXXXXXXX",
    "xoxp-572370529330-573807301142-572331691188-####################",
    "xoxp-1234567890",
    "xoxp-1234-1234-1234-" + B24,  # ids of four digits
    "xoxb-Slack_BOT_TOKEN",
    "xoxe.xoxp-1-SlackAppConfigurationAccessTokenHere",
    "xoxe-1-xxx",
    "https://hooks.slack.com/services/TXXXXX/BXXXXX/XXXXXXXXXX",
    # AWS placeholders
    "AKIA" + "IOSFODNN7EXAMPLE",
    "AKIA" + "X" * 16,
    # vendors' near misses
    "pk_live_" + B24,  # publishable: not secret
    "sk_live_short",
    "xsk_live_" + B24,  # inside a word
    "cfat_" + B48 + "Z",  # one character too many
    "xtskey-api-" + B24[:12] + "-" + B24,
    "dckr_pat_tooshort",
    "vcp_abc",
    "ops_DUMMY" + B40 * 3,
    "ABSKQmVkcm9ja0FQSUtleS1EXAMPLE",
    # PEM armour around no key
    "-----BEGIN PRIVATE KEY-----\nxxx\n-----END PRIVATE KEY-----",
    "-----BEGIN PRIVATE KEY-----\n...\n-----END PRIVATE KEY-----",
    "-----BEGIN OPENSSH PRIVATE KEY----------END OPENSSH PRIVATE KEY-----",
    "-----BEGIN PRIVATE KEY-----\nYWJjZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXo=\n-----END PRIVATE KEY-----",
    'if line.startswith("-----BEGIN RSA PRIVATE KEY-----"):',
    '"private_key": "-----BEGIN PRIVATE KEY-----\\n...\\n-----END PRIVATE KEY-----\\n"',
    # GitHub placeholders
    "ghp_" + "x" * 36,
]


@pytest.mark.parametrize(("text", "pid", "redacted"), FOUND)
def test_each_family_is_found_and_redacted(text: str, pid: str, redacted: str) -> None:
    assert detect(text) == pid
    assert redact(text) == redacted
    assert detect(redacted) == ""


@pytest.mark.parametrize("text", NOT_FOUND)
def test_placeholders_and_near_misses_are_left_alone(text: str) -> None:
    assert detect(text) == ""
    assert redact(text) == text


@pytest.mark.parametrize(
    ("kind", "text", "user", "expected"),
    [
        ("assigned", "${X}", None, True),
        ("assigned", "{var}", None, True),
        ("assigned", "{not a var}", None, False),
        ("assigned", "<your-token>", None, True),
        ("assigned", "1111", None, True),
        ("assigned", "pass", None, False),  # four letters, a real (weak) password
        ("assigned", "aaaabbbb", None, True),  # half of it one character
        ("assigned", "Vb8qT3xLw9", None, False),
        ("assigned", "your-api-key", None, True),
        ("assigned", "enterprise2024!", None, False),  # no instruction: no separator
        ("assigned", "mongodb", "mongodb", True),
        ("assigned", "mongodb", "admin", False),
        ("assigned", "a.b.c", None, True),
        ("assigned", "A.b.c", None, False),
        ("assigned", "https://example.com/x", None, True),
        ("body", "IOSFODNN7EXAMPLE", None, True),
        ("body", "x-x-x_x", None, True),
        ("body", "Z7Q2X9W4V6T3R8P5", None, False),
        ("blob", "confirmationRequired", None, True),  # no digit: a word, not a credential
        ("blob", "dXNlcjpWYjhxVDN4", None, False),
        ("value", "xxxx", None, False),  # a plain secret group has no placeholder rule
        ("value", REDACTED, None, True),
    ],
)
def test_placeholder(kind: str, text: str, user: str | None, expected: bool) -> None:
    assert placeholder(kind, text.encode(), user.encode() if user else None) is expected
