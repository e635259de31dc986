"""How each coding-agent client is run against a scripted model: its program, its command line,
the environment and user configuration that point it at the model, and how its output reads
(:class:`Driver`, one subclass per client; :data:`DRIVERS` by harness name). Each driver's
docstring cites the documented setting it uses.

>>> sorted(DRIVERS)
['claude-code', 'codex', 'copilot', 'gemini']
>>> DRIVERS["codex"]().command("codex", "go")[:3]
['codex', 'exec', '--json']
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from forge_policy.testing.models import (
    AnthropicModel,
    GeminiModel,
    ResponsesModel,
    ScriptedModel,
    ToolCall,
    ToolResult,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from forge_policy.testing.real_client import RealClientProject


class ClientMissing(LookupError):
    """The client's program is not installed (the message says what was looked for, and where)."""


class Driver:
    """How to run one client: its program, its command line and environment, its output."""

    #: the harness name ``forge-policy init --harness`` takes
    harness = ""
    #: program names looked up on ``PATH`` and in the extra folders
    programs: tuple[str, ...] = ()
    #: the scripted model class it talks to
    model_class: type[ScriptedModel] = ScriptedModel

    def find(self, folders: Sequence[Path] = ()) -> str:
        """The client's program, else :class:`ClientMissing`."""
        for folder in folders:
            for name in self.programs:
                candidate = Path(folder) / name
                if candidate.is_file() and os.access(candidate, os.X_OK):
                    return str(candidate)
        for name in self.programs:
            found = shutil.which(name)
            if found:
                return found
        where = ", ".join(str(f) for f in folders)
        raise ClientMissing(
            f"{self.harness}: {' or '.join(self.programs)} not found on PATH"
            + (f" (nor in {where})" if where else "")
        )

    def prepare(self, project: RealClientProject) -> None:
        """Write the client's user-level configuration into the project's temporary HOME."""

    def command(self, program: str, prompt: str) -> list[str]:
        raise NotImplementedError

    def environ(self, project: RealClientProject) -> dict[str, str]:
        raise NotImplementedError

    def parse(self, stdout: str) -> tuple[Any, tuple[Mapping[str, Any], ...], str | None]:
        """The parsed output, the client's denials and the session id."""
        return stdout, (), None

    def transcript(self, project: RealClientProject, session_id: str | None) -> Path | None:
        return None

    def refused(self, result: ToolResult) -> bool:
        """Whether a tool result says the hook refused the call (for a client that keeps no
        list of its own denials)."""
        return False

    def results(
        self, model: ScriptedModel, calls: Sequence[ToolCall]
    ) -> dict[str, ToolResult | None]:
        """Each call's result as the model saw it (from the recorded requests)."""
        seen = model.tool_results()
        return {c.id: seen.get(model.wire_id(c)) for c in calls}


class ClaudeCode(Driver):
    """Claude Code in print mode (``claude -p PROMPT --output-format json``), pointed at the
    scripted Messages API by ``ANTHROPIC_BASE_URL`` with a dummy ``ANTHROPIC_API_KEY``
    (https://docs.anthropic.com/en/docs/claude-code/settings#environment-variables, "LLM gateway"
    https://docs.anthropic.com/en/docs/claude-code/llm-gateway) and
    ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`` (no telemetry, updates or error reports).

    The program: ``claude`` on ``PATH``, else the one bundled in the ``claude-agent-sdk`` wheel
    (``claude_agent_sdk/_bundled/claude``).
    """

    harness = "claude-code"
    programs = ("claude",)
    model_class = AnthropicModel

    def find(self, folders: Sequence[Path] = ()) -> str:
        try:
            return super().find(folders)
        except ClientMissing as missing:
            bundled = _bundled_claude()
            if bundled is None:
                raise ClientMissing(
                    f"{missing} and claude-agent-sdk is not installed (its wheel bundles claude)"
                ) from None
            return bundled

    #: the tools the user allows without asking (user settings): the client's own permission
    #: prompt stays out of the way, so what is refused is what the hook refused
    allowed = ("Bash", "Edit", "Write", "Read", "Glob", "Grep", "Task", "Agent")

    def prepare(self, project: RealClientProject) -> None:
        user = project.home / ".claude" / "settings.json"
        user.parent.mkdir(parents=True, exist_ok=True)
        user.write_text(json.dumps({"permissions": {"allow": list(self.allowed)}}), "utf-8")

    def command(self, program: str, prompt: str) -> list[str]:
        return [program, "-p", prompt, "--output-format", "json"]

    def environ(self, project: RealClientProject) -> dict[str, str]:
        return {
            "ANTHROPIC_BASE_URL": project.model.url,
            "ANTHROPIC_API_KEY": "sk-ant-scripted-model",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
        }

    def parse(self, stdout: str) -> tuple[Any, tuple[Mapping[str, Any], ...], str | None]:
        try:
            output = json.loads(stdout)
        except ValueError:
            return stdout, (), None
        if not isinstance(output, dict):
            return output, (), None
        denials = tuple(d for d in output.get("permission_denials") or () if isinstance(d, dict))
        session = output.get("session_id")
        return output, denials, session if isinstance(session, str) else None

    def transcript(self, project: RealClientProject, session_id: str | None) -> Path | None:
        if not session_id:
            return None
        found = sorted((project.home / ".claude" / "projects").glob(f"*/{session_id}.jsonl"))
        return found[0] if found else None


class Copilot(Driver):
    """GitHub Copilot CLI in programmatic mode (``copilot -p PROMPT --allow-all-tools
    --output-format json``), on its "bring your own key" provider: ``COPILOT_PROVIDER_BASE_URL``,
    ``COPILOT_PROVIDER_TYPE=anthropic``, ``COPILOT_PROVIDER_API_KEY``, ``COPILOT_MODEL``, and
    ``COPILOT_OFFLINE=true`` so it contacts nothing but the provider and needs no GitHub sign-in
    (https://docs.github.com/en/copilot/how-tos/copilot-cli/customize-copilot/use-byok-models,
    https://github.blog/changelog/2026-04-07-copilot-cli-now-supports-byok-and-local-models).

    Copilot loads a repository's ``.github/hooks/*.json`` only in a folder the user trusts, so
    the temporary ``HOME`` trusts the project (``trusted_folders`` in ``~/.copilot/config.json``).
    It keeps no list of denials: a refused call's result starts with "Denied by preToolUse hook".
    """

    harness = "copilot"
    programs = ("copilot",)
    model_class = AnthropicModel
    #: whether the temporary HOME trusts the project (Copilot loads no project hooks otherwise)
    trust = True

    def prepare(self, project: RealClientProject) -> None:
        config = project.home / ".copilot" / "config.json"
        config.parent.mkdir(parents=True, exist_ok=True)
        trusted = [str(project.project)] if self.trust else []
        config.write_text(json.dumps({"trusted_folders": trusted}), "utf-8")

    def command(self, program: str, prompt: str) -> list[str]:
        return [
            program,
            "-p",
            prompt,
            "--allow-all-tools",
            "--output-format",
            "json",
            "--no-auto-update",
        ]

    def environ(self, project: RealClientProject) -> dict[str, str]:
        return {
            "COPILOT_PROVIDER_BASE_URL": project.model.url,
            "COPILOT_PROVIDER_TYPE": "anthropic",
            "COPILOT_PROVIDER_API_KEY": "sk-ant-scripted-model",
            "COPILOT_MODEL": "claude-sonnet-4-5",
            "COPILOT_OFFLINE": "true",
        }

    def parse(self, stdout: str) -> tuple[Any, tuple[Mapping[str, Any], ...], str | None]:
        events = []
        for line in stdout.splitlines():
            with contextlib.suppress(ValueError):
                events.append(json.loads(line))
        session = next(
            (
                e.get("sessionId")
                for e in events
                if isinstance(e, dict) and e.get("type") == "result"
            ),
            None,
        )
        return events, (), session if isinstance(session, str) else None

    def transcript(self, project: RealClientProject, session_id: str | None) -> Path | None:
        if not session_id:
            return None
        path = project.home / ".copilot" / "session-state" / session_id / "events.jsonl"
        return path if path.is_file() else None

    def refused(self, result: ToolResult) -> bool:
        return result.text.startswith("Denied by preToolUse hook")


class Codex(Driver):
    """Codex CLI non-interactively (``codex exec --json PROMPT``), on a custom model provider in
    ``$CODEX_HOME/config.toml`` (``~/.codex``): ``model_provider`` naming a
    ``[model_providers.<id>]`` table with ``base_url``, ``env_key`` and ``wire_api =
    "responses"`` (https://developers.openai.com/codex/config-advanced, "Custom model
    providers"), served by :class:`~forge_policy.testing.models.ResponsesModel`.

    Codex loads a project's ``.codex/hooks.json`` only in a trusted project (``[projects."<dir>"]
    trust_level = "trusted"``), and runs a non-managed hook only once the user has reviewed and
    trusted its exact definition (``/hooks``); ``--dangerously-bypass-hook-trust`` stands in for
    that review here (https://developers.openai.com/codex/hooks, "Review and trust hooks").
    Codex keeps no list of denials: a refused call's output starts with "Command blocked by
    PreToolUse hook".
    """

    harness = "codex"
    programs = ("codex",)
    model_class = ResponsesModel

    def prepare(self, project: RealClientProject) -> None:
        config = project.home / ".codex" / "config.toml"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(
            'model = "scripted"\n'
            'model_provider = "scripted"\n'
            'approval_policy = "never"\n'
            'sandbox_mode = "danger-full-access"\n'
            "[model_providers.scripted]\n"
            'name = "scripted model"\n'
            f'base_url = "{project.model.url}/v1"\n'
            'env_key = "SCRIPTED_MODEL_API_KEY"\n'
            'wire_api = "responses"\n'
            f"[projects.{json.dumps(str(project.project))}]\n"
            'trust_level = "trusted"\n',
            "utf-8",
        )

    def command(self, program: str, prompt: str) -> list[str]:
        return [program, "exec", "--json", "--dangerously-bypass-hook-trust", prompt]

    def environ(self, project: RealClientProject) -> dict[str, str]:
        return {
            "SCRIPTED_MODEL_API_KEY": "sk-scripted-model",
            "CODEX_HOME": str(project.home / ".codex"),
        }

    def parse(self, stdout: str) -> tuple[Any, tuple[Mapping[str, Any], ...], str | None]:
        events = _json_lines(stdout)
        session = next(
            (e.get("thread_id") for e in events if e.get("type") == "thread.started"), None
        )
        return events, (), session if isinstance(session, str) else None

    def transcript(self, project: RealClientProject, session_id: str | None) -> Path | None:
        if not session_id:
            return None
        found = sorted((project.home / ".codex" / "sessions").rglob(f"*{session_id}*.jsonl"))
        return found[0] if found else None

    def refused(self, result: ToolResult) -> bool:
        return result.text.startswith("Command blocked by PreToolUse hook")


class Gemini(Driver):
    """Gemini CLI headless (``gemini -p PROMPT --output-format json --yolo``) on a Gemini API key
    with ``GOOGLE_GEMINI_BASE_URL`` naming the scripted model (honoured since
    google-gemini/gemini-cli#25357, "fix(core): honor GOOGLE_GEMINI_BASE_URL"; plain HTTP only
    for localhost), ``security.auth.selectedType: "gemini-api-key"`` in the user settings, and
    ``GEMINI_CLI_TRUST_WORKSPACE=true`` (where folder trust is on, project settings, and so
    their hooks, load only in a trusted folder: https://geminicli.com/docs/cli/trusted-folders).
    A refused call's result is an error naming "Tool execution blocked".
    """

    harness = "gemini"
    programs = ("gemini",)
    model_class = GeminiModel

    def prepare(self, project: RealClientProject) -> None:
        settings = project.home / ".gemini" / "settings.json"
        settings.parent.mkdir(parents=True, exist_ok=True)
        settings.write_text(
            json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}}}), "utf-8"
        )

    def command(self, program: str, prompt: str) -> list[str]:
        return [program, "-p", prompt, "--output-format", "json", "--yolo"]

    def environ(self, project: RealClientProject) -> dict[str, str]:
        return {
            "GEMINI_API_KEY": "scripted-model",
            "GOOGLE_GEMINI_BASE_URL": project.model.url,
            "GEMINI_CLI_TRUST_WORKSPACE": "true",
        }

    def parse(self, stdout: str) -> tuple[Any, tuple[Mapping[str, Any], ...], str | None]:
        start = stdout.find("{")
        try:
            output = json.loads(stdout[start:]) if start >= 0 else stdout
        except ValueError:
            return stdout, (), None
        session = output.get("session_id") if isinstance(output, dict) else None
        return output, (), session if isinstance(session, str) else None

    def transcript(self, project: RealClientProject, session_id: str | None) -> Path | None:
        if not session_id:
            return None
        found = sorted((project.home / ".gemini" / "tmp").rglob(f"*{session_id[:8]}*.json*"))
        return found[0] if found else None

    def refused(self, result: ToolResult) -> bool:
        return result.is_error and "Tool execution blocked" in result.text


def _json_lines(stdout: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    for line in stdout.splitlines():
        with contextlib.suppress(ValueError):
            event = json.loads(line)
            if isinstance(event, dict):
                events.append(event)
    return events


def _bundled_claude() -> str | None:
    try:
        import claude_agent_sdk
    except ImportError:
        return None
    bundled = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
    return str(bundled) if bundled.is_file() else None


DRIVERS: dict[str, type[Driver]] = {
    "claude-code": ClaudeCode,
    "codex": Codex,
    "copilot": Copilot,
    "gemini": Gemini,
}
