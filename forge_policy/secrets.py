"""Secrets: the one pattern table behind detection and redaction (SPEC §7, §9).

``facts.secret_in_files`` (:mod:`forge_policy.facts.secrets`) *detects* with this table, and
everything written to state, audit or output is *redacted* with it, so the two can never
disagree: a text holds a secret exactly when redaction changes it. That is why there is no
redaction-only pattern: whatever is worth hiding is also reported as a secret of the file that
holds it, and whatever peers' scanners call a placeholder (``AKIA…EXAMPLE``, ``ghp_xxxx…``,
``password = "${DB_PASSWORD}"``, a PEM block around ``...``) is neither.

- :func:`scan` finds the secrets of a text, left to right. Each pattern is searched on its own,
  so that no pattern's context (the ``mysql … -p`` before a password) hides another's secret,
  and secrets of several patterns that overlap make one span. For an assignment
  (``password = "…"``, ``pass: …``, ``-pPASS``, ``aws_secret_access_key=…``) the secret is the
  value, for every other pattern the whole match. A value that is already :data:`REDACTED` is
  no secret, so redacting twice changes nothing more; nor is a :func:`placeholder`.
- :func:`detect` is the id of the first pattern of :data:`SECRET_PATTERNS`, in table order,
  that has a secret in the text (``""`` when :func:`scan` finds none).
- :func:`redact` replaces each span :func:`scan` finds by :data:`REDACTED`;
  :func:`redact_json` does it to every string of a JSON value (the stores' write path).

Patterns run with RE2, in linear time whatever the text, and RE2 is imported on first use. A
clean text costs one search of all patterns combined; only a text it hits is searched pattern
by pattern.

>>> detect('db_password = "superSecretAdmin123"'), detect('secret = "short"')
('password_assignment', '')
>>> redact('export OPENAI_API_KEY=sk-' + 'a' * 48 + ' token="hunter22"')
'export OPENAI_API_KEY=[REDACTED] token="[REDACTED]"'
>>> redact('token="abcd1"')  # five characters are too short to be a secret
'token="abcd1"'
"""

from __future__ import annotations

from forge_policy._lazy import kept

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any

    #: (key, ((case-insensitive, literals), ...)), ...: see :data:`NEEDS`
    Needs = tuple[tuple[str, tuple[tuple[bool, tuple[str, ...]], ...]], ...]

REDACTED = "[REDACTED]"
"""What :func:`redact` writes in place of a secret."""

# The name of a quoted assignment: a word that names a credential after a non-letter
# (``db_password``, ``MY_TOKEN``, ``client_secret``, ``"credentials"``; so that ``monkey``,
# ``compass`` and ``xtoken`` do not count); ``key`` alone only as a whole name (``key = "…"``,
# ``"key": "…"``), since ``bucket_key``, ``public_key`` and ``primary_key`` name no secret while
# ``api_key``, ``secret_key`` or ``signing_key`` do; or a camelCase word that names a
# credential (``dbPassword``, ``myApiKey``, ``authToken``; not ``schemaKey`` or ``publicToken``,
# which peers' secret scanners allow).
_KEY_KINDS = (
    r"api|access|private|secret|client|master|encryption|signing|auth|app|account|service"
    r"|session|consumer|license|admin|root"
)
_WORDS = (
    r"passw(?:or)?d|passphrase|pass|contrase[nñ]a|secret|token|credentials?"
    rf"|(?:{_KEY_KINDS})[_-]?key|(?:auth|access|api|refresh)[_-]?token"
)
_CAMEL = (
    r"Passw(?:or)?d|Passphrase|Secret|SecretKey|ApiKey|AccessKey|PrivateKey"
    r"|AuthToken|AccessToken|ApiToken|SecretToken|RefreshToken"
)
_KEYWORD = rf"(?:(?:^|[^A-Za-z])(?i:{_WORDS})|(?:^|[^A-Za-z0-9_.-])(?i:key)|[a-z0-9](?:{_CAMEL}))"
_ASSIGN = r"[\"']?[ \t]*(?::=|=>|[:=])[ \t]*"
# A credential blob: no spaces, 16 characters or more with a digit (a UUID, base64), for the
# names that are also everyday words or arguments: ``"auth": "…"``, ``("api_token", "…")``.
_BLOB = r"[A-Za-z0-9+/=_.-]{16,}"

# An unquoted ``password: value`` (YAML, a log line) names a credential with a stronger word
# than a quoted one: not ``key`` or ``token`` alone, which are everyday YAML keys.
_STRONG_WORDS = (
    r"passw(?:or)?d|passphrase|pass|contrase[nñ]a|secret|client[_-]?secret"
    r"|(?:api|access|private|secret)[_-]?key|(?:auth|access|api|refresh|bearer)[_-]?token"
)
_STRONG_CAMEL = (
    r"Passw(?:or)?d|Passphrase|Secret|SecretKey|ApiKey|AccessKey|PrivateKey|ClientSecret"
    r"|AuthToken|AccessToken|ApiToken|RefreshToken"
)
_STRONG_NAME = (
    rf"(?:(?:[A-Za-z0-9_.-]*[0-9_.-])?(?i:{_STRONG_WORDS})"
    rf"|[A-Za-z0-9_.-]*[a-z0-9](?:{_STRONG_CAMEL}))"
)
# ... and its value is one plain word of six characters or more, up to the end of the line (or a
# closing quote), with a digit or a symbol in it: ``str``, ``SecretStr``, ``this.password``,
# ``${PW}``, ``*alias``, ``!vault``, ``Joi.string(),`` and ``process.env.PW`` are code, not
# passwords. _PLAIN may follow the first character, _MARK is the digit or symbol.
_PLAIN = r"[A-Za-z0-9_+/=.~^@!#%&*?:$-]"
_MARK = r"[0-9!@#%^&*+=?~$]"
_YAML_VALUE = (
    rf"[0-9+~^@]{_PLAIN}{{5,}}"
    rf"|[A-Za-z0-9_+~^@-](?:{_MARK}{_PLAIN}{{4,}}|{_PLAIN}{_MARK}{_PLAIN}{{3,}}"
    rf"|{_PLAIN}{{2}}{_MARK}{_PLAIN}{{2,}}|{_PLAIN}{{3}}{_MARK}{_PLAIN}+|{_PLAIN}{{4,}}{_MARK}{_PLAIN}*)"
)

# A PEM private key: the header, then key material of 64 base64 characters or more (peers'
# threshold: ``xxx``, ``...`` or a short sample between the armour lines is a placeholder, and
# the armour alone is code that looks for keys), up to the footer or, for a key cut short, as
# far as it goes. Line breaks may be escaped (``\n`` inside a JSON string), and an encrypted
# key's ``Proc-Type:``/``DEK-Info:`` lines are part of it.
_PEM_LABEL = r"(?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
_NL = r"[ \t]*(?:\r?\n|(?:\\r)?\\n)[ \t]*"
_PEM_BEGIN = r"-----BEGIN " + _PEM_LABEL
_PEM_HEADERS = rf"(?:{_NL}[A-Za-z-]+: [^\r\n\\]*)*"
_PEM_MATERIAL = rf"(?:{_NL})*(?:[A-Za-z0-9+/=](?:{_NL})*){{64,}}"
_PEM_END = r"(?:[A-Za-z0-9+/=\s\\]*?-----END " + _PEM_LABEL + ")?"

# A Slack token: its type (``xoxb-`` bot, ``xoxp-`` user, ``xoxa-``/``xoxo-``/``xoxs-``
# legacy …), a numeric id of six digits or more, then its dash-separated parts up to a
# boundary (``xoxp-…-####`` stops at the ``-#``: a placeholder); an app (``xapp-``), a
# configuration (``xoxe.xoxp-``) or a refresh (``xoxe-1-``) token by their documented shapes.
_SLACK = (
    r"\b(?P<value>xox[a-z]-(?:[0-9]-)?[0-9]{6,}(?:-[A-Za-z0-9]+)+)(?:[^A-Za-z0-9-]|\z)"
    r"|\bxoxe\.xox[a-z]-[0-9]-[A-Za-z0-9]{100,}|\bxoxe-[0-9]-[A-Za-z0-9]{100,}"
    r"|\bxapp-[0-9]-[A-Z0-9]{6,}-[0-9]{6,}-[A-Za-z0-9]{20,}"
)

# Vendors' token formats, as their documentation gives them: a prefix that no word starts with
# (``\b``, or "no letter before" where the vendor's own scanner allows ``MY_tskey-…``), a body
# of the documented alphabet and length. Placeholders of these shapes are the vendors' own
# examples (``sk_live_AAAA…``), so no body rule applies.
_SERVICE_TOKENS = (
    r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{24,}"  # Stripe secret and restricted keys
    r"|\bnpm_[A-Za-z0-9]{36}\b"  # npm access token
    r"|\bshp(?:ss|at|ca|pa)_[A-Za-z0-9]{32}\b"  # Shopify
    r"|\bcf(?:at|ut|k)_[A-Za-z0-9]{48}\b"  # Cloudflare
    r"|\bdckr_pat_[A-Za-z0-9_-]{27,}"  # Docker Hub
    r"|\bfig[dhu]_[A-Za-z0-9_-]{40,}"  # Figma
    r"|(?:^|[^A-Za-z])(?P<value>tskey-[a-z]+-[A-Za-z0-9]{6,}-[A-Za-z0-9]{16,})"  # Tailscale
    r"|\bglc_[A-Za-z0-9+/]{32,}={0,2}|\bglsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}\b"  # Grafana
    r"|\blin_api_[A-Za-z0-9]{40,}"  # Linear
    r"|\bops_eyJ[A-Za-z0-9+/_-]{100,}={0,2}"  # 1Password service account
    r"|\bvc[aikpr]_[A-Za-z0-9]{24,}"  # Vercel
    r"|SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}"  # SendGrid
    # Amazon Bedrock API key: ABSK + base64 of "BedrockAPIKey-" + the key
    r"|\b(?P<value2>ABSKQmVkcm9ja0FQSUtleS[A-Za-z0-9+/]{100,250}={0,2})(?:[^A-Za-z0-9+/=]|\z)"
    r"|\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}"  # PyPI upload token (macaroon for pypi.org)
    r"|\bdo[opr]_v1_[a-f0-9]{64}\b"  # DigitalOcean
    r"|\bdapi[a-f0-9]{32}(?:-[0-9])?\b"  # Databricks
    r"|\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b"  # Postman
    r"|\bpul-[a-f0-9]{40}\b"  # Pulumi
    r"|\bdp\.(?:pt|st|ct|scim|audit)\.[A-Za-z0-9]{40,44}\b"  # Doppler
    r"|\bhv[sb]\.[A-Za-z0-9_-]{90,}"  # HashiCorp Vault service and batch tokens
    r"|\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}"  # HCP Terraform / Terraform Cloud
    r"|\bAGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}\b"  # age encryption key
    r"|\bNRAK-[A-Z0-9]{27}\b"  # New Relic user key
    r"|\bgsk_[A-Za-z0-9]{52}\b"  # Groq
    r"|\bpplx-[A-Za-z0-9]{48}\b"  # Perplexity
    r"|\bxai-[A-Za-z0-9]{80}\b"  # xAI
    r"|\br8_[A-Za-z0-9]{37}\b"  # Replicate
    r"|\bsk-or-v1-[a-f0-9]{64}\b"  # OpenRouter
    r"|\bsntrys_eyJ[A-Za-z0-9+/=_-]{80,}|\bsntryu_[a-f0-9]{64}\b"  # Sentry
    # GitLab's other token kinds (pipeline trigger, runner, deploy, OAuth app, CI job …)
    r"|\bgl(?:ptt|rt|dt|soat|cbt|imt|ft|oas|agent)-[A-Za-z0-9_-]{20,}"
    r"|\bHRKU-AA[A-Za-z0-9_-]{58}\b"  # Heroku
    r"|\bsq0(?:atp-[A-Za-z0-9_-]{22}|csp-[A-Za-z0-9_-]{43})\b"  # Square
    r"|\bGOCSPX-[A-Za-z0-9_-]{28}\b|\bya29\.[A-Za-z0-9_-]{30,}"  # Google OAuth
    r"|\b[0-9]{8,10}:AA[A-Za-z0-9_-]{33}\b"  # Telegram bot
    r"|\b[0-9a-f]{32}-us[0-9]{1,2}\b"  # Mailchimp
    r"|\bntn_[0-9]{11}[A-Za-z0-9]{35}\b"  # Notion
    r"|\bLTAI[A-Za-z0-9]{20}\b"  # Alibaba Cloud access key id
    r"|\bATATT3[A-Za-z0-9_=-]{100,}"  # Atlassian API token
    r"|\bSK[0-9a-fA-F]{32}\b"  # Twilio API key
    r"|(?:^|[^A-Za-z0-9_~.])(?P<value3>[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34})"  # Entra ID
    r"(?:[^A-Za-z0-9_~.-]|\z)"
)

# What a client sends as its credentials, in a command or in code: an HTTP ``Authorization``
# header (``-H``/``--header``, a Python dict, a JS object: ``Authorization: Bearer …``,
# ``"Authorization": "Basic …"``), curl's ``--oauth2-bearer``; ``curl -u user:password``
# (``--user``, ``-U``/``--proxy-user``, glued ``-uuser:pw``); a password given as the value of a
# ``--password`` option or of a login's ``-p`` (``docker login -p``, ``sshpass -p``,
# ``redis-cli -a``). The scheme (``Bearer``, ``Basic``, ``token`` …) stays, the value goes; a
# value that refers to one (``$TOKEN``, ``${TOKEN}``, ``{token}``, ``<token>``) is no secret.
_AUTH_VALUE = r"[A-Za-z0-9._~+/=:-]"
_AUTH_HEADER = (
    r"(?i:authorization)[\"'`]?[ \t]*[:=][ \t]*[\"'`]?[ \t]*"
    r"(?:(?i:bearer|token|basic|bot|digest|negotiate|apikey|api-key|sso-key)[ \t]+"
    rf"(?P<assigned>{_AUTH_VALUE}{{8,}})|(?P<blob>{_AUTH_VALUE}{{16,}}))"
    rf"|--oauth2-bearer(?:[ \t]+|=)[\"']?(?P<assigned2>{_AUTH_VALUE}{{8,}})"
)
_CLI_PASSWORD = (
    r"\bcurl\b[^\r\n;&|]*?[ \t](?:-u|--user|-U|--proxy-user)(?:[ \t]+|=)?"
    r"(?:'(?P<user>[^\r\n:']*):(?P<assigned>[^'\r\n]{3,})'"
    r"|\"(?P<user2>[^\r\n:\"]*):(?P<assigned4>[^\"\r\n]{3,})\""
    r"|(?P<user3>[^\s:'\"]*):(?P<assigned5>[^\s'\";&|]{3,}))"
    r"|(?:^|[ \t\"'`])--pass(?:word|wd)?[ \t]+(?P<assigned2>'[^'\r\n]{4,}'"
    r"|\"[^\"\r\n$][^\"\r\n]{3,}\"|[^\s'\"$;&|<>()`\\-][^\s'\";&|<>()`]{3,})"
    r"|\b(?:(?:docker|podman|nerdctl|buildah|skopeo|helm|oras)\b[^\r\n;&|]*?[ \t]login\b"
    r"[^\r\n;&|]*?[ \t]-p|sshpass(?:[ \t]+-[^p\s][^\s]*)*[ \t]+-p"
    r"|redis-cli\b[^\r\n;&|]*?[ \t]-a)[ \t]*(?P<assigned3>'[^'\r\n]{4,}'"
    r"|\"[^\"\r\n$][^\"\r\n]{3,}\"|[^\s'\"$;&|<>()`\\-][^\s'\";&|<>()`]{3,})"
)
# Azure: a storage account's key and a Service Bus / Event Hubs key in a connection string
# (``AccountKey=…;``), and the signature of a shared access signature URL (``…&sig=…``).
_AZURE = (
    r"(?i:AccountKey|SharedAccessKey|PrimaryKey|SecondaryKey)[ \t]*=[ \t]*"
    r"(?P<value>[A-Za-z0-9+/]{20,}={0,2})(?:[^A-Za-z0-9+/=]|\z)"
    r"|[?&]sig=(?P<value2>[A-Za-z0-9%+/]{40,}={0,2})"
)

#: ``(id, RE2 pattern)``: AgentShield's patterns in its order (seed-systems a.4, SPEC §7), then
#: the other credentials forge_policy knows; detection reports the first id that matches. The
#: named groups (see :func:`placeholder`): ``(?P<value…>…)`` is the part that is secret (the
#: rest is context such as the variable name); ``(?P<assigned…>…)`` too, a value assigned to a
#: credential's name, and placeholder values (``${VAR}``, ``<redacted>``, ``xxxx``,
#: ``YOUR_PASSWORD``) are not secrets; ``(?P<blob…>…)`` too, and it holds a digit;
#: ``(?P<body…>…)`` is a token's random part, and a body of one repeated character
#: (``ghp_xxxx…``) or ending in ``EXAMPLE`` is a placeholder;
#: ``(?P<user>…)`` is the user of a URL's credentials, a password equal to it a placeholder.
SECRET_PATTERNS: tuple[tuple[str, str], ...] = (
    ("openai_key", r"\bsk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}|[A-Za-z0-9]{20,})"),
    # Anthropic's documented shape: a kind and version, 93 characters, "AA"
    (
        "anthropic_key",
        r"\b(?P<value>sk-ant-[a-z]{3,6}[0-9]{2}-[A-Za-z0-9_-]{93}AA)(?:[^A-Za-z0-9_-]|\z)",
    ),
    ("google_api_key", r"AIzaSy[A-Za-z0-9_-]{33,}"),
    # a key id starts a word: ``TODAYINASIAASACKOFRICE`` holds no key; AWS's documentation
    # writes its examples AKIA…EXAMPLE
    ("aws_access_key", r"\b(?:AKIA|ASIA)(?P<body>[A-Z0-9]{16})"),
    ("slack_token", _SLACK),
    # the signature may be empty: an unsigned ("alg": "none") token still carries its claims
    ("jwt", r"eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*"),
    (
        "password_assignment",
        rf"{_KEYWORD}{_ASSIGN}[\"'](?P<assigned>[^\"'\r\n]{{6,}})[\"']"
        rf"|[\"'][A-Za-z0-9_.-]*?(?i:{_WORDS})[\"'][ \t]*,[ \t]*[\"'](?P<blob>{_BLOB})[\"']"
        rf"|(?:^|[^A-Za-z])(?i:auth){_ASSIGN}[\"'](?P<blob2>{_BLOB})[\"']",
    ),
    ("private_key", rf"{_PEM_BEGIN}{_PEM_HEADERS}{_PEM_MATERIAL}{_PEM_END}"),
    # the 40 characters of an AWS secret access key after its variable or option name
    (
        "aws_secret_key",
        r"(?i:(?:aws[_-]?)?secret[_-]?access[_-]?key|aws[_-]?secret[_-]?key)[\"']?"
        r"(?:[ \t]*(?::=|=>|[:=])[ \t]*|[ \t]+)[\"']?(?P<value>[A-Za-z0-9/+]{40})"
        r"(?:[^A-Za-z0-9/+=]|\z)",
    ),
    (
        "github_token",
        r"gh[pousr]_(?P<body>[A-Za-z0-9]{36,})|github_pat_(?P<body2>[A-Za-z0-9_]{22,})",
    ),
    ("gitlab_token", r"glpat-(?P<body>[A-Za-z0-9_-]{20,})"),
    # the password glued to a MySQL/MariaDB client's -p (``-p PASS`` would be a database name)
    (
        "mysql_password",
        r"\b(?:mysql(?:dump|admin|import|show|check|slap|pump|sh|binlog)?"
        r"|mariadb(?:-?(?:dump|admin|import|show|check|slap))?)(?:[ \t][^\r\n;&|]*?)?"
        r"[ \t](?:-p|--password=)(?P<value>'[^'\r\n]+'|\"[^\"\r\n$][^\"\r\n]*\""
        r"|[^\s'\"$;&|<>()`\\][^\s'\";&|<>()`]*)",
    ),
    (
        "password_yaml",
        rf"(?:(?m:^)|[ \t\"'`])(?:-[ \t]+)?[\"']?{_STRONG_NAME}"
        rf"[\"']?[ \t]*:[ \t]+(?P<assigned>{_YAML_VALUE})"
        r"(?:(?:[ \t]+#[^\r\n]*)?[ \t]*\r?(?m:$)|[\"'`])",
    ),
    # ``DB_PASSWORD=s3cr3t``, ``PGPASSWORD=… psql``, ``--password=…``: a shell or dotenv
    # assignment, no space around ``=``, value unquoted (quoted ones are password_assignment)
    (
        "password_env",
        rf"(?:(?m:^)|[ \t;&|(\"'`?])(?:{_STRONG_NAME}|[A-Z0-9_]*[A-Z0-9](?:PASSWORD|PASSWD))"
        rf"=(?P<assigned>{_YAML_VALUE})(?:[ \t;&|)\"'`]|\r?(?m:$))",
    ),
    # credentials in a URL: scheme://user:password@host
    (
        "url_password",
        r"\b[A-Za-z][A-Za-z0-9+.-]*://(?P<user>[^\s:/?#@\"'<>]*):"
        r"(?P<assigned>[^\s/?#\"'<>]{4,})@[A-Za-z0-9\[(_$%{.-]",
    ),
    ("slack_webhook", r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/]{40,}"),
    ("service_token", _SERVICE_TOKENS),
    ("auth_header", _AUTH_HEADER),
    ("cli_password", _CLI_PASSWORD),
    ("azure_key", _AZURE),
    # Hugging Face user access and organization tokens: 34 letters after the prefix
    ("huggingface_token", r"\b(?:hf|api_org)_(?P<body>[A-Za-z0-9]{34})\b"),
)

# What tells a placeholder from a value (see placeholder()): a reference to a variable or a
# template slot, a word that stands for a password, an instruction to the reader.
_REFERENCE = r"\$[{(A-Za-z_]|\{\{|\{[A-Za-z0-9_.-]*\}\Z|<[^<>]*>\Z|%[A-Za-z_][A-Za-z0-9_]*%\Z"
_PLACEHOLDER_WORDS = frozenset(
    {"password", "mypassword", "passwd", "changeme", "changeit", "redacted", "placeholder"}
    # the words a header or a ``user:password`` example puts where the value goes
    | {"mypass", "secret", "mysecret", "token", "mytoken", "apikey", "myapikey"}
    | {"accesstoken", "authtoken", "bearertoken", "apitoken", "yourtoken", "yourapikey"}
)
# an instruction starts with its verb and a separator: ``enterprise2024!`` is a password
_INSTRUCTIONS = tuple(
    f"{verb}{sep}" for verb in ("your", "replace", "insert", "enter") for sep in "_- "
)

#: At most this many redaction passes run over one text (see :func:`redact`).
MAX_PASSES = 8

_REDACTED_BYTES = REDACTED.encode()
# "any": the table as one regex of relaxed patterns (a text it misses holds no secret); "table":
# [(id, regex, [(group kind, group index), ...]), ...] in table order. Compiled on first use,
# the table only for a text the first hits; keyed, not positional, so that two threads compiling
# at once (adapters evaluate in worker threads) store the same entry twice, never one in the
# other's place
_compiled: dict[str, Any] = {}
#: Texts :func:`redact` found no secret in: every state and audit write redacts the same
#: behavior ids, levels, tool names, summaries and stamps again and again. Whether a text holds
#: a secret depends on the text alone (redaction is a pure function of it), so a remembered
#: verdict is exactly the scan's; only clean texts are kept (never a secret), only short ones,
#: and the set is emptied when full.
_CLEAN: set[str] = set()
_CLEAN_MAX = 4096
_CLEAN_LONGEST = 512
#: Contents :func:`detect` found no secret in, kept whole (the key is the content itself, so a
#: hit is exactly the scan's verdict): a read file's content is scanned on every call that names
#: it (``cat README.md`` in a long-lived process: the warm worker, an adapter), one linear pass
#: of every pattern each time. Only clean contents, at most :data:`_CLEAN_DATA_LONGEST` bytes
#: each and :data:`_CLEAN_DATA_MAX` of them (a few MiB at most): emptied when full.
_CLEAN_DATA: set[bytes] = set()
_CLEAN_DATA_MAX = 64
_CLEAN_DATA_LONGEST = 64 << 10
_GROUP_KINDS = ("value", "assigned", "blob", "body", "user")
_SECRET_KINDS = ("value", "assigned", "blob")


def placeholder(kind: str, text: bytes, user: bytes | None = None) -> bool:
    """Whether ``text``, matched by a pattern's group of ``kind``, stands for a secret without
    being one (peers' secret scanners allow the same: gitleaks' and secretlint's allow-lists).

    - anything already :data:`REDACTED`;
    - a ``body`` (a token's random part) of one repeated character (``ghp_xxxx…``, ``AKIAXXXX…``)
      or ending in ``EXAMPLE``, as AWS's documentation writes its keys;
    - an ``assigned`` value (a password, a URL's password) that refers to one: ``${VAR}``,
      ``$VAR``, ``$(cmd)``, ``{{ var }}``, ``{var}``, ``<your-password>``, ``%VAR%``; of one
      repeated character (``xxxx``, ``1111``) or, from eight characters, half made of one
      (``AIzaaaaa…``); a word that stands for a password (``password``, ``changeme``,
      ``redacted``, ``placeholder`` …) or an instruction (``YOUR_PASSWORD``,
      ``REPLACE_WITH_…``); AWS's ``…EXAMPLE``; PEM armour or a URL (the private_key and
      url_password patterns judge what they hold); a dotted lower-case name
      (``jetbrains.mps.v8_elimination``, a property); in a URL, the user's name again
      (``postgres:postgres@``);
    - a ``blob`` (an ``assigned`` value for a name that is also an everyday word) with no digit.

    >>> placeholder("assigned", b"${DB_PASSWORD}"), placeholder("assigned", b"hunter22")
    (True, False)
    >>> placeholder("body", b"IOSFODNN7EXAMPLE"), placeholder("assigned", b"pg", user=b"pg")
    (True, True)
    """
    if text == _REDACTED_BYTES:
        return True
    if kind == "body":
        return len(set(text.translate(None, b"_-"))) < 2 or text.endswith(b"EXAMPLE")
    if kind == "blob" and not any(char in b"0123456789" for char in text):
        return True
    if kind not in ("assigned", "blob"):
        return False
    import re

    value = text.decode("utf-8", "replace")
    lower = value.lower()
    most = max(value.count(char) for char in set(value)) if value else 0
    return bool(
        re.match(_REFERENCE, value)
        or most == len(value)
        or (len(value) >= 8 and 2 * most >= len(value))
        or lower.replace("_", "").replace("-", "") in _PLACEHOLDER_WORDS
        or lower.startswith(_INSTRUCTIONS)
        or value.startswith("-----BEGIN")
        or value.endswith(("EXAMPLE", "...", "\u2026"))
        or re.match(r"[A-Za-z][A-Za-z0-9+.-]*://", value)
        or re.match(r"[a-z][a-z0-9_]*(?:\.[a-z0-9_]+){2,}\Z", value)
        or (user is not None and text == user)
    )


#: :func:`relaxed` lowers every repetition count above this one to it.
RELAXED_COUNT = 8


def relaxed(pattern: str) -> str:
    """``pattern`` with each counted repetition ``{n}``, ``{n,}``, ``{n,m}`` made ``{k,}``, ``k =
    min(n, RELAXED_COUNT)``: it matches every text ``pattern`` matches (each repetition admits
    more, and nothing else changes), and RE2 compiles it in a fraction of the time (a count is
    compiled as that many copies). Escapes (``\\x{41}``, ``\\{``) and classes (``[{]``) stay.

    >>> print(relaxed(r"sk-[A-Za-z0-9]{48}|x{2,3}|\\d{12}|\\x{41}[{]{1}\\{9\\}|[]{3}]{9}"))
    sk-[A-Za-z0-9]{8,}|x{2,}|\\d{8,}|\\x{41}[{]{1,}\\{9\\}|[]{3}]{8,}
    """
    import re

    # an escape (with its braces: \x{41}, \p{Greek}) or a class (``]`` first is a member) is
    # kept whole; only a count outside them is one (group 1: its lower bound)
    token = r"\\[xpP]\{[^}]*\}|\\.|\[\^?\]?(?:\\.|[^\]\\])*\]|\{(\d+)(?:,\d*)?\}"
    return re.sub(
        token,
        lambda m: m[0] if m[1] is None else f"{{{min(int(m[1]), RELAXED_COUNT)},}}",
        pattern,
        flags=re.DOTALL,
    )


def may_hold(data: bytes, needs: Needs | None = None) -> bool:
    """False only when no pattern of :data:`SECRET_PATTERNS` can match ``data``: every match of
    a pattern holds all the literals of one of its alternatives (:data:`NEEDS`), so a text with
    none of them is clean without RE2 (compiling the screen costs a hook process ~4 ms). Fail
    closed: a text that is not ASCII is screened (RE2 folds the Kelvin sign U+212A to ``k``,
    ``bytes.lower`` does not). ``needs``: another table (tests).

    >>> may_hold(b"git push --force origin main"), may_hold(b"export TOKEN=x")
    (False, True)
    """
    if not data.isascii():
        return True
    # on str: ``in`` costs a fifth of what it costs on bytes (no buffer protocol per test)
    exact = data.decode("ascii")
    lower = exact.lower()
    if needs is None:
        _GATE_CALLS[0] += 1
        if _GATE_CALLS[0] >= GATE_AFTER and _key_gate()(lower) is None:
            return False  # no key at all (a stamp, a digest): no alternative can hold
    for key, alternatives in NEEDS if needs is None else needs:
        if key in lower:  # every alternative holds its key: most texts hold no key
            for casefold, literals in alternatives:
                text = lower if casefold else exact
                for literal in literals:
                    if literal not in text:
                        break
                else:
                    return True
    return False


#: :func:`may_hold` calls before it builds :func:`_key_gate`: the gate costs ~1 ms to compile,
#: which a long process (the warm worker: a seen record's stamp and id per call) repays and a
#: hook never reaches
GATE_AFTER = 200
_GATE_CALLS = [0]


@kept
def _key_gate() -> Callable[[str], object]:
    """``search`` of a regex that finds any key of :data:`NEEDS` in a lower-case text (a trie
    of the keys: one pass over the text, where the keys one by one take ~100 ``in`` tests),
    built on its first call and kept."""
    import re

    trie: dict[str, Any] = {}
    for key, _alternatives in NEEDS:
        node = trie
        for char in key:
            node = node.setdefault(char, {})
        node[""] = {}

    def branch(node: dict[str, Any]) -> str:
        alternatives = [re.escape(char) + branch(sub) for char, sub in node.items() if char]
        if not alternatives:
            return ""
        body = alternatives[0] if len(alternatives) == 1 else f"(?:{'|'.join(alternatives)})"
        return f"(?:{body})?" if "" in node else body

    search: Callable[[str], object] = re.compile(branch(trie)).search
    return search


def _any_match(data: bytes) -> bool:
    """Whether any pattern may match ``data``: :func:`may_hold`, then one linear pass, the
    common case's only one. The patterns are :func:`relaxed` (a hit is then confirmed by the
    table): compiling them whole would cost a hook call most of its regex time (issue 28)."""
    if not may_hold(data):
        return False
    regex = _compiled.get("any")
    if regex is None:
        import re

        from forge_policy.catalog.dsl import compile_regex

        plain = [re.sub(r"\(\?P<\w+>", "(?:", pattern) for _pid, pattern in SECRET_PATTERNS]
        regex = _compiled["any"] = compile_regex("|".join(f"(?:{relaxed(p)})" for p in plain))
    return regex.search(data) is not None


def _table() -> list[tuple[str, Any, list[tuple[str, int]]]]:
    compiled: list[tuple[str, Any, list[tuple[str, int]]]] | None = _compiled.get("table")
    if compiled is None:
        from forge_policy.catalog.dsl import compile_regex

        table = []
        for pid, pattern in SECRET_PATTERNS:
            regex = compile_regex(pattern)
            groups = [
                (kind, index)
                for name, index in sorted(regex.groupindex.items(), key=lambda item: item[1])
                for kind in _GROUP_KINDS
                if name.startswith(kind)
            ]
            table.append((pid, regex, groups))
        compiled = _compiled["table"] = table
    return compiled


def _secrets(regex: Any, groups: list[tuple[str, int]], data: bytes) -> Iterator[tuple[int, int]]:
    """The ``(start, end)`` of each secret of one pattern in ``data``, left to right."""
    pos = 0
    while True:
        match = regex.search(data, pos)
        if match is None:
            return
        taking = [(kind, g) for kind, g in groups if match.start(g) >= 0]
        kind, start, end = next(
            ((k, match.start(g), match.end(g)) for k, g in taking if k in _SECRET_KINDS),
            ("value", *match.span()),
        )
        # Resume after the secret, not after the match: the closing quote of one assignment may
        # be the non-letter before the next one's key. A match whose secret is a placeholder
        # (already REDACTED, ${VAR} …) is skipped; any later match starting inside it would
        # hold the same quoted value.
        pos = max(end, match.start() + 1)
        user = next((match.group(g) for k, g in taking if k == "user"), None)
        if placeholder(kind, data[start:end], user) or any(
            placeholder(k, match.group(g)) for k, g in taking if k == "body"
        ):
            continue
        yield start, end


def _spans(data: bytes) -> list[tuple[str, int, int]]:
    """Every pattern's secrets, merged where they overlap, in text order; a merged span is
    named after its leftmost part (table order breaks ties)."""
    if not _any_match(data):
        return []
    found = sorted(
        (start, rank, end, pid)
        for rank, (pid, regex, groups) in enumerate(_table())
        for start, end in _secrets(regex, groups, data)
    )
    merged: list[tuple[str, int, int]] = []
    for start, _rank, end, pid in found:
        if merged and start < merged[-1][2]:
            last = merged[-1]
            merged[-1] = (last[0], last[1], max(last[2], end))
        else:
            merged.append((pid, start, end))
    return merged


def _as_bytes(text: str | bytes) -> bytes:
    # lone surrogates survive the round trip, so redaction never alters what it keeps
    return text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text


def scan(text: str | bytes) -> list[tuple[str, int, int]]:
    """``(pattern id, start, end)`` of each secret in ``text``, spans in UTF-8 bytes, left to
    right; secrets of several patterns that overlap are one span.

    >>> scan('key: "hunter22" and AKIA' + 'Z7Q2X9W4V6T3R8P5')
    [('password_assignment', 6, 14), ('aws_access_key', 20, 40)]
    """
    return _spans(_as_bytes(text))


def detect(text: str | bytes) -> str:
    """The first id of :data:`SECRET_PATTERNS` with a secret in ``text`` (table order), or ``""``.

    A clean text costs one linear pass over all patterns combined.

    >>> detect("-----BEGIN OPENSSH PRIVATE KEY-----" + "b3Bl" * 16), detect('pw = "[REDACTED]"')
    ('private_key', '')
    >>> detect("-----BEGIN OPENSSH PRIVATE KEY-----"), detect("AKIA" + "IOSFODNN7EXAMPLE")
    ('', '')
    >>> detect("mysql -u root -pS3cret db"), detect("mysql -u root -p db")
    ('mysql_password', '')
    """
    data = _as_bytes(text)
    if data in _CLEAN_DATA:
        return ""
    if not _any_match(data):
        if len(data) <= _CLEAN_DATA_LONGEST:
            if len(_CLEAN_DATA) >= _CLEAN_DATA_MAX:
                _CLEAN_DATA.clear()
            _CLEAN_DATA.add(data)
        return ""
    for pid, regex, groups in _table():
        if next(_secrets(regex, groups, data), None) is not None:
            return pid
    return ""


def redact(text: str) -> str:
    """Replace every secret :func:`scan` finds by :data:`REDACTED`, until none is left.

    One pass usually suffices. A second is needed when a replaced secret was the only thing
    that hid a key name: in ``AKIA…ZKEY="…"`` the name follows a letter, after the first pass
    it follows ``]``. A pass only uncovers names right after a new :data:`REDACTED`, never one
    after a value (a quote ends it), so the passes are few; :data:`MAX_PASSES` bounds them.

    >>> redact('password = "hunter22" and key sk-' + 'x' * 48)
    'password = "[REDACTED]" and key [REDACTED]'
    >>> redact("pass: c0rrect-horse  # prod")
    'pass: [REDACTED]  # prod'
    """
    if text in _CLEAN:
        return text
    original = _as_bytes(text)
    data = original
    for _pass in range(MAX_PASSES):
        spans = _spans(data)
        if not spans:
            if data is not original:
                return data.decode("utf-8", "surrogatepass")
            if type(text) is str and len(text) <= _CLEAN_LONGEST:
                if len(_CLEAN) >= _CLEAN_MAX:
                    _CLEAN.clear()
                _CLEAN.add(text)
            return text
        pieces: list[bytes] = []
        kept = 0
        for _pid, start, end in spans:
            pieces += (data[kept:start], _REDACTED_BYTES)
            kept = end
        pieces.append(data[kept:])
        data = b"".join(pieces)
    # still a secret after MAX_PASSES passes (never seen): hide the whole text, fail closed
    return REDACTED if _spans(data) else data.decode("utf-8", "surrogatepass")


def redact_json(value: Any) -> Any:
    """A copy of a JSON value with every string value redacted (keys are kept: they are ids the
    catalog and the harness chose, and two keys must never become one).

    >>> redact_json({"grant": {"reason": "ok, ghp_" + "aZ09" * 9}, "n": [1, None, "x"]})
    {'grant': {'reason': 'ok, [REDACTED]'}, 'n': [1, None, 'x']}
    """
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        # the common values inline (an exact str redacted, a number or null kept), the
        # recursion for the rest: containers and subclasses, as before
        return {
            k: redact(v) if type(v) is str else v if type(v) in _KEPT else redact_json(v)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [
            redact(v) if type(v) is str else v if type(v) in _KEPT else redact_json(v)
            for v in value
        ]
    return value


#: The exact types :func:`redact_json` keeps as they are (no text in them).
_KEPT = frozenset({int, float, bool, type(None)})


def redact_json_over(new: Any, old: Any) -> Any:
    """``redact_json(new)``, reusing each value of ``old`` (a stored document: redacted, never
    changed in place) that ``new`` holds as the very same object: a store that keeps documents
    in memory redacts only what a transaction changed.

    >>> old = redact_json({"b": {"x": {"n": 1}, "y": {"n": 2}}})
    >>> new = {"b": {**old["b"], "y": {"n": 3, "s": "AKIA" + "ABCDEFGHIJKLMNOP"}}}
    >>> out = redact_json_over(new, old)
    >>> out["b"]["x"] is old["b"]["x"], out["b"]["y"]
    (True, {'n': 3, 's': '[REDACTED]'})
    """
    if new is old and old is not None:
        return old
    if type(new) is not dict or type(old) is not dict:
        return redact_json(new)
    out: dict[str, Any] = {}
    for key, value in new.items():
        kind = type(value)
        if kind is str:
            out[key] = redact(value)
        elif kind in _KEPT:  # a flag's True, a counter: no text in it
            out[key] = value
        elif kind is dict:
            held = old.get(key)
            out[key] = held if value is held else redact_json_over(value, held)
        else:  # lists, subclasses: as redact_json would
            out[key] = redact_json(value)
    return out


def summarize(tool_name: str, tool_input: object, limit: int = 100) -> str:
    """A redacted one-line summary of a call, at most ``limit`` characters.

    >>> summarize("Bash", {"command": "curl -H 'X-Key: AKIA" + "Z7Q2X9W4V6T3R8P5" + "'  x"})
    "Bash: curl -H 'X-Key: [REDACTED]' x"
    >>> "correct horse" in summarize("Write", {"content": 'password="correct horse battery"'})
    False
    """
    if isinstance(tool_input, dict):
        for key in ("command", "file_path", "path", "pattern", "url", "query", "prompt"):
            value = tool_input.get(key)
            if isinstance(value, str) and value:
                text = value
                break
        else:  # canonical JSON (SPEC §4), as forge_policy.model writes it, which imports this
            import json

            # each string redacted before it is quoted: JSON's escaped quotes (password=\"…\")
            # would hide a secret from the patterns that look for the quote itself
            text = json.dumps(
                redact_json(tool_input),
                sort_keys=True,
                separators=(",", ":"),
                ensure_ascii=False,
                default=str,
            )
    else:
        text = str(tool_input or "")
    # redacted as written (a PEM key is matched by its lines), then again as collapsed: joining
    # the spaces can make a match of harmless pieces (`-p  x`), and the summary is what is kept
    text = redact(" ".join(redact(text).split()))
    summary = f"{tool_name}: {text}" if tool_name else text
    return summary if len(summary) <= limit else summary[: limit - 1] + "…"


#: What a match of a pattern of :data:`SECRET_PATTERNS` must hold: ``(key, alternatives)``,
#: each alternative ``(case-insensitive, literals)`` of a pattern, all of whose literals a match
#: holds (on the lower-cased text if case-insensitive), under a key (lower-cased) it holds too:
#: a text whose lower-cased form holds no key matches no pattern. Derived from the patterns by
#: the catalog's prefilter (tests/secrets_gate.py, which prints it anew; tests/
#: test_secrets_gate.py fails when a pattern changed and this table did not).
# fmt: off
NEEDS: Needs = (  # generated by tests/secrets_gate.py: do not edit
    ("key", (
        (True, ()),
    )),
    ("token", (
        (True, ()),
    )),
    ("curl", (
        (False, ("curl", "-u", "'", ":")), (False, ("curl", "-u", "\"", ":")),
        (False, ("curl", "-u", ":")), (False, ("curl", "--user", "'", ":")),
        (False, ("curl", "--user", "\"", ":")), (False, ("curl", "--user", ":")),
        (False, ("curl", "-U", "'", ":")), (False, ("curl", "-U", "\"", ":")),
        (False, ("curl", "-U", ":")), (False, ("curl", "--proxy-user", "'", ":")),
        (False, ("curl", "--proxy-user", "\"", ":")), (False, ("curl", "--proxy-user", ":")),
    )),
    ("login", (
        (False, ("docker", "login", "-p")), (False, ("podman", "login", "-p")),
        (False, ("nerdctl", "login", "-p")), (False, ("buildah", "login", "-p")),
        (False, ("skopeo", "login", "-p")), (False, ("helm", "login", "-p")),
        (False, ("oras", "login", "-p")),
    )),
    ("secret", (
        (True, ()),
    )),
    ("dp.", (
        (False, ("dp.", "pt", ".")), (False, ("dp.", "st", ".")), (False, ("dp.", "ct", ".")),
        (False, ("dp.", "scim", ".")), (False, ("dp.", "audit", ".")),
    )),
    ("passphrase", (
        (True, ()),
    )),
    ("contrase", (
        (True, ("a",)), (True, ("a", ",")), (True, ("a", ":")), (True, ("a", "=")),
    )),
    ("passw", (
        (True, ("d",)), (True, ("d", ",")), (True, ("d", ":")), (True, ("d", "=")),
    )),
    ("pass", (
        (True, ()),
    )),
    ("shp", (
        (False, ("shp", "ss", "_")), (False, ("shp", "at", "_")), (False, ("shp", "ca", "_")),
        (False, ("shp", "pa", "_")),
    )),
    ("hooks.slack.com/", (
        (False, ("hooks.slack.com/", "services", "/")),
        (False, ("hooks.slack.com/", "workflows", "/")),
        (False, ("hooks.slack.com/", "triggers", "/")),
    )),
    ("refreshtoken", (
        (True, ()),
    )),
    ("accesstoken", (
        (True, ()),
    )),
    ("privatekey", (
        (True, ()),
    )),
    ("secretkey", (
        (True, ()),
    )),
    ("authtoken", (
        (True, ()),
    )),
    ("accesskey", (
        (True, ()),
    )),
    ("apitoken", (
        (True, ()),
    )),
    ("apikey", (
        (True, ()),
    )),
    ("clientsecret", (
        (True, (":",)), (True, ("=",)),
    )),
    ("--password=", (
        (False, ("mysql", "--password=")), (False, ("mariadb", "--password=")),
    )),
    ("credential", (
        (True, ()),
    )),
    ("sq0", (
        (False, ("sq0", "atp-")), (False, ("sq0", "csp-")),
    )),
    ("abskqmvkcm9ja0fqsutles", (
        (False, ("ABSKQmVkcm9ja0FQSUtleS",)),
    )),
    ("pypi-ageichlwas5vcmc", (
        (False, ("pypi-AgEIcHlwaS5vcmc",)),
    )),
    ("age-secret-key-1", (
        (False, ("AGE-SECRET-KEY-1",)),
    )),
    ("sharedaccesskey", (
        (True, ("=",)),
    )),
    ("--oauth2-bearer", (
        (True, ()),
    )),
    ("authorization", (
        (True, ()),
    )),
    ("secondarykey", (
        (True, ("=",)),
    )),
    ("secrettoken", (
        (True, ()),
    )),
    ("private key", (
        (False, ("-----BEGIN ", "PRIVATE KEY", "-----")),
    )),
    ("github_pat_", (
        (False, ("github_pat_",)),
    )),
    ("sntrys_eyj", (
        (False, ("sntrys_eyJ",)),
    )),
    ("primarykey", (
        (True, ("=",)),
    )),
    ("accountkey", (
        (True, ("=",)),
    )),
    ("sk-or-v1-", (
        (False, ("sk-or-v1-",)),
    )),
    ("redis-cli", (
        (False, ("redis-cli", "-a")),
    )),
    ("dckr_pat_", (
        (False, ("dckr_pat_",)),
    )),
    (".atlasv1.", (
        (False, (".atlasv1.",)),
    )),
    ("xoxe.xox", (
        (False, ("xoxe.xox", "-")),
    )),
    ("password", (
        (True, ("=",)),
    )),
    ("lin_api_", (
        (False, ("lin_api_",)),
    )),
    ("sshpass", (
        (False, ("sshpass", "-p")),
    )),
    ("sntryu_", (
        (False, ("sntryu_",)),
    )),
    ("sk-ant-", (
        (False, ("sk-ant-", "-", "AA")),
    )),
    ("ops_eyj", (
        (False, ("ops_eyJ",)),
    )),
    ("mariadb", (
        (False, ("mariadb", "-p")),
    )),
    ("hrku-aa", (
        (False, ("HRKU-AA",)),
    )),
    ("gocspx-", (
        (False, ("GOCSPX-",)),
    )),
    ("api_org", (
        (False, ("api_org", "_")),
    )),
    ("tskey-", (
        (False, ("tskey-", "-")),
    )),
    ("passwd", (
        (True, ("=",)),
    )),
    ("glpat-", (
        (False, ("glpat-",)),
    )),
    ("atatt3", (
        (False, ("ATATT3",)),
    )),
    ("aizasy", (
        (False, ("AIzaSy",)),
    )),
    ("--pass", (
        (False, ("--pass",)),
    )),
    ("ya29.", (
        (False, ("ya29.",)),
    )),
    ("xoxe-", (
        (False, ("xoxe-", "-")),
    )),
    ("xapp-", (
        (False, ("xapp-", "-")),
    )),
    ("pplx-", (
        (False, ("pplx-",)),
    )),
    ("pmak-", (
        (False, ("PMAK-", "-")),
    )),
    ("nrak-", (
        (False, ("NRAK-",)),
    )),
    ("mysql", (
        (False, ("mysql", "-p")),
    )),
    ("glsa_", (
        (False, ("glsa_", "_")),
    )),
    ("agent", (
        (False, ("gl", "agent", "-")),
    )),
    ("xai-", (
        (False, ("xai-",)),
    )),
    ("test", (
        (False, ("k_", "test", "_")),
    )),
    ("soat", (
        (False, ("gl", "soat", "-")),
    )),
    ("sig=", (
        (True, ()),
    )),
    ("pul-", (
        (False, ("pul-",)),
    )),
    ("ntn_", (
        (False, ("ntn_",)),
    )),
    ("npm_", (
        (False, ("npm_",)),
    )),
    ("ltai", (
        (False, ("LTAI",)),
    )),
    ("live", (
        (False, ("k_", "live", "_")),
    )),
    ("gsk_", (
        (False, ("gsk_",)),
    )),
    ("glc_", (
        (False, ("glc_",)),
    )),
    ("dapi", (
        (False, ("dapi",)),
    )),
    ("auth", (
        (True, ()),
    )),
    ("asia", (
        (False, ("ASIA",)),
    )),
    ("akia", (
        (False, ("AKIA",)),
    )),
    ("_v1_", (
        (False, ("do", "_v1_")),
    )),
    (".eyj", (
        (False, ("eyJ", ".eyJ", ".")),
    )),
    ("xox", (
        (False, ("xox", "-")),
    )),
    ("sk-", (
        (False, ("sk-",)),
    )),
    ("sg.", (
        (False, ("SG.", ".")),
    )),
    ("r8_", (
        (False, ("r8_",)),
    )),
    ("ptt", (
        (False, ("gl", "ptt", "-")),
    )),
    ("oas", (
        (False, ("gl", "oas", "-")),
    )),
    ("imt", (
        (False, ("gl", "imt", "-")),
    )),
    ("fig", (
        (False, ("fig", "_")),
    )),
    ("cbt", (
        (False, ("gl", "cbt", "-")),
    )),
    (":aa", (
        (False, (":AA",)),
    )),
    ("://", (
        (False, ("://", ":", "@")),
    )),
    ("-us", (
        (False, ("-us",)),
    )),
    ("_", (
        (False, ("gh", "_")), (False, ("cf", "at", "_")), (False, ("cf", "ut", "_")),
        (False, ("cf", "k", "_")), (False, ("vc", "_")), (False, ("hf", "_")),
    )),
    ("gl", (
        (False, ("gl", "rt", "-")), (False, ("gl", "dt", "-")), (False, ("gl", "ft", "-")),
    )),
    ("sk", (
        (False, ("SK",)),
    )),
    ("q~", (
        (False, ("Q~",)),
    )),
    ("hv", (
        (False, ("hv", ".")),
    )),
)
# fmt: on
