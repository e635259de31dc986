"""``forge-policy completion bash|zsh|fish``: a shell completion script generated from the
argument parser itself, so that it never lags the commands.

The parser is read into a plain tree (:func:`command_tree`): each command path (``""`` for the
top, ``"worker"``, ``"audit log"``) with its subcommands, its options (those that take a value,
and their choices) and its positional choices. The bash script (also zsh's, through
``bashcompinit``) and the fish script are tables of that tree plus one small walker that finds
the command path of the words typed so far. An option that takes a value and has no choices
(a file, a session id) completes file names.

Install::

    # bash (~/.bashrc)
    eval "$(forge-policy completion bash)"
    # zsh (~/.zshrc, after compinit)
    eval "$(forge-policy completion zsh)"
    # fish
    forge-policy completion fish > ~/.config/fish/completions/forge-policy.fish
"""

from __future__ import annotations

import argparse

import attrs

from forge_policy.cli.context import OK

TYPE_CHECKING = False
if TYPE_CHECKING:
    from argparse import Namespace
    from collections.abc import Callable, Iterator
    from typing import Any

    from forge_policy.cli.context import Context

PROG = "forge-policy"
SHELLS = ("bash", "zsh", "fish")


@attrs.frozen
class Option:
    """One option: its flags, whether it takes a value, the value's choices, its help."""

    flags: tuple[str, ...]
    takes_value: bool
    choices: tuple[str, ...]
    help: str


@attrs.frozen
class Command:
    """One command path of the parser (``path`` ``""`` is the program itself)."""

    path: str
    help: str
    options: tuple[Option, ...]
    subcommands: tuple[tuple[str, str], ...]  # (name, help)
    positional_choices: tuple[str, ...]


def register(command: Callable[..., Any]) -> None:
    """Add ``completion`` to the parser."""
    p = command(
        "completion",
        cmd_completion,
        "Print a completion script for bash, zsh or fish, generated from these commands' "
        'definitions. bash/zsh: eval "$(forge-policy completion bash)" in ~/.bashrc (zsh: '
        "~/.zshrc after compinit); fish: forge-policy completion fish > "
        "~/.config/fish/completions/forge-policy.fish",
    )
    p.add_argument("shell", choices=SHELLS, metavar="SHELL", help="bash, zsh or fish")


def cmd_completion(args: Namespace, ctx: Context) -> int:
    """``forge-policy completion bash|zsh|fish``."""
    parser = ctx.parser
    assert parser is not None  # set by forge_policy.cli.app.run
    tree = list(command_tree(parser))
    script = {"bash": bash_script, "zsh": zsh_script, "fish": fish_script}[args.shell](tree)
    ctx.write(script)
    return OK


def _help(text: str | None) -> str:
    if not text or text == argparse.SUPPRESS:
        return ""
    first = text.split(". ")[0].split("\n")[0]
    return first if len(first) <= 70 else first[:69] + "…"


def command_tree(
    parser: argparse.ArgumentParser, path: str = "", text: str = ""
) -> Iterator[Command]:
    """Every command path of ``parser``, the program first, depth first."""
    options: list[Option] = []
    subcommands: list[tuple[str, str]] = []
    positional: list[str] = []
    children: list[tuple[str, argparse.ArgumentParser, str]] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help for a in action._choices_actions}
            for name, sub in action.choices.items():
                subcommands.append((name, _help(helps.get(name))))
                children.append((name, sub, helps.get(name) or ""))
        elif action.option_strings:
            takes = action.nargs != 0
            choices = tuple(str(c) for c in action.choices) if action.choices else ()
            options.append(Option(tuple(action.option_strings), takes, choices, _help(action.help)))
        elif action.choices:
            positional.extend(str(c) for c in action.choices)
    yield Command(path, _help(text), tuple(options), tuple(subcommands), tuple(positional))
    for name, sub, sub_help in children:
        yield from command_tree(sub, f"{path} {name}".strip(), sub_help)


def _words(values: Iterator[str] | tuple[str, ...] | list[str]) -> str:
    return " ".join(values)


def _case(arms: list[tuple[str, str]], indent: str = "        ") -> str:
    return "\n".join(f'{indent}"{key}") echo "{value}" ;;' for key, value in arms if value)


def bash_script(tree: list[Command]) -> str:
    """The bash completion script (bash 3.2 and later: no associative arrays)."""
    subs = [(c.path, _words(n for n, _ in c.subcommands)) for c in tree]
    opts = [(c.path, _words(f for o in c.options for f in o.flags)) for c in tree]
    takes = [(c.path, _words(f for o in c.options if o.takes_value for f in o.flags)) for c in tree]
    values = [(c.path, _words(c.positional_choices)) for c in tree]
    values += [
        (f"{c.path} {flag}", _words(o.choices))
        for c in tree
        for o in c.options
        if o.choices
        for flag in o.flags
    ]
    return f"""\
# {PROG} completion for bash, generated from its argument parser by
# `{PROG} completion bash`. Load it with: eval "$({PROG} completion bash)"
_forge_policy_subs() {{
    case "$1" in
{_case(subs)}
    esac
}}
_forge_policy_opts() {{
    case "$1" in
{_case(opts)}
    esac
}}
_forge_policy_takes() {{
    case "$1" in
{_case(takes)}
    esac
}}
_forge_policy_values() {{
    case "$1" in
{_case(values)}
    esac
}}
_forge_policy() {{
    # the words are walked in order, never indexed: zsh's bashcompinit numbers them from 1
    local cur="" prev="" cmd="" n=0 w skip="" candidates
    for w in "${{COMP_WORDS[@]}}"; do
        if ((n == COMP_CWORD)); then
            cur="$w"
            break
        fi
        if ((n > 0)); then
            if [[ -n $skip ]]; then
                skip=""
            elif [[ $w == -* ]]; then
                [[ " $(_forge_policy_takes "$cmd") " == *" $w "* ]] && skip=1
            elif [[ " $(_forge_policy_subs "$cmd") " == *" $w "* ]]; then
                cmd="${{cmd:+$cmd }}$w"
            fi
        fi
        prev="$w"
        n=$((n + 1))
    done
    if ((COMP_CWORD > 1)) && [[ $prev == -* ]] &&
        [[ " $(_forge_policy_takes "$cmd") " == *" $prev "* ]]; then
        candidates="$(_forge_policy_values "$cmd $prev")"
        if [[ -n $candidates ]]; then
            COMPREPLY=($(compgen -W "$candidates" -- "$cur"))
        else
            COMPREPLY=($(compgen -f -- "$cur"))
        fi
        return 0
    fi
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$(_forge_policy_opts "$cmd")" -- "$cur"))
        return 0
    fi
    candidates="$(_forge_policy_subs "$cmd") $(_forge_policy_values "$cmd")"
    if [[ -n ${{candidates// /}} ]]; then
        COMPREPLY=($(compgen -W "$candidates" -- "$cur"))
    else
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
    return 0
}}
complete -F _forge_policy {PROG}
"""


def zsh_script(tree: list[Command]) -> str:
    """The zsh completion script: the bash one through zsh's ``bashcompinit``."""
    body = bash_script(tree).split("\n", 2)[2]
    return f"""\
# {PROG} completion for zsh, generated from its argument parser by
# `{PROG} completion zsh`. Load it with: eval "$({PROG} completion zsh)" (after compinit)
autoload -U +X bashcompinit && bashcompinit
{body}"""


def _fish_quote(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def fish_script(tree: list[Command]) -> str:
    """The fish completion script: the tables as functions, one ``complete`` per word."""
    lines = [
        f"# {PROG} completion for fish, generated from its argument parser by",
        f"# `{PROG} completion fish`. Install: {PROG} completion fish > "
        f"~/.config/fish/completions/{PROG}.fish",
        "function __forge_policy_subs",
        "    switch $argv[1]",
    ]
    for c in tree:
        if c.subcommands:
            lines.append(f"        case {_fish_quote(c.path)}")
            lines.append(f"            printf '%s\\n' {_words(n for n, _ in c.subcommands)}")
    lines += ["    end", "end", "function __forge_policy_takes", "    switch $argv[1]"]
    for c in tree:
        flags = [f for o in c.options if o.takes_value for f in o.flags]
        if flags:
            lines.append(f"        case {_fish_quote(c.path)}")
            lines.append(f"            printf '%s\\n' -- {_words(flags)}")
    lines += [
        "    end",
        "end",
        "function __forge_policy_path",
        "    set -l tokens (commandline -opc)",
        "    set -e tokens[1]",
        "    set -l cmd ''",
        "    set -l skip 0",
        "    for w in $tokens",
        "        if test $skip = 1",
        "            set skip 0",
        "            continue",
        "        end",
        "        if string match -q -- '-*' $w",
        "            if contains -- $w (__forge_policy_takes $cmd)",
        "                set skip 1",
        "            end",
        "            continue",
        "        end",
        "        if contains -- $w (__forge_policy_subs $cmd)",
        '            set cmd (string trim -- "$cmd $w")',
        "        end",
        "    end",
        "    echo $cmd",
        "end",
        "function __forge_policy_at",
        "    set -l cmd (__forge_policy_path)",
        '    test "$cmd" = "$argv[1]"',
        "end",
        f"complete -c {PROG} -f",
    ]
    for c in tree:
        at = f"-n {_fish_quote('__forge_policy_at ' + _fish_quote(c.path))}"
        for name, text in c.subcommands:
            lines.append(f"complete -c {PROG} {at} -a {name} -d {_fish_quote(text)}")
        if c.positional_choices:
            lines.append(f"complete -c {PROG} {at} -a {_fish_quote(_words(c.positional_choices))}")
        for o in c.options:
            spec = []
            for flag in o.flags:
                if flag.startswith("--"):
                    spec.append(f"-l {flag[2:]}")
                elif len(flag) == 2:
                    spec.append(f"-s {flag[1]}")
            if o.choices:
                spec.append(f"-x -a {_fish_quote(_words(o.choices))}")
            elif o.takes_value:
                spec.append("-r -F")
            if o.help:
                spec.append(f"-d {_fish_quote(o.help)}")
            lines.append(f"complete -c {PROG} {at} {' '.join(spec)}")
    return "\n".join(lines) + "\n"
