"""Interpreter one-liners and scripts, read for what reaches the shell or the filesystem.

:func:`interpreter_program` says whether a command's argv runs inline code (``python3 -c``,
``node -e``, ``perl -e``, ``ruby -e``, ``php -r``, or a program fed on standard input, such as
a here-document). :func:`analyse` reads that code for the calls that run commands or touch
files, and renders each as the POSIX shell line that does the same, so the shell model reads
it again and every rule about commands applies unchanged.

Python is read with the standard library's :mod:`ast` (imported on first use); JavaScript,
Perl, Ruby and PHP with a tokenizer-level reader (string literals with their quoting rules,
not a full parser). A sink whose argument is not a literal, code that does not parse and a
spent fact budget make the effects incomplete (``complete=False``): blocking rules read that
as a possible match (fail closed).

>>> interpreter_program(["/usr/bin/python3", "-c", "import os; os.system('ls')"], None)
('python', "import os; os.system('ls')")
>>> analyse("python", "import shutil; shutil.rmtree('/')")
Effects(commands=('rm -r -f /',), complete=True)
>>> analyse("perl", 'system("git reset --hard")')
Effects(commands=('git reset --hard',), complete=True)
>>> analyse("python", "print('rm -rf /')")
Effects(commands=(), complete=True)
"""

from __future__ import annotations

import attrs

from forge_policy.commands.interpreters._argv import interpreter_program, language_of

__all__ = ["LANGUAGES", "Effects", "analyse", "interpreter_program", "language_of"]

#: The languages :func:`analyse` reads.
LANGUAGES = frozenset({"python", "node", "perl", "ruby", "php"})


@attrs.frozen
class Effects:
    """What a program does, as shell command lines.

    ``commands``: the equivalent POSIX shell line of each effect, in the order found
    (``os.system(s)`` is ``s``, ``shutil.rmtree(p)`` is ``rm -r -f p``, ``open(p)`` is
    ``cat p``, a write ``: > p``). ``complete``: False when a sink's argument could not be
    read literally, the code does not parse, or the fact budget ran out.
    """

    commands: tuple[str, ...]
    complete: bool


def analyse(language: str, code: str) -> Effects:
    """The effects of ``code`` written in ``language`` (one of :data:`LANGUAGES`; any other
    language is unknown: no commands, incomplete).

    >>> analyse("node", "require('child_process').execSync('rm -rf ~')")
    Effects(commands=('rm -rf ~',), complete=True)
    >>> analyse("cobol", "DISPLAY 'HI'")
    Effects(commands=(), complete=False)
    """
    if language == "python":
        from forge_policy.commands.interpreters import _python as reader
    elif language == "node":
        from forge_policy.commands.interpreters import _node as reader  # type: ignore[no-redef]
    elif language == "perl":
        from forge_policy.commands.interpreters import _perl as reader  # type: ignore[no-redef]
    elif language == "ruby":
        from forge_policy.commands.interpreters import _ruby as reader  # type: ignore[no-redef]
    elif language == "php":
        from forge_policy.commands.interpreters import _php as reader  # type: ignore[no-redef]
    else:
        return Effects((), False)
    commands, complete = reader.read(code)
    return Effects(commands, complete)
