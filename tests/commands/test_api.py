"""The command analyser's public API (``forge_policy.commands``): every name it lists loads, each
from the submodule that defines it, and none is shadowed by a submodule of the same name."""

from __future__ import annotations

import importlib
import pkgutil

import forge_policy.commands as commands


def test_every_public_name_loads_from_its_module() -> None:
    for name in commands.__all__:
        value = getattr(commands, name)
        module = commands._LAZY[name]
        assert getattr(importlib.import_module(module), name) is value, name
    assert set(commands._LAZY) == set(commands.__all__)
    assert set(commands.__all__) <= set(dir(commands))


def test_no_public_name_is_also_a_submodule() -> None:
    # importing a submodule sets the package attribute of its name, which would hide a lazy
    # export of that name (``from forge_policy.commands import deletes`` giving the module)
    submodules = {info.name for info in pkgutil.iter_modules(commands.__path__)}
    for name in submodules:
        importlib.import_module(f"forge_policy.commands.{name}")
    assert submodules >= {"shell", "lines", "execution", "git_argv", "deletes", "interpreters"}
    assert submodules.isdisjoint(commands.__all__)
    assert callable(commands.recursive_deletes)


# --- a reading given by the caller (issue 28: the facts lex a command once per event) ----------

#: commands with no substitution (``$(…)``, backticks): the lexer's one reading serves every
#: reader, whatever it does with substitutions
READINGS = (
    "ls -la",
    "cd src && make; cd .. && rm -rf build",
    "git commit -am 'fix: x' && git push --force",
    "git -C sub commit -F - <<EOF\nfeat: y\n\nCo-Authored-By: Claude\nEOF",
    "D=/; rm -rf $D",
    "for f in a b; do rm -rf $f; done",
    "f() { rm -rf /; }; f",
    "alias x='rm -rf /'; x",
    "echo / | xargs rm -rf",
    "find . -name '*.pyc' -exec rm {} \\;",
    "sh -c 'curl -s x | bash' 2>/dev/null",
    "bash <<E\nrm -r x\nE",
    "eval git reset --hard",
    "> .forge/x; A=1 B=2",
    "python3 -c 'import os; os.system(\"rm -rf /\")'",
    "ssh host rm -rf /",
    "sudo -u root env X=1 git clean -fdx",
    "rm -rf ${!X}",
    "c{a,o}t ~/.ssh/id_rsa",
)


def test_a_reading_given_by_the_caller_reads_as_the_readers_own() -> None:
    from forge_policy.commands.execution import runs
    from forge_policy.commands.git_commit import commits
    from forge_policy.commands.lines import simple_commands
    from forge_policy.commands.shell import iter_commands

    def described(found: list) -> list:
        return [(r.line, r.via, r.cwd, r.complete, r.words, r.targets) for r in found]

    for text in READINGS:
        read = list(iter_commands(text, "/p", distinct=True, bare=True))
        assert described(list(runs(text, "/p", read))) == described(list(runs(text, "/p")))
        argv_only = [words for words in read if words[0]]
        assert [(c.cwd, c.message, c.all) for c in commits(text, "/p", read=argv_only)] == [
            (c.cwd, c.message, c.all) for c in commits(text, "/p", distinct=True)
        ], text
        assert [
            (argv, cmd.words, at) for argv, cmd, at in simple_commands(text, "/p", bare=True)
        ] == [
            (argv, cmd.words, at)
            for argv, cmd, at in simple_commands(text, "/p", bare=True, read=read)
        ], text
