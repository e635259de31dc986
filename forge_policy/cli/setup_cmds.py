"""Setup commands: ``init``, ``doctor``, ``serve`` (``hook`` is documented here but
dispatched in :func:`forge_policy.cli.main` before argparse; ``audit`` is
:mod:`forge_policy.cli.audit_cmds`)."""

from __future__ import annotations

from forge_policy.cli.context import OK, REFUSED
from forge_policy.serve import DEFAULT_PORT, MAX_BODY
from forge_policy.worker.protocol import OPTIONS, HookOptions

TYPE_CHECKING = False
if TYPE_CHECKING:
    from argparse import Namespace
    from collections.abc import Callable, Mapping
    from pathlib import Path
    from typing import Any

    from forge_policy.cli.context import Context
    from forge_policy.config.env import Config
    from forge_policy.floor.model import Floor
    from forge_policy.ops.floor_probe import ProbeReport
    from forge_policy.ops.floor_report import HarnessFloor
    from forge_policy.ops.mcp_coverage import McpReport

HTTP_ONLY_WARNING = """\
WARNING: http hooks fail OPEN before Claude Code 2.1.295. It treats an http hook that cannot
connect as a non-blocking error: while `forge-policy serve` is not running, EVERY tool call goes
through unchecked (from 2.1.295 on, the PreToolUse entry's onFailure: "block" refuses them
instead). Run init --serve without --http-only for the safe form (a command hook that asks the
server and evaluates in-process when it does not answer).
Claude Code sends the token itself (to whatever listens on the port); start it with:
  export {env}="$(cat {token})"
"""
VIA_SERVE_NOTE = """\
serve mode: hooks run `forge-policy hook --via-serve`: they ask the server at {host}:{port}
and evaluate in-process when it does not answer, or not with an answer signed with the token
(which they never send). Start the server with: forge-policy serve
"""
WORKER_NOTE = """\
hooks run the warm-worker client: the first call starts a per-project worker (it exits after
{idle:g} s without a request); every failure of it is evaluated in-process. Switch it off with
FORGE_WORKER=off; see it with: forge-policy worker status
"""


def _port_type(*, any_port: bool) -> Callable[[str], int]:
    """An argparse type for a TCP port: a bad one is a usage error (exit 2), not a traceback."""
    import argparse

    from forge_policy.serve import port_problem

    def parse(text: str) -> int:
        try:
            port = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"port {text!r} is not a whole number") from None
        problem = port_problem(port, any_port=any_port)
        if problem is not None:
            raise argparse.ArgumentTypeError(problem)
        return port

    return parse


def register(command: Callable[..., Any]) -> None:
    """Add this group's commands to the parser."""
    p = command(
        "hook",
        cmd_hook,
        "Decide one harness event: JSON on stdin, the harness's answer on stdout.",
    )
    for flag, default, text in OPTIONS:  # HookOptions parses them; declared here for --help
        if isinstance(default, bool):
            p.add_argument(flag, action="store_true", help=text)
        else:
            p.add_argument(flag, default=default, help=text)
    p = command(
        "serve",
        cmd_serve,
        "Serve Claude Code http hooks on 127.0.0.1 with a warm evaluator (token required; "
        "SIGTERM/SIGINT stop it cleanly).",
    )
    p.add_argument(
        "--port",
        type=_port_type(any_port=True),
        default=None,
        help=f"TCP port (default: the one init --serve chose, else {DEFAULT_PORT}; 0: any)",
    )
    p.add_argument(
        "--max-body", type=int, default=MAX_BODY, metavar="BYTES", help="largest request body"
    )
    p.add_argument("--verbose", action="store_true", help="log every request on stderr")
    p = command(
        "init",
        cmd_init,
        "Set the project up: <FORGE_ROOT>/runtime and audit folders, .gitignore, and the hook "
        "in each harness's config file (merged: existing hooks and keys are kept): the "
        "harnesses named, else those the project shows signs of, else Claude Code. Idempotent.",
    )
    p.add_argument(
        "--harness",
        action="append",
        choices=registry_names(),
        metavar="NAME",
        help=f"set up this harness (repeatable): {', '.join(registry_names())}",
    )
    p.add_argument(
        "--serve",
        action="store_true",
        help="use `forge-policy serve`: hooks ask the server, falling back to in-process "
        "(a project already in serve mode stays in it unless --no-serve)",
    )
    p.add_argument(
        "--no-serve",
        action="store_true",
        help="leave serve mode: hooks evaluate in-process (or through the warm worker)",
    )
    p.add_argument(
        "--http-only",
        action="store_true",
        help="with --serve: write Claude Code http hooks (these let every call through when "
        "the server is down)",
    )
    p.add_argument(
        "--port",
        type=_port_type(any_port=False),
        default=None,
        help=f"serve port (with --serve; default: the one recorded, else {DEFAULT_PORT})",
    )
    p.add_argument(
        "--no-worker",
        action="store_true",
        help="write plain `forge-policy hook` instead of the warm-worker client (which a user "
        "can also switch off with FORGE_WORKER=off)",
    )
    p.add_argument(
        "--copy-catalog",
        action="store_true",
        help="copy the built-in catalog to <FORGE_ROOT>/behaviors to edit it",
    )
    p.add_argument(
        "--here",
        action="store_true",
        help="set up the working directory as a project of its own, even below a repository's "
        "top level or a folder holding .forge (without it, init run there refuses and names "
        "the project it belongs to)",
    )
    p.add_argument(
        "--floor",
        choices=("harness", "own", "off"),
        default="harness",
        help="the enforcement floor (recorded in <FORGE_ROOT>/config.yaml): harness (default: "
        "configure each harness's own sandbox from it, where the harness has one), own "
        "(forge-policy's sandbox around each shell call) or off (the hook alone; audited)",
    )
    p.add_argument(
        "--sandbox-settings",
        choices=("project", "local"),
        default="project",
        help="with --floor harness: write Claude Code's sandbox block into .claude/settings.json "
        "(project, default) or .claude/settings.local.json (local)",
    )
    where = p.add_mutually_exclusive_group()
    where.add_argument(
        "--shared",
        dest="where",
        action="store_const",
        const="shared",
        help="write a portable hook command into each harness's committed settings file: the "
        "project's launcher <FORGE_ROOT>/bin/forge-policy-hook, which runs the forge-policy of "
        "whichever machine it is on (default for a new project)",
    )
    where.add_argument(
        "--local",
        dest="where",
        action="store_const",
        const="local",
        help="write this machine's hook command into the harness's per-machine settings file "
        "(Claude Code: .claude/settings.local.json, git-ignored) and take it out of the shared "
        "one; harnesses without such a file keep the portable launcher (default: the choice the "
        "project already shows)",
    )
    p.add_argument(
        "--statusline",
        nargs="?",
        const="add",
        choices=("add", "replace"),
        default=None,
        help="also set Claude Code's statusLine to `forge-policy statusline` (levels, open "
        "blocks, counters near a threshold, floor); a status line of your own is kept unless "
        "--statusline=replace",
    )
    p.add_argument(
        "--plugin",
        metavar="DIR",
        default=None,
        help="write the forge-policy Claude Code plugin into DIR instead of setting the project "
        "up (.claude-plugin/plugin.json, hooks/hooks.json, the launcher; no machine path in "
        "any file): for claude --plugin-dir DIR, /plugin install or a marketplace",
    )
    p.add_argument(
        "--marketplace",
        nargs="?",
        const="",
        default=None,
        metavar="NAME",
        help="with --plugin: also write .claude-plugin/marketplace.json beside DIR (in its "
        "parent folder), a marketplace NAME listing the plugin (default: the name the file "
        "has, else forge-policy-plugins)",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="with --plugin: write into DIR even when it holds files and is not a forge-policy "
        "plugin (its other files are kept)",
    )
    p.add_argument("--json", action="store_true", help="print what was done as JSON")
    p = command(
        "uninstall",
        cmd_uninstall,
        "Take forge-policy out of the project, the inverse of init: its hook entries from every "
        "harness file (every other hook and key kept), its git hooks' block, the warm worker, "
        "the launcher; <FORGE_ROOT> stays unless --purge. A Claude Code plugin written by "
        "init --plugin is not the project's: remove it with claude plugin uninstall.",
    )
    p.add_argument(
        "--purge",
        action="store_true",
        help="also delete <FORGE_ROOT> (configuration, catalog, session state, audit log) and "
        "the .gitignore lines init added",
    )
    p.add_argument("--json", action="store_true", help="print what was done as JSON")
    register_doctor(command)


def register_doctor(command: Callable[..., Any]) -> None:
    """``doctor``: what each harness can enforce."""
    p = command(
        "doctor",
        cmd_doctor,
        "Per harness set up or detected in the project: which active behaviors it enforces, "
        "which it enforces differently and which it cannot, and why; which enforcement floor "
        "holds its shell calls (its own sandbox, forge-policy's, none or off) and what it covers.",
    )
    p.add_argument(
        "--harness",
        action="append",
        choices=registry_names(),
        metavar="NAME",
        help="assess this harness (repeatable; default: those set up or detected)",
    )
    p.add_argument(
        "--probe",
        action="store_true",
        help="run a probe under forge-policy's own floor that tries to write .forge/ and read a "
        "planted secret (a harness's own sandbox: its configuration only); exit 1 when a "
        "guarantee the report claims does not hold",
    )
    p.add_argument("--json", action="store_true", help="print JSON")


def registry_names() -> tuple[str, ...]:
    """The supported ``--harness`` names."""
    from forge_policy.harness.registry import names

    return names()


def cmd_hook(args: Namespace, ctx: Context) -> int:
    """``forge-policy hook`` reached through argparse (``main`` normally short-cuts it)."""
    import os
    import sys

    from forge_policy.hook import main

    options = HookOptions(args.harness, args.event, args.via_serve)
    return main(sys.stdin, ctx.out, ctx.err, os.environ, options.argv())


def _serve_mode(args: Namespace, root: str) -> tuple[bool, bool, int] | str:
    """``(serve, http_only, port)`` for ``init``, or why the options do not go together.

    Without ``--serve`` or ``--no-serve`` a project in serve mode stays in it, with its recorded
    form and port: ``init --copy-catalog`` must not switch serve mode off on the side.
    """
    from forge_policy.serve import port_problem, read_serve_config

    if args.serve and args.no_serve:
        return "init: --serve and --no-serve exclude each other"
    if args.http_only and not args.serve:
        return "init: --http-only needs --serve (it writes serve mode's http hooks)"
    if args.port is not None and not args.serve:
        return "init: --port needs --serve"
    recorded = read_serve_config(root) or {}
    kept = not args.serve and not args.no_serve and bool(recorded)
    if kept:
        port = recorded.get("port")
        if port_problem(port) is not None or not isinstance(port, int):
            port = DEFAULT_PORT
        return True, recorded.get("mode") == "http", port
    return args.serve, args.http_only, DEFAULT_PORT if args.port is None else args.port


def cmd_init(args: Namespace, ctx: Context) -> int:
    """``forge-policy init [--harness NAME]… [--serve [--http-only] [--port N] | --no-serve]
    [--no-worker] [--copy-catalog] [--floor harness|own|off] [--sandbox-settings project|local]
    [--shared | --local] [--json]``.
    """
    from pathlib import Path

    from forge_policy.cli.context import USAGE
    from forge_policy.ops.init import init
    from forge_policy.serve import DEFAULT_HOST, TOKEN_ENV, token_path

    if args.plugin is not None or args.marketplace is not None or args.force:
        return _init_plugin(args, ctx)
    ctx.here = args.here
    config = ctx.config
    below = _below_project(config)
    if below:
        ctx.note(below)
        return USAGE
    mode = _serve_mode(args, config.root)
    if isinstance(mode, str):
        ctx.note(mode)
        return USAGE
    serve, http_only, port = mode
    report = init(
        Path(config.project_dir),
        Path(config.root),
        serve=serve,
        http_only=http_only,
        port=port,
        copy_catalog=args.copy_catalog,
        worker=not args.no_worker,
        harnesses=args.harness,
        floor=args.floor,
        sandbox_settings=args.sandbox_settings,
        where=args.where,
        statusline=args.statusline,
    )
    from forge_policy.ops.plugin import double_registration

    report.notes.extend(double_registration(Path(config.project_dir)))
    if report.floor_change is not None and "off" in report.floor_change:  # audited
        from forge_policy.ops.floor_setup import record

        record(config.open_audit(), *report.floor_change)
    if args.json:
        ctx.print_json({**report.to_dict(), "serve": serve, "http_only": http_only})
        if http_only:
            ctx.err.write(HTTP_ONLY_WARNING.format(env=TOKEN_ENV, token=token_path(config.root)))
        return OK
    _print_changes(ctx, report, "nothing to do: the project was already set up")
    if serve and not args.serve:
        ctx.print(
            f"kept serve mode ({DEFAULT_HOST}:{port}); leave it with: forge-policy init --no-serve"
        )
    if http_only:
        ctx.err.write(HTTP_ONLY_WARNING.format(env=TOKEN_ENV, token=token_path(config.root)))
    elif serve:
        ctx.print(VIA_SERVE_NOTE.format(host=DEFAULT_HOST, port=port).rstrip())
    elif not args.no_worker and report.changed:
        worker = _worker_check()  # the plain hook where the system cannot check the worker
        if worker["available"]:
            ctx.print(WORKER_NOTE.format(idle=config.worker_idle).rstrip())
        else:
            ctx.print(f"warm worker: {worker['detail']}")
    return OK


#: ``init`` options that set a project up, which ``init --plugin`` does not do.
_PROJECT_OPTIONS = (
    ("harness", "--harness"),
    ("serve", "--serve"),
    ("no_serve", "--no-serve"),
    ("http_only", "--http-only"),
    ("port", "--port"),
    ("no_worker", "--no-worker"),
    ("copy_catalog", "--copy-catalog"),
    ("here", "--here"),
    ("where", "--shared/--local"),
    ("statusline", "--statusline"),
)


def _init_plugin(args: Namespace, ctx: Context) -> int:
    """``init --plugin DIR [--marketplace [NAME]] [--force] [--json]``: the Claude Code plugin
    (:mod:`forge_policy.ops.plugin`), and nothing in the project."""
    from pathlib import Path

    from forge_policy.cli.context import USAGE
    from forge_policy.ops import plugin

    if args.plugin is None:
        ctx.note("init: --marketplace and --force go with --plugin DIR")
        return USAGE
    given = [flag for name, flag in _PROJECT_OPTIONS if getattr(args, name) not in (None, False)]
    if given or args.floor != "harness" or args.sandbox_settings != "project":
        given += ["--floor"] * (args.floor != "harness")
        given += ["--sandbox-settings"] * (args.sandbox_settings != "project")
        ctx.note(
            f"init: --plugin writes the plugin folder only; {', '.join(given)} set a project "
            "up: run forge-policy init without --plugin for that"
        )
        return USAGE
    report = plugin.write(Path(args.plugin), force=args.force, marketplace=args.marketplace)
    if args.json:
        ctx.print_json(report.to_dict())
        return OK
    _print_changes(ctx, report, "nothing to do: the plugin was already up to date")
    if report.changed:
        ctx.print(PLUGIN_NOTE.format(folder=args.plugin).rstrip())
    return OK


PLUGIN_NOTE = """\
try it: claude --plugin-dir {folder}
(forge-policy must be on PATH or in FORGE_POLICY wherever it runs; an organisation hosts it with
--marketplace: see docs/how-to/claude-code-plugin.md)
"""


def _below_project(config: Config) -> str:
    """Why ``init`` (without ``--here``) must not set the project up from here: the working
    directory is below the project it belongs to (a folder holding ``.forge``, or the
    repository's top level); "" when it is the project itself."""
    import os

    from forge_policy.config.env import project_folder

    here = project_folder(config.environ or os.environ, here=True)
    if os.path.normcase(here) == os.path.normcase(config.project_dir):
        return ""
    what = "the project" if os.path.isdir(config.root) else "the top level of the repository"
    return (
        f"{here} is inside {what} at {config.project_dir}: run `forge-policy init` there to "
        f"set up that project, or `forge-policy init --here` to set up {here} as a project "
        "of its own"
    )


def cmd_uninstall(args: Namespace, ctx: Context) -> int:
    """``forge-policy uninstall [--purge] [--json]``."""
    from pathlib import Path

    from forge_policy.ops.plugin import enabled_in
    from forge_policy.ops.uninstall import uninstall

    config = ctx.config
    report = uninstall(Path(config.project_dir), Path(config.root), purge=args.purge)
    plugin = enabled_in(Path(config.project_dir))
    if plugin:  # uninstall is about the project: the plugin stays, and keeps deciding
        report.notes.append(
            f"the forge-policy plugin is still enabled ({'; '.join(plugin)}) and keeps deciding "
            "this project's events: uninstall is about the project; remove the plugin with: "
            "claude plugin uninstall forge-policy@MARKETPLACE"
        )
    if args.json:
        ctx.print_json(report.to_dict())
        return OK
    _print_changes(ctx, report, "nothing to do: forge-policy was not set up here")
    return OK


def _worker_check() -> dict[str, object]:
    """Whether this system can run the warm worker (it must name a socket's peer:
    :func:`forge_policy.worker.protocol.authenticates_peers`), and how, for ``doctor``."""
    from forge_policy.worker import protocol

    name = protocol.system()
    if not protocol.authenticates_peers():
        detail = (
            f"not available on {name}: it cannot name the user at the other end of a Unix "
            "socket, so every hook call evaluates in-process"
        )
        return {"available": False, "system": name, "peer_check": None, "detail": detail}
    check = protocol.PEER_CHECKS[name][2][0]
    detail = f"available (the worker's user is checked with {check})"
    if name != "linux":
        detail += f"; untested on a real {name} system"
    return {"available": True, "system": name, "peer_check": check, "detail": detail}


def cmd_doctor(args: Namespace, ctx: Context) -> int:
    """``forge-policy doctor [--harness NAME]… [--probe] [--json]``."""
    import os
    from pathlib import Path

    from forge_policy.engine.bypass import Bypass
    from forge_policy.floor.derive import floor_for
    from forge_policy.ops.doctor import active, coverage
    from forge_policy.ops.floor_report import coverage_line, coverage_of, floors

    config = ctx.config
    catalog = Bypass(config.load_catalog(), config.disable).catalog
    behaviors = active(catalog.behaviors, config.profile)
    project = Path(config.project_dir)
    environ = os.environ
    report = coverage(project, behaviors, args.harness, run=True, environ=environ)
    if not report:  # nothing set up or detected: what init would set up
        report = coverage(project, behaviors, ["claude-code"], run=True, environ=environ)
    broken = [r for h in report for r in h.hook_runs if not r.ok]
    floor = floor_for(os.path.abspath(config.project_dir), environ)
    held = floors(str(floor.project), config.root, environ, [h.name for h in report], floor)
    covered = coverage_of(floor)
    probes = _probes(held, floor, config.root, environ) if args.probe else []
    failed = args.probe and not _probe_ok(held, probes)
    from forge_policy.ops.statusline_config import check as check_statusline

    statusline = check_statusline(project, environ)  # decides nothing: never a failure
    worker = _worker_check()
    mcp = _mcp_report(ctx, project)  # says what is governed by name only: never a failure
    if args.json:
        entries = [{**h.to_dict(), "floor": f.to_dict()} for h, f in zip(report, held, strict=True)]
        result: dict[str, object] = {
            "behaviors": len(behaviors),
            "harnesses": entries,
            "floor": covered,
            "statusline": statusline,
            "worker": worker,
            "mcp": mcp.to_dict(),
        }
        if args.probe:
            runs = [{"harnesses": names, **p.to_dict()} for names, p in probes]
            result["probe"] = {"ok": not failed, "runs": runs}
        ctx.print_json(result)
        return REFUSED if failed or broken else OK
    for h, f in zip(report, held, strict=True):
        where = f"{h.config}, hooked on {', '.join(h.installed)}" if h.installed else h.config
        ctx.print(f"{h.title} ({h.name}): {where}")
        if h.runs:
            ctx.print(f"  enforces {len(h.enforced)} of {len(behaviors)} active behaviors")
        else:
            ctx.print(
                f"  NOT ENFORCED: 0 of {len(behaviors)} active behaviors: its hook command does "
                "not answer on this machine"
            )
        for run in h.hook_runs:
            ctx.print(f"  {run.line()}")
        _print_floor(ctx, f, coverage_line(covered))
        for heading, findings in (("limited", h.limited), ("not enforced", h.not_enforced)):
            if findings and not h.runs:
                continue  # said once above
            if findings:
                ctx.print(f"  {heading}:")
            for behavior_id, found in findings.items():
                ctx.print(f"    {behavior_id}: {'; '.join(f.reason for f in found)}")
        for finding in h.hook_findings:
            ctx.print(f"  {finding.code}: {finding.reason}")
        for note in h.notes:
            ctx.print(f"  note: {note}")
    for line in mcp.lines():
        ctx.print(line)
    if statusline is not None:
        state = "runs" if statusline["ok"] else "does NOT answer"
        ctx.print(f"status line ({statusline['file']}): {state}: {statusline['line']}")
    if not worker["available"] or worker["system"] != "linux":  # news: no worker, or untested
        ctx.print(f"warm worker: {worker['detail']}")
    for f in held if args.probe else ():
        if f.state in ("none", "off"):
            ctx.print(f"probe: no floor to probe for {f.harness}: {f.warning or f.detail}")
    for names, probe in probes:
        ctx.print(f"probe of the {probe.title()} for {', '.join(names)}:")
        if probe.note:
            ctx.print(f"  {probe.note}")
        for check in probe.checks:
            ctx.print(f"  {check.line()}")
    for run in broken:
        ctx.note(f"{run.harness}: the hook is NOT enforced: {run.detail}; fix: {run.fix}")
    if failed:
        ctx.print("probe: NOT every guarantee the report claims holds (see above)")
    elif probes and all(p.kind == "harness" for _, p in probes):
        ctx.print("probe: every guarantee the report claims is configured (configuration only)")
    elif probes:
        ctx.print("probe: every guarantee the report claims held")
    elif args.probe:
        ctx.print("probe: no floor to probe: the report claims nothing beyond the hook")
    return REFUSED if failed or broken else OK


def _mcp_report(ctx: Context, project: Path) -> McpReport:
    """The MCP servers of ``project`` and the MCP tools its audit log has seen (read without
    creating the log; one that cannot be read is a note in the report)."""
    from forge_policy.cli.replay_cmds import existing_records
    from forge_policy.errors import ForgePolicyError
    from forge_policy.ops.mcp_coverage import mcp_report

    try:
        records = existing_records(ctx.config, lambda r: bool(r.get("reading")))
    except (ForgePolicyError, OSError) as exc:
        report = mcp_report(project, [])
        note = f"the audit log cannot be read, so no MCP tool is listed: {exc}"
        return report.noted(note)
    return mcp_report(project, records)


def _print_floor(ctx: Context, floor: HarnessFloor, covers: str) -> None:
    """A harness's floor lines in ``doctor``'s text report."""
    ctx.print(f"  floor: {floor.headline()}: {floor.detail}")
    if floor.warning:
        ctx.print(f"  warning: {floor.warning}")
    if floor.state in ("own", "harness"):
        ctx.print(f"  floor covers: {covers}")
    if floor.hook_only:
        ctx.print("  only the hook holds (nothing beneath it stops a spelling its reading missed):")
        for _, text in floor.hook_only:
            ctx.print(f"    {text}")


def _probes(
    held: list[HarnessFloor], floor: Floor, forge_root: str, environ: Mapping[str, str]
) -> list[tuple[list[str], ProbeReport]]:
    """One probe per floor in use: the own floor run once, each harness sandbox checked."""
    from forge_policy.ops.floor_probe import probe_harness, probe_own

    out: list[tuple[list[str], ProbeReport]] = []
    own = [f for f in held if f.state == "own" and f.method is not None]
    if own and own[0].method is not None:
        report = probe_own(floor, forge_root, own[0].method, environ, own[0].unheld)
        out.append(([f.harness for f in own], report))
    for f in held:
        if f.state == "harness":
            out.append(([f.harness], probe_harness(f.title, environ, f.unheld)))
    return out


def _probe_ok(held: list[HarnessFloor], probes: list[tuple[list[str], ProbeReport]]) -> bool:
    """Every floor doctor reports holds: each probe passed, and no harness that could run
    under forge-policy's floor is left without one for want of a sandbox or a readable
    setting (a harness that cannot rewrite a call, or ``floor: off``, claims none)."""
    from forge_policy.harness.registry import get

    missing = [
        f
        for f in held
        if f.state == "none" and (get(f.harness).can_rewrite or f.warning is not None)
    ]
    return not missing and all(p.ok for _, p in probes)


def cmd_serve(args: Namespace, ctx: Context) -> int:
    """``forge-policy serve [--port N] [--max-body BYTES] [--verbose]``."""
    from forge_policy.serve.server import serve_forever

    return serve_forever(
        ctx.config, port=args.port, max_body=args.max_body, verbose=args.verbose, err=ctx.err
    )


def _print_changes(ctx: Context, report: Any, unchanged: str) -> None:
    """What ``init`` or ``uninstall`` did, one line each, ``unchanged`` when nothing, then its
    notes (both reports have ``actions``, ``changed`` and ``notes``)."""
    for action in report.actions:
        ctx.print(str(action))
    if not report.changed:
        ctx.print(unchanged)
    for note in report.notes:
        ctx.print(f"note: {note}")
