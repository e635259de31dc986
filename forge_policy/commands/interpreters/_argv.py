"""Which argv runs inline code, and what code: the option syntax of each interpreter.

>>> interpreter_program(["perl", "-we", "print 1"], None)
('perl', 'print 1')
>>> interpreter_program(["python3", "script.py"], "ignored")
>>> interpreter_program(["node"], "console.log(1)")
('node', 'console.log(1)')
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    Reader = Callable[[list[str], str | None], str | None]

_NAMES = (
    (re.compile(r"python(?:[23](?:\.\d{1,3})?)?|pypy3?"), "python"),
    (re.compile(r"node(?:js)?"), "node"),
    (re.compile(r"perl(?:5(?:\.\d{1,3}){0,2})?"), "perl"),
    (re.compile(r"ruby(?:\d(?:\.\d{1,3}){0,2})?"), "ruby"),
    (re.compile(r"php(?:\d(?:\.\d{1,3})?)?(?:-cli)?"), "php"),
)


def _stdin(operands: list[str], stdin: str | None) -> str | None:
    """No operand, or ``-``: the program is standard input."""
    if operands and operands[0] != "-":
        return None  # a script file: not read
    return stdin


def _python(args: list[str], stdin: str | None) -> str | None:
    at = 0
    while at < len(args):
        arg = args[at]
        at += 1
        if arg == "-" or not arg.startswith("-"):
            return _stdin([arg], stdin)
        if arg == "--":
            return _stdin(args[at : at + 1], stdin)
        if arg.startswith("--"):
            if arg == "--check-hash-based-pycs":
                at += 1
            continue
        for index, flag in enumerate(arg[1:], 1):
            rest = arg[index + 1 :]
            if flag == "c":
                return rest or (args[at] if at < len(args) else None)
            if flag == "m":
                return None  # a module: not read
            if flag in "WX":
                at += 0 if rest else 1
                break
    return stdin


def _node(args: list[str], stdin: str | None) -> str | None:
    with_value = {"-r", "--require", "--import", "--loader", "--experimental-loader", "-C"}
    with_value |= {"--conditions", "--input-type", "--env-file", "--title", "--inspect-port"}
    at = 0
    while at < len(args):
        arg = args[at]
        at += 1
        name, equals, value = arg.partition("=")
        if name in ("-e", "--eval", "-p", "--print", "-pe", "-ep"):
            if equals:
                return value
            return args[at] if at < len(args) else None
        if arg == "-" or not arg.startswith("-"):
            return _stdin([arg], stdin)
        if arg == "--":
            return _stdin(args[at : at + 1], stdin)
        if name in with_value and not equals:
            at += 1
    return stdin


def _clustered(
    args: list[str], code_flags: str, rest_flags: str, next_flags: str
) -> tuple[list[str], list[str]]:
    """Perl- and Ruby-style clustered switches: ``(code pieces, operands)``. A code flag
    takes the rest of its word or the next word; ``rest_flags`` take the rest of the word;
    ``next_flags`` the rest of the word or, when it is empty, the next word."""
    codes: list[str] = []
    at = 0
    while at < len(args):
        arg = args[at]
        at += 1
        if arg == "--":
            return codes, args[at:]
        if arg == "-" or not arg.startswith("-"):
            return codes, args[at - 1 :]
        if arg.startswith("--"):
            continue
        index = 1
        while index < len(arg):
            flag, rest = arg[index], arg[index + 1 :]
            index += 1
            if flag in code_flags:
                if rest:
                    codes.append(rest)
                elif at < len(args):
                    codes.append(args[at])
                    at += 1
                break
            if flag in next_flags:
                at += 0 if rest else 1
                break
            if flag in rest_flags:
                break
            if flag in "0l":  # optional octal digits, then more switches
                while index < len(arg) and arg[index] in "01234567":
                    index += 1
    return codes, []


def _perl(args: list[str], stdin: str | None) -> str | None:
    codes, operands = _clustered(args, "eE", "iMmxdDCF", "I")
    if codes:
        return "\n".join(codes)
    return _stdin(operands, stdin)


def _ruby(args: list[str], stdin: str | None) -> str | None:
    codes, operands = _clustered(args, "e", "FixWKT", "rICE")
    if codes:
        return "\n".join(codes)
    return _stdin(operands, stdin)


_PHP_TAG = re.compile(r"<\?(?:php\b|=)?+")


def php_template(text: str) -> str:
    """The code of a PHP file: what its ``<?php … ?>`` sections hold (the rest is printed).

    >>> php_template("a <?php system('ls'); ?> b <?= shell_exec('id') ?>")
    " system('ls'); ;\\necho  shell_exec('id') ;\\n"
    """
    out: list[str] = []
    pos = 0
    while (tag := _PHP_TAG.search(text, pos)) is not None:
        end = text.find("?>", tag.end())
        body = text[tag.end() :] if end < 0 else text[tag.end() : end]
        out.append(("echo " if tag.group() == "<?=" else "") + body + ";\n")
        if end < 0:
            break
        pos = end + 2
    return "".join(out)


def _php(args: list[str], stdin: str | None) -> str | None:
    codes: list[str] = []
    at = 0
    while at < len(args):
        arg = args[at]
        at += 1
        if arg == "--":
            break
        if not arg.startswith("-") or arg == "-":
            if codes:
                break
            return None if arg != "-" else (php_template(stdin) if stdin is not None else None)
        flag, rest = arg[1:2], arg[2:]
        if flag in "rBRE":
            if rest:
                codes.append(rest)
            elif at < len(args):
                codes.append(args[at])
                at += 1
        elif flag in "fFlsivmhw":
            return None  # a file, lint, highlighting or information: no inline code runs
        elif flag in "dcztS" and not rest:
            at += 1
    if codes:
        return ";\n".join(codes)
    return php_template(stdin) if stdin is not None else None


_READERS: dict[str, Reader] = {
    "python": _python,
    "node": _node,
    "perl": _perl,
    "ruby": _ruby,
    "php": _php,
}


def language_of(program: str) -> str | None:
    """The language an interpreter's name (or path) runs.

    >>> language_of("/usr/bin/python3.12"), language_of("nodejs"), language_of("bash")
    ('python', 'node', None)
    """
    base = program.rpartition("/")[2]
    for pattern, language in _NAMES:
        if pattern.fullmatch(base):
            return language
    return None


def interpreter_program(argv: Sequence[str], stdin: str | None) -> tuple[str, str] | None:
    """``(language, code)`` when ``argv`` runs inline code, else None.

    Inline code is ``python -c CODE``, ``node -e/--eval/-p/--print CODE``, ``perl -e/-E CODE``
    (clustered: ``-we``), ``ruby -e CODE``, ``php -r CODE``, or, when ``stdin`` is given
    (a here-document or here-string), the program that reads its code from standard input
    (``python -``, or no script operand). The interpreter may be named by a path. A script
    file operand is not read: None.

    >>> interpreter_program(["node", "-e", "fs.rmSync('/x')"], None)
    ('node', "fs.rmSync('/x')")
    >>> interpreter_program(["python3", "-"], "print(1)")
    ('python', 'print(1)')
    >>> interpreter_program(["ruby", "-rfileutils", "-e", "FileUtils.rm_rf('/')"], None)
    ('ruby', "FileUtils.rm_rf('/')")
    >>> interpreter_program(["python3"], None)
    """
    if not argv:
        return None
    language = language_of(argv[0])
    if language is None:
        return None
    code = _READERS[language](list(argv[1:]), stdin)
    return None if code is None else (language, code)
