"""``facts.governance_changes`` and ``protect-governance``: what an agent may not change in its
own governance, and what it may still read."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import forge_policy as fp
from forge_policy.facts.governance import changes
from forge_policy.model import Event

from .governance_cases import (
    ALLOW,
    BLOCK,
    BLOCK_WITH_FORGE_ROOT,
    HOME,
    PROJECT,
    ROUTE_TWINS,
    ROUTES,
)

ENV = {"HOME": HOME}


@pytest.fixture(autouse=True)
def home(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", HOME)  # ~ in the cases


def bash(command: str, cwd: str = PROJECT) -> Event:
    return Event("PreToolUse", "s", tool_name="Bash", tool_input={"command": command}, cwd=cwd)


def tool(name: str, cwd: str = PROJECT, **tool_input: object) -> Event:
    return Event("PreToolUse", "s", tool_name=name, tool_input=tool_input, cwd=cwd)


@pytest.mark.parametrize("command", BLOCK)
def test_a_governance_change_is_listed(command: str) -> None:
    assert changes(bash(command), ENV)


@pytest.mark.parametrize("command", BLOCK_WITH_FORGE_ROOT)
def test_forge_root_elsewhere_is_governance_too(command: str) -> None:
    assert changes(bash(command), {**ENV, "FORGE_ROOT": "/work/gov"})
    if "FORGE_ROOT" not in command:  # without FORGE_ROOT, /work/gov is an ordinary folder
        assert changes(bash(command), ENV) == []


@pytest.mark.parametrize("command", ALLOW)
def test_reads_and_look_alikes_are_not_changes(command: str) -> None:
    assert changes(bash(command), ENV) == []


def test_the_changes_name_what_and_where() -> None:
    found = changes(bash("cd .forge && rm -rf audit; forge-policy override x --session s"), ENV)
    assert found == ["rm /work/proj/.forge/audit", "forge-policy override"]


def test_the_behavior_store_and_catalog_variables_are_governance() -> None:
    env = {**ENV, "FORGE_BEHAVIORS_DIR": "/etc/rules", "FORGE_STORE": "sqlite:/var/s.db"}
    assert changes(bash("rm /var/s.db"), env) and changes(bash("mv /etc/rules /tmp"), env)
    assert changes(bash("rm /var/s.db"), ENV) == []


def test_a_symlink_into_the_governance_is_followed(tmp_path: Path) -> None:
    (tmp_path / ".forge" / "audit").mkdir(parents=True)
    (tmp_path / "innocent").symlink_to(tmp_path / ".forge" / "audit")
    assert changes(bash("rm -rf innocent/*", cwd=str(tmp_path)), ENV)
    assert changes(bash("echo x > innocent/overrides.log", cwd=str(tmp_path)), ENV)


@pytest.mark.parametrize(
    ("name", "key", "path"),
    [
        ("Write", "file_path", ".forge/behaviors/index.yaml"),
        ("Edit", "file_path", f"{PROJECT}/.forge/behaviors/search-first/behavior.yaml"),
        ("MultiEdit", "file_path", "/elsewhere/.forge/audit/overrides.log"),
        ("NotebookEdit", "notebook_path", ".forge/x.ipynb"),
        ("Write", "file_path", f"{HOME}/.cache/forge-policy/catalog-cache-0.json"),
        ("write_file", "file_path", ".forge/behaviors/index.yaml"),
        ("mcp__filesystem__move_file", "source", ".forge"),
        ("mcp__filesystem__write_file", "path", "/work/proj/.claude/settings.json"),
    ],
)
def test_path_tools_on_governance_files(name: str, key: str, path: str) -> None:
    assert changes(tool(name, **{key: path, "content": "x"}), ENV) == [
        f"{name} {os.path.normpath(os.path.join(PROJECT, path))}"
    ]


@pytest.mark.parametrize(
    ("name", "tool_input"),
    [
        ("Read", {"file_path": ".forge/audit/overrides.log"}),
        ("Grep", {"pattern": "x", "path": ".forge"}),
        ("Write", {"file_path": "src/forge.py", "content": "x"}),
        ("Edit", {"file_path": "docs/.forge.md", "old_string": "a", "new_string": "b"}),
        ("mcp__filesystem__read_file", {"path": ".forge/audit/overrides.log"}),
        ("mcp__filesystem__write_file", {"path": "src/app.py", "content": "x"}),
    ],
)
def test_reads_and_other_files_are_not_changes(name: str, tool_input: dict[str, object]) -> None:
    assert changes(tool(name, **tool_input), ENV) == []


# --- the hook settings ------------------------------------------------------------------------

HOOK = {"type": "command", "command": "/venv/bin/forge-policy hook", "timeout": 30}
SETTINGS = {
    "permissions": {"allow": ["Bash(ls:*)"]},
    "hooks": {
        "PreToolUse": [{"matcher": "*", "hooks": [HOOK]}],
        "Stop": [{"hooks": [HOOK]}],
    },
}


@pytest.fixture
def settings(tmp_path: Path) -> Path:
    path = tmp_path / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps(SETTINGS, indent=2))
    return path


def edit(settings: Path, name: str, **tool_input: object) -> list[str]:
    return changes(tool(name, cwd=str(settings.parent.parent), file_path=str(settings),
                        **tool_input), ENV)  # fmt: skip


def with_(**changes_: object) -> str:
    return json.dumps({**SETTINGS, **changes_}, indent=2)


def on(path: Path, found: list[str], tool: str = "Write") -> bool:
    """Whether ``found`` names a change to ``path`` by ``tool``, and nothing else (each entry
    says what changed after the path: ``"Write /p/.claude/settings.json: hooks.Stop"``)."""
    return bool(found) and all(item.startswith(f"{tool} {path}: ") for item in found)


def test_a_settings_write_that_keeps_the_hooks_is_not_a_change(settings: Path) -> None:
    # issue 23: only harmless keys may change (model, display); permissions and other hooks
    # are enforcement (SPEC §7), so the earlier harmless twins below are changes now
    keep = with_(model="x", outputStyle="Explanatory")
    assert edit(settings, "Write", content=keep) == []
    deny = with_(permissions={"allow": ["Bash(ls:*)"], "deny": ["Bash(curl:*)"]})
    assert edit(settings, "Write", content=deny) == []  # a deny rule only refuses more
    widened = with_(permissions={"allow": ["Bash(ls:*)", "Bash(make:*)"]}, model="x")
    assert edit(settings, "Write", content=widened) == [f"Write {settings}: permissions.allow"]
    other = {
        **SETTINGS["hooks"],
        "PostToolUse": [{"hooks": [{"type": "command", "command": "echo"}]}],
    }
    assert edit(settings, "Write", content=with_(hooks=other)) == [
        f"Write {settings}: hooks.PostToolUse"
    ]


@pytest.mark.parametrize(
    "content",
    [
        json.dumps({"permissions": {}}),  # the hooks dropped
        with_(hooks={"PreToolUse": SETTINGS["hooks"]["PreToolUse"]}),  # Stop's dropped
        with_(hooks={**SETTINGS["hooks"], "PreToolUse": [{"matcher": "Read", "hooks": [HOOK]}]}),
        with_(hooks={**SETTINGS["hooks"], "Stop": [{"hooks": [{**HOOK, "timeout": 0.001}]}]}),
        with_(disableAllHooks=True),
        with_(env={"FORGE_DISABLE": "dangerous-commands"}),
        with_(env={"FORGE_PROFILE": "minimal"}),
        "{ not json",
        "",
    ],
)
def test_a_settings_write_that_weakens_the_hooks_is_a_change(settings: Path, content: str) -> None:
    assert on(settings, edit(settings, "Write", content=content))


def test_settings_edits_are_applied_to_the_current_file(settings: Path) -> None:
    text = settings.read_text()
    # issue 23: widening an allow rule changes permissions
    assert edit(settings, "Edit", old_string='"Bash(ls:*)"', new_string='"Bash(*)"') == [
        f"Edit {settings}: permissions.allow"
    ]
    shorter = edit(settings, "Edit", old_string='"timeout": 30', new_string='"timeout": 1',
                   replace_all=True)  # fmt: skip
    assert on(settings, shorter, "Edit")
    hook_line = next(line for line in text.splitlines() if "forge-policy hook" in line)
    assert on(settings, edit(settings, "Edit", old_string=hook_line,
                             new_string='"command": "true",'), "Edit")  # fmt: skip
    assert on(settings, edit(settings, "MultiEdit", edits=[
        {"old_string": '"Bash(ls:*)"', "new_string": '"Bash(git:*)"'},
        {"old_string": "forge-policy hook", "new_string": "true"},
    ]), "MultiEdit")  # fmt: skip
    # an old_string that is not there fails closed since issue 23 (Claude Code's Edit matches
    # more than the exact text: curly quotes are normalized)
    assert on(settings, edit(settings, "Edit", old_string="absent", new_string="x"), "Edit")


def test_a_new_settings_file_may_be_written(tmp_path: Path) -> None:
    path = tmp_path / ".claude" / "settings.local.json"
    assert changes(tool("Write", file_path=str(path), content='{"model": "x"}'), ENV) == []
    # issue 23: a new file that adds hooks or permissions changes enforcement
    assert on(path, changes(tool("Write", file_path=str(path), content=with_()), ENV))


def test_the_serve_http_hook_counts_as_forge_policy(settings: Path) -> None:
    http = {"type": "http", "url": "http://127.0.0.1:8765/hook",
            "headers": {"Authorization": "Bearer $FORGE_SERVE_TOKEN"}}  # fmt: skip
    settings.write_text(with_(hooks={"PreToolUse": [{"matcher": "*", "hooks": [http]}]}))
    assert on(settings, edit(settings, "Write", content=json.dumps({})))


# --- the behavior --------------------------------------------------------------------------------


def test_protect_governance_is_first_hard_and_never_bypassed() -> None:
    catalog = fp.builtin_catalog()
    behavior = catalog.behaviors[0]
    assert behavior.id == "protect-governance"
    assert behavior.default_level.label == "hard_block" and behavior.bypass == "never"


@pytest.mark.parametrize("command", ["forge-policy off dangerous-commands", "rm -rf .forge"])
def test_the_block_tells_the_agent_to_ask_the_user(command: str) -> None:
    evaluator = fp.Evaluator(fp.builtin_catalog(), clock=lambda: 1000.0)
    decision = evaluator.evaluate(bash(command))
    assert decision.blocking is not None
    assert decision.blocking.behavior_id == "protect-governance"
    assert "from their own shell" in decision.blocking.message
    assert "cannot be overridden" in decision.blocking.message


@pytest.mark.parametrize("profile", ["minimal", "standard", "strict"])
def test_bypass_never_behaviors_hold_in_every_profile(profile: str) -> None:
    evaluator = fp.Evaluator(fp.builtin_catalog(), clock=lambda: 1000.0, profile=profile)
    off = evaluator.evaluate(bash("forge-policy off no-model-attribution"))
    assert off.blocking is not None and off.blocking.behavior_id == "protect-governance"
    commit = evaluator.evaluate(bash('git commit -m "feat: x" -m "Co-Authored-By: Claude"'))
    assert commit.blocking is not None
    assert commit.blocking.behavior_id == "no-model-attribution"


def test_forge_disable_cannot_switch_it_off(tmp_path: Path) -> None:
    from forge_policy.config.env import Config

    env = {"FORGE_ROOT": str(tmp_path / ".forge"), "FORGE_DISABLE": "protect-governance",
           "FORGE_STORE": "memory", "HOME": HOME}  # fmt: skip
    evaluator = Config.from_env(env, cwd=str(tmp_path)).build_evaluator()
    decision = evaluator.evaluate(bash("rm -rf .forge", cwd=str(tmp_path)))
    assert decision.blocking is not None
    assert decision.blocking.behavior_id == "protect-governance"


def test_many_paths_in_one_folder_are_resolved_once_per_folder(tmp_path: Path) -> None:
    """The symlink check resolves each folder once per event: 5,000 deletes in one folder
    used to pass the 4,096-resolution cap, so the fact was incomplete and protect-governance
    refused the call (fail closed) although nothing of the governance was touched."""
    from forge_policy.facts import FactRegistry, Partial
    from forge_policy.facts.governance import provide_governance_changes

    facts = FactRegistry()  # a generous budget: this test is about the cap, not the time
    facts.register("changes", provide_governance_changes, budget_ms=60_000)
    (tmp_path / "build").mkdir()
    chain = " && ".join(f"rm -rf build/{i}" for i in range(5000))
    event = Event(
        "PreToolUse", "s", tool_name="Bash", tool_input={"command": chain}, cwd=str(tmp_path)
    )
    found, _ = facts["changes"].evaluate(event)
    assert found == [] and not isinstance(found, Partial)
    (tmp_path / "build" / "7").symlink_to(tmp_path / ".forge")  # a link among them still counts
    found, _ = facts["changes"].evaluate(event)
    assert found == [f"rm {tmp_path}/build/7"]


# --- what else controls the hook (issue 23, family 2) ---------------------------------------

ROUTE_CASES = [(route, command) for route, commands in ROUTES.items() for command in commands]


@pytest.mark.parametrize(("route", "command"), ROUTE_CASES)
def test_every_route_to_the_hook_is_a_change(route: str, command: str) -> None:
    assert changes(bash(command), ENV), route


@pytest.mark.parametrize("command", ROUTE_TWINS)
def test_the_harmless_twins_still_pass(command: str) -> None:
    assert changes(bash(command), ENV) == []


def _site() -> str:
    import sysconfig

    return sysconfig.get_paths()["purelib"]


def _installation_cases() -> list[str]:
    import sys

    import forge_policy

    site, bin_dir = _site(), os.path.dirname(os.path.abspath(sys.executable))
    package = os.path.dirname(forge_policy.__file__)
    return [
        f"echo 'import forge_policy.hook as h; h.respond = None' > {site}/zz.pth",
        f"cp /tmp/evil.pth {site}/",
        f"tee {site}/sitecustomize.py < /tmp/x",
        f"echo x > {site}/usercustomize.py",
        f"rm -rf {site}/forge_policy-0.1.0.dist-info",
        f"rm {site}/*.pth",
        f"echo 'import os' > {HOME}/.local/lib/python3.11/site-packages/x.pth",
        f"sed -i 's/deny/allow/' {package}/hook.py",
        f"echo x > {package}/engine/evaluator.py",
        f"cp /tmp/fake {bin_dir}/forge-policy",
        f"ln -sf /tmp/py {bin_dir}/python3",
        f"echo 'home = /tmp' > {os.path.dirname(bin_dir)}/pyvenv.cfg",
        f"rm -rf {os.path.dirname(bin_dir)}",
    ]


def test_the_engines_installation_is_governance() -> None:
    import forge_policy

    package = os.path.dirname(forge_policy.__file__)
    for command in _installation_cases():
        if package in command and package.startswith(PROJECT):
            continue  # not in this layout
        assert changes(bash(command), ENV), command
    site = _site()
    twins = [f"ls {site}", f"cat {site}/distutils-precedence.pth", f"echo x > {site}.txt"]
    for command in twins:
        assert changes(bash(command), ENV) == [], command


def test_an_editable_install_inside_the_project_is_the_projects_code() -> None:
    """Developing forge-policy itself: its sources are the project's work, its .pth is not."""
    import forge_policy

    package = os.path.dirname(os.path.realpath(forge_policy.__file__))
    tree = os.path.dirname(package)
    write = Event("PreToolUse", "s", tool_name="Write", cwd=tree,
                  tool_input={"file_path": f"{package}/hook.py", "content": "x"})  # fmt: skip
    assert changes(write, {"HOME": HOME, "CLAUDE_PROJECT_DIR": tree}) == []
    assert changes(write, {"HOME": HOME, "CLAUDE_PROJECT_DIR": "/elsewhere"})
    pth = bash(f"echo x > {_site()}/evil.pth", cwd=tree)
    assert changes(pth, {"HOME": HOME, "CLAUDE_PROJECT_DIR": tree})


def test_a_hard_link_to_a_guarded_file_is_the_guarded_file(tmp_path: Path) -> None:
    log = tmp_path / ".forge" / "audit" / "overrides.log"
    log.parent.mkdir(parents=True)
    log.write_text("{}\n")
    (tmp_path / "notes.txt").write_text("x")
    os.link(log, tmp_path / "innocent")  # made in an earlier call
    os.link(tmp_path / "notes.txt", tmp_path / "notes2.txt")  # a hard link to nothing guarded
    for command in (": > innocent", "truncate -s 0 innocent", "echo x >> ./innocent",
                    "sed -i d innocent", "rm innocent && echo x"):  # fmt: skip
        found = changes(bash(command, cwd=str(tmp_path)), ENV)
        if command.startswith("rm"):
            assert found == []  # removing one name leaves the file as it is
        else:
            assert found, command
    assert changes(bash(": > notes2.txt", cwd=str(tmp_path)), ENV) == []
    assert changes(bash("cat innocent", cwd=str(tmp_path)), ENV) == []


# --- git: what removes or rewrites an untracked .forge, and persisted config -------------------


def git(repo: Path, *args: str) -> None:
    import subprocess

    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                   env={"GIT_CONFIG_NOSYSTEM": "1", "HOME": str(repo), "PATH": os.environ["PATH"],
                        "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@x",
                        "GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "a@x"})  # fmt: skip


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository whose .forge is untracked, its runtime ignored; src/ tracked."""
    repo = tmp_path / "r"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "a.py").write_text("a = 1\n")
    (repo / ".gitignore").write_text(".forge/runtime/\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "init")
    (repo / ".forge" / "runtime").mkdir(parents=True)
    (repo / ".forge" / "runtime" / "state.json").write_text("{}")
    return repo


@pytest.mark.parametrize(
    "command",
    ["git stash -u", "git stash push --include-untracked", "git stash -a", "git stash save --all",
     "git clean -fdx", "git clean -f -d -x", "git clean -fX", "git clean -fd",
     "git clean --force -d .forge"],
)  # fmt: skip
def test_git_removing_an_untracked_forge_is_a_change(repo: Path, command: str) -> None:
    assert changes(bash(command, cwd=str(repo)), ENV), command


@pytest.mark.parametrize(
    "command",
    ["git stash", "git stash list", "git stash pop", "git clean -n -dx", "git clean -fd src",
     "git clean -fdx src/", "git checkout -b topic", "git status", "git switch -c x"],
)  # fmt: skip
def test_git_leaving_an_untracked_forge_alone_passes(repo: Path, command: str) -> None:
    assert changes(bash(command, cwd=str(repo)), ENV) == []


def test_a_tracked_forge_rewritten_by_a_checkout_or_reset_is_a_change(repo: Path) -> None:
    (repo / ".forge" / "audit").mkdir()
    log = repo / ".forge" / "audit" / "overrides.log"
    log.write_text("one\n")
    git(repo, "add", ".forge/audit")
    git(repo, "commit", "-qm", "audit")
    git(repo, "branch", "old", "HEAD~1")
    log.write_text("one\ntwo\n")  # appended since the commit
    rewrites = [
        "git restore .",
        "git restore --worktree --staged .forge",
        "git reset --hard",
        "git checkout -- .",
        "git stash",
        "git checkout old",
        "git switch old",
        "git reset --hard HEAD~1",
        "git checkout -f main",
    ]
    for command in rewrites:
        assert changes(bash(command, cwd=str(repo)), ENV), command
    git(repo, "add", ".forge/audit")
    git(repo, "commit", "-qm", "audit 2")
    git(repo, "branch", "same")
    kept = ["git stash", "git checkout same", "git reset --hard", "git checkout -- src",
            "git restore --staged .", "git restore src"]  # fmt: skip
    for command in kept:
        assert changes(bash(command, cwd=str(repo)), ENV) == [], command


def test_git_worktree_remove_force_of_a_governed_tree_is_a_change(repo: Path) -> None:
    other = repo.parent / "wt"
    git(repo, "worktree", "add", "-q", str(other))
    (other / ".forge").mkdir()
    assert changes(bash(f"git worktree remove --force {other}", cwd=str(repo)), ENV)
    assert changes(bash(f"git worktree remove {other}", cwd=str(repo)), ENV) == []


def test_the_folder_core_hooks_path_names_is_governance(repo: Path) -> None:
    git(repo, "config", "core.hooksPath", ".githooks")
    for command in ("echo x > .githooks/pre-commit", "rm -rf .githooks", "cp /tmp/x .githooks/"):
        assert changes(bash(command, cwd=str(repo)), ENV), command
    assert changes(bash("echo x > .github/pre-commit", cwd=str(repo)), ENV) == []


def test_a_git_config_edit_is_judged_by_the_keys_that_run_code(repo: Path) -> None:
    config = repo / ".git" / "config"
    text = config.read_text()

    def write(content: str) -> list[str]:
        return changes(tool("Write", cwd=str(repo), file_path=str(config), content=content), ENV)

    assert write(text + "[user]\n\tname = me\n") == []
    assert write(text + "[core]\n\thooksPath = /tmp/h\n")
    assert write(text + '[alias]\n\tst = "!sh -c x"\n')
    assert write(text + "[alias]\n\tst = status\n") == []
    assert write(text + '[filter "x"]\n\tclean = sh x\n')
    assert write(text + "[include]\n\tpath = /tmp/evil\n")


@pytest.mark.parametrize("where", ["site", "bin", "user-site"])
def test_the_path_tools_on_the_installation_are_changes(where: str) -> None:
    import sys

    path = {
        "site": f"{_site()}/evil.pth",
        "bin": f"{os.path.dirname(os.path.abspath(sys.executable))}/forge-policy",
        "user-site": f"{HOME}/.local/lib/python3.11/site-packages/usercustomize.py",
    }[where]
    for name in ("Write", "Edit", "mcp__filesystem__write_file"):
        key = "path" if name.startswith("mcp") else "file_path"
        assert changes(tool(name, **{key: path, "content": "x"}), ENV) == [f"{name} {path}"]
    assert changes(tool("Read", file_path=path), ENV) == []


def test_every_program_targets_reads_passes_its_early_exit() -> None:
    """``_targets`` returns at once for a program outside ``_TARGETING`` (and not an
    interpreter): every program one of its branches names must be in that set, or the branch
    is never reached (a governance write let through)."""
    import ast
    import inspect

    from forge_policy.facts import governance

    tree = ast.parse(inspect.getsource(governance._targets))
    named: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and isinstance(node.left, ast.Name):
            if node.left.id != "name":
                continue
            for right in node.comparators:
                if isinstance(right, ast.Constant) and isinstance(right.value, str):
                    named.add(right.value)
                elif isinstance(right, ast.Name):
                    value = getattr(governance, right.id)
                    if right.id != "_TARGETING":
                        named |= set(value)
                elif isinstance(right, ast.Tuple):
                    named |= {e.value for e in right.elts if isinstance(e, ast.Constant)}
    assert {"rm", "mv", "cp", "tee", "sed", "dd", "find", "git", "flock", "xargs"} <= named
    assert named <= governance._TARGETING
