"""A signed managed bundle (SPEC §10): ``config.yaml.sig``, a detached Ed25519 signature checked
with ``public-key.pem`` in the managed folder. Real keys; a present key with a missing or bad
signature fails closed: the hook refuses what could be blocked, naming the problem."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from forge_policy.errors import ProjectConfigError
from tests.cli_support import FORGE
from tests.config.test_layers import Layers

MANAGED = "profile: strict\nlocked: [profile]\nbehaviors:\n  risky-commands: {locked: true}\n"


@pytest.fixture
def layers(tmp_path: Path) -> Layers:
    return Layers(tmp_path)


def install_key(layers: Layers) -> Ed25519PrivateKey:
    key = Ed25519PrivateKey.generate()
    pem = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    (layers.managed_dir / "public-key.pem").write_bytes(pem)
    return key


def sign(layers: Layers, key: Ed25519PrivateKey, *, b64: bool = False) -> None:
    signature = key.sign(layers.managed.read_bytes())
    sig = layers.managed_dir / "config.yaml.sig"
    sig.write_bytes(base64.b64encode(signature) + b"\n" if b64 else signature)


@pytest.mark.parametrize("b64", [False, True])
def test_a_good_signature_loads_the_managed_layer(layers: Layers, b64: bool) -> None:
    key = install_key(layers)
    layers.write(layers.managed, MANAGED)
    sign(layers, key, b64=b64)
    settings = layers.settings(FORGE_PROFILE="minimal")
    assert settings.profile == "strict" and settings.locked("risky-commands")


def test_a_missing_signature_fails_closed(layers: Layers) -> None:
    install_key(layers)
    layers.write(layers.managed, MANAGED)
    with pytest.raises(ProjectConfigError, match=r"config\.yaml\.sig: missing: the managed "
                       r"configuration is signed with .*public-key\.pem"):  # fmt: skip
        layers.settings()


def test_an_edited_bundle_fails_closed(layers: Layers) -> None:
    key = install_key(layers)
    layers.write(layers.managed, MANAGED)
    sign(layers, key)
    layers.write(layers.managed, MANAGED.replace("locked: true", "locked: false"))
    with pytest.raises(ProjectConfigError, match=r"does not verify with .*public-key\.pem"):
        layers.settings()


def test_a_signature_by_another_key_fails_closed(layers: Layers) -> None:
    install_key(layers)
    layers.write(layers.managed, MANAGED)
    sign(layers, Ed25519PrivateKey.generate())
    with pytest.raises(ProjectConfigError, match="does not verify"):
        layers.settings()


def test_a_key_without_a_managed_config_fails_closed(layers: Layers) -> None:
    """Deleting the bundle does not drop the managed layer silently."""
    install_key(layers)
    with pytest.raises(ProjectConfigError, match="a signing key is installed but"):
        layers.settings()


def test_a_cached_verification_is_redone_when_the_signature_changes(layers: Layers) -> None:
    key = install_key(layers)
    layers.write(layers.managed, MANAGED)
    sign(layers, key)
    (layers.root / "runtime").mkdir()
    assert layers.settings().profile == "strict"
    (layers.managed_dir / "config.yaml.sig").write_bytes(b"\0" * 64)
    # the last verified configuration keeps enforcing, and says why (SPEC §10, last known good)
    fallback = layers.settings().fallback
    assert fallback is not None and "does not verify" in fallback.problem
    assert layers.settings().profile == "strict"
    for copy in (layers.root / "runtime").glob("last-good-settings.json"):
        copy.unlink()  # with no copy: refused
    import forge_policy.config.layers as module

    module._MEMO.clear()
    with pytest.raises(ProjectConfigError, match="does not verify"):
        layers.settings()


def test_the_hook_refuses_a_tool_call_when_the_bundle_does_not_verify(layers: Layers) -> None:
    import subprocess

    install_key(layers)
    layers.write(layers.managed, MANAGED)
    layers.write(layers.project_file, "floor: off\n")
    event = {
        "session_id": "s1",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
        "tool_use_id": "toolu_1",
        "cwd": str(layers.project),
    }
    env = {**layers.env(), "PATH": "/usr/bin:/bin", "FORGE_WORKER": "off"}
    env.pop("FORGE_STORE")
    result = subprocess.run(
        [str(FORGE), "hook"],
        input=json.dumps(event),
        capture_output=True,
        text=True,
        env=env,
        cwd=layers.project,
        timeout=30,
    )
    answer = json.loads(result.stdout)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny"
    assert "config.yaml.sig: missing" in answer["permissionDecisionReason"]
