"""The credential shapes that reached the audit log raw (issue 23) and the vendor tokens added
with them, both ways: each is found and redacted, and its harmless near miss is left alone.
Then a few of them through the real ``forge-policy hook`` process: no raw value reaches any
file under ``.forge/`` (the audit log, the state) or any output.

The families follow what peers' secret scanners cover (gitleaks' and detect-secrets' rule
families: HTTP authorization headers, basic-auth credentials, Azure storage keys, Hugging Face
and other vendors' prefixed tokens); the strings are this file's own, assembled at runtime so
that the repository trips no secret scanner.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_secrets_e2e import Run

from forge_policy.secrets import REDACTED, detect, redact

R = REDACTED
B24 = "Vb8qT3xLw9zR4mK7pN2sT5wY"
B40 = B24 + "Hd1Fg5Jc0Me3aB6d"
HEX = "0123456789abcdef"
HEX64 = "9f8e7d6c5b4a3210" * 4
LETTERS34 = "QwErTyUiOpAsDfGhJkLzXcVbNmQwErTyUi"
AZURE_KEY = "Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0Lz" * 2 + "Mn4Bv5Cx6Za7Sd8Fg9Hj0Kl1Pq==" + "x" * 0

#: ``(text, pattern id, text once redacted)``
FOUND = [
    # HTTP authorization headers: curl's -H/--header, Python and JS strings, any scheme
    (
        f'curl -H "Authorization: Bearer {B24}" https://api.example.com',
        "auth_header",
        f'curl -H "Authorization: Bearer {R}" https://api.example.com',
    ),
    (
        f"curl --header 'authorization: token {B24}' x",
        "auth_header",
        f"curl --header 'authorization: token {R}' x",
    ),
    (
        f'requests.get(u, headers={{"Authorization": "Bearer {B24}"}})',
        "auth_header",
        f'requests.get(u, headers={{"Authorization": "Bearer {R}"}})',
    ),
    (
        f"fetch(u, {{headers: {{Authorization: 'Basic {B24}=='}}}})",
        "auth_header",
        f"fetch(u, {{headers: {{Authorization: 'Basic {R}'}}}})",
    ),
    (f"Proxy-Authorization: Digest {B24}", "auth_header", f"Proxy-Authorization: Digest {R}"),
    (f'"Authorization": "{B40}"', "auth_header", f'"Authorization": "{R}"'),
    (f"curl --oauth2-bearer {B24} https://x", "auth_header", f"curl --oauth2-bearer {R} https://x"),
    # credentials on a client's command line
    ("curl -u admin:Vb8qT3xLw9 https://x", "cli_password", f"curl -u admin:{R} https://x"),
    (
        "curl -s --user 'deploy:s3cr3t pw' https://x",
        "cli_password",
        f"curl -s --user 'deploy:{R}' https://x",
    ),
    ("curl -uadmin:hunter22 https://x", "cli_password", f"curl -uadmin:{R} https://x"),
    (
        "curl --proxy-user me:Vb8qT3xLw9 -x p https://x",
        "cli_password",
        f"curl --proxy-user me:{R} -x p https://x",
    ),
    ("mysql -h db --password Vb8qT3xLw9 app", "cli_password", f"mysql -h db --password {R} app"),
    ("mysql -u root -pVb8qT3xLw9 app", "mysql_password", f"mysql -u root -p{R} app"),
    (
        "mysql -u root --password=Vb8qT3xLw9 app",
        "mysql_password",
        f"mysql -u root --password={R} app",
    ),
    (
        "docker login -u me -p Vb8qT3xLw9 registry.example.com",
        "cli_password",
        f"docker login -u me -p {R} registry.example.com",
    ),
    ("sshpass -p 'correct horse' ssh host", "cli_password", f"sshpass -p {R} ssh host"),
    ("redis-cli -h cache -a Vb8qT3xLw9 ping", "cli_password", f"redis-cli -h cache -a {R} ping"),
    # Azure connection strings and shared access signatures
    (
        f"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={AZURE_KEY};"
        "EndpointSuffix=core.windows.net",
        "azure_key",
        f"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={R};"
        "EndpointSuffix=core.windows.net",
    ),
    (
        f"Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=root;SharedAccessKey={B40}=",
        "password_env",  # also a credential's name: the earlier family names it
        f"Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=root;SharedAccessKey={R}",
    ),
    (
        f"https://acct.blob.core.windows.net/c?sv=2022-11-02&sr=c&sig={B40}%2B{B24}%3D",
        "azure_key",
        f"https://acct.blob.core.windows.net/c?sv=2022-11-02&sr=c&sig={R}",
    ),
    (
        "client: " + "aB3" + "8Q~" + "Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0Lz9",
        "service_token",
        f"client: {R}",
    ),
    # Hugging Face
    (f"export HF_TOKEN=hf_{LETTERS34}", "huggingface_token", f"export HF_TOKEN={R}"),
    (f"api_org_{LETTERS34}", "huggingface_token", R),
    # other vendors' prefixed tokens
    ("pypi-AgEIcHlwaS5vcmc" + B40 + B24, "service_token", R),
    ("dop_v1_" + HEX64, "service_token", R),
    ("dapi" + HEX * 2, "service_token", R),
    ("PMAK-" + HEX + "01234567" + "-" + HEX * 2 + "01", "service_token", R),
    ("pul-" + HEX * 2 + "01234567", "service_token", R),
    ("dp.pt." + B40 + "Qx7", "service_token", R),
    ("VAULT_TOKEN=hvs." + B40 * 3, "service_token", f"VAULT_TOKEN={R}"),
    ("AGE-SECRET-KEY-1" + ("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L" * 2)[:58], "service_token", R),
    ("NRAK-" + "Z7Q2X9W4V6T3R8P5Z7Q2X9W4V6T", "service_token", R),
    ("gsk_" + B40 + "Hd1Fg5Jc0Me3", "service_token", R),
    ("sk-or-v1-" + HEX64, "service_token", R),
    ("glptt-" + B40, "service_token", R),
    ("GOCSPX-" + B24 + "Hd1F", "service_token", R),
    ("123456789:AA" + B24 + "Hd1Fg5Jc0", "service_token", R),
    (HEX * 2 + "-us21", "service_token", R),
    ("LTAI" + B24[:20], "service_token", R),
    ("SK" + HEX * 2, "service_token", R),
]

#: harmless text of the same shapes: variables, placeholders, words that are not credentials
NOT_FOUND = [
    'curl -H "Authorization: Bearer $TOKEN" https://api.example.com',
    'curl -H "Authorization: Bearer ${GITHUB_TOKEN}" https://api.example.com',
    "headers = {'Authorization': f'Bearer {token}'}",
    "fetch(u, {headers: {Authorization: `Bearer ${token}`}})",
    '"Authorization": "Bearer " + token',
    "Authorization: Bearer <token>",
    "Authorization: Bearer YOUR_TOKEN",
    "Authorization: Bearer ACCESS_TOKEN",
    "Authorization: Bearer eyJhbGciOi...",
    "the authorization: required by the endpoint",
    "Authorization: Basic",
    "requiresAuthorization = true",
    'curl -u "$USER:$PASSWORD" https://x',
    "curl -u admin:admin https://x",  # the user again: a placeholder
    "curl -u admin https://x",  # curl prompts for the password
    "curl -u user:password https://x",
    "curl -u user:secret https://x",
    "docker login --password-stdin -u me registry",
    'docker login -u me -p "$REGISTRY_PASSWORD"',
    "mysql -u root -p app",
    "mysql -u root --password",  # mysql prompts for it
    "git log -p HEAD",
    "pip install -p foo",
    "ssh -p 2222 host",
    "pytest -p no:randomly",
    "AccountKey=",
    "AccountName=acct;AccountKey=$AZURE_KEY",
    "https://example.com/x?sig=abc",
    "hf_" + "x" * 34,
    "HF_HOME=/data/hf_cache_dir_for_models_x",
    "chf_" + LETTERS34,
    "pypi-AgEIcHlwaS5vcmc",
    "dop_v1_" + "x" * 64,
    "SK" + HEX * 2 + "0",  # one digit too many
    "TASK" + HEX * 2,  # inside a word
    "age-secret-key-1 is how age names its keys",
    "sk-or-v1-short",
]


@pytest.mark.parametrize(("text", "pid", "redacted"), FOUND)
def test_each_shape_is_found_and_redacted(text: str, pid: str, redacted: str) -> None:
    assert detect(text) == pid
    assert redact(text) == redacted
    assert detect(redacted) == ""


@pytest.mark.parametrize("text", NOT_FOUND)
def test_its_harmless_twin_is_left_alone(text: str) -> None:
    assert detect(text) == ""
    assert redact(text) == text


#: ``(command, the raw secret in it)``: the shapes issue 23 found raw in the audit log
LEAKED = [
    ("curl -u admin:Vb8qT3xLw9Adm https://api.example.com", "Vb8qT3xLw9Adm"),
    (f'curl -H "Authorization: Bearer {B24}" https://api.example.com', B24),
    (f"python -c \"requests.get(u, headers={{'Authorization': 'Token {B40}'}})\"", B40),
    (f"node -e \"fetch(u, {{headers: {{Authorization: 'Basic {B24}Zq=='}}}})\"", B24 + "Zq=="),
    (f"az storage blob list --connection-string 'AccountName=a;AccountKey={AZURE_KEY}'", AZURE_KEY),
    ("mysql -h db -u root --password Wq8vR3mK9pL4 app", "Wq8vR3mK9pL4"),
    ("mysql -h db -u root -pWq8vR3mK9pL5 app", "Wq8vR3mK9pL5"),
    ("mysql -h db -u root --password=Wq8vR3mK9pL6 app", "Wq8vR3mK9pL6"),
    (f"HF_TOKEN=hf_{LETTERS34} python train.py", f"hf_{LETTERS34}"),
]


@pytest.mark.parametrize("store", ["file", "sqlite"])
def test_the_shapes_never_reach_a_sink_raw(tmp_path: Path, store: str) -> None:
    """Blocks, a soft block's retry (the override record with the call's summary), warnings
    and nudges, an override's reason, ``explain`` and the reports: every file under ``.forge/``
    and every output is searched for each raw value."""
    for text, secret in LEAKED:
        assert secret in text and secret not in redact(text), text
    run = Run(tmp_path, store)
    for i, (text, _) in enumerate(LEAKED):
        word = ("soft-me", "hard-me", "warn-me", "nudge-me")[i % 4]
        run.hook(f"{word} {text}")
        run.hook(f"{word} {text}")
    run.override("\n".join(text for text, _ in LEAKED))
    run.explain("\n".join(text for text, _ in LEAKED))
    run.report()
    assert {r["kind"] for r in run.project.audit()} >= {"block", "override"}
    assert run.leaks([secret for _, secret in LEAKED]) == []
