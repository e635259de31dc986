"""Interpreter one-liners and scripts: which argv runs inline code, and what that code does to
the shell and the filesystem, rendered as shell lines.

Each table holds both directions: code whose effects must be seen (a block rule downstream can
match them) and code that must stay quiet (data that merely looks like a command).
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forge_policy.commands.interpreters import Effects, analyse, interpreter_program

# -- which argv runs inline code --------------------------------------------------------------

PROGRAMS = [
    (["python3", "-c", "print(1)"], None, ("python", "print(1)")),
    (["python", "-Bc", "print(1)"], None, ("python", "print(1)")),
    (["python3.12", "-W", "ignore", "-c", "x"], None, ("python", "x")),
    (["/usr/bin/python3", "-cimport os"], None, ("python", "import os")),
    (["python3", "-"], "print(2)", ("python", "print(2)")),
    (["python3", "-u"], "print(3)", ("python", "print(3)")),
    (["python3"], None, None),
    (["python3", "script.py"], "stdin data", None),
    (["python3", "-m", "http.server"], None, None),
    (["node", "-e", "1"], None, ("node", "1")),
    (["node", "--eval=2"], None, ("node", "2")),
    (["nodejs", "-p", "3"], None, ("node", "3")),
    (["node", "-r", "ts-node/register", "-e", "4"], None, ("node", "4")),
    (["/usr/local/bin/node"], "5", ("node", "5")),
    (["node", "app.js"], None, None),
    (["perl", "-e", "print 1"], None, ("perl", "print 1")),
    (["perl", "-wle", "a", "-e", "b"], None, ("perl", "a\nb")),
    (["perl", "-MFile::Path", "-e", "rmtree 1"], None, ("perl", "rmtree 1")),
    (["perl", "-I", "lib", "-E", "say 1"], None, ("perl", "say 1")),
    (["perl", "-pi.bak", "-e", "s/a/b/", "f.txt"], None, ("perl", "s/a/b/")),
    (["perl"], "system 1", ("perl", "system 1")),
    (["perl", "script.pl"], None, None),
    (["ruby", "-e", "puts 1"], None, ("ruby", "puts 1")),
    (["ruby", "-r", "fileutils", "-we", "x"], None, ("ruby", "x")),
    (["ruby", "-"], "y", ("ruby", "y")),
    (["ruby", "app.rb"], None, None),
    (["php", "-r", "echo 1;"], None, ("php", "echo 1;")),
    (["php", "-d", "x=1", "-r", "echo 2;"], None, ("php", "echo 2;")),
    (["php"], "<?php system('ls'); ?>", ("php", " system('ls'); ;\n")),
    (["php", "-l", "x.php"], None, None),
    (["bash", "-c", "ls"], None, None),
    (["pythonista", "-c", "x"], None, None),
    ([], None, None),
]


@pytest.mark.parametrize(("argv", "stdin", "expected"), PROGRAMS)
def test_interpreter_program(
    argv: list[str], stdin: str | None, expected: tuple[str, str] | None
) -> None:
    assert interpreter_program(argv, stdin) == expected


# -- effects, both directions -----------------------------------------------------------------

PYTHON = [
    # shells and programs
    ("import os; os.system('rm -rf /')", ("rm -rf /",)),
    ("import os as o; o.popen('git reset --hard').read()", ("git reset --hard",)),
    ("__import__('os').system('rm -rf ~')", ("rm -rf ~",)),
    ("import importlib; importlib.import_module('os').system('id')", ("id",)),
    ("from os import system as s\ns('ls')", ("ls",)),
    ("from os import *\nsystem('whoami')", ("whoami",)),
    ("import subprocess\nsubprocess.run(['git', 'reset', '--hard'])", ("git reset --hard",)),
    ("import subprocess as sp; sp.call('rm -rf build', shell=True)", ("rm -rf build",)),
    ("import subprocess; subprocess.Popen(args='make clean', shell=True)", ("make clean",)),
    ("import subprocess, shlex; subprocess.run(shlex.split('rm -rf /'))", ("rm -rf /",)),
    ("import subprocess; subprocess.check_output(('ls', '-la'))", ("ls -la",)),
    ("import os; os.execvp('git', ['git', 'push', '--force'])", ("git push --force",)),
    ("import os; os.execl('/bin/rm', 'rm', '-rf', '/')", ("/bin/rm -rf /",)),
    ("import os; os.spawnlp(os.P_WAIT, 'rm', 'rm', '-r', 'x')", ("rm -r x",)),
    ("cmd = 'rm -rf /'\nimport os\nos.system(cmd)", ("rm -rf /",)),
    ("import os; d = '/'; os.system(f'rm -rf {d}')", ("rm -rf /",)),
    ("import os; os.system('rm -rf %s' % '/')", ("rm -rf /",)),
    ("import os; os.system('git {} --{}'.format('reset', 'hard'))", ("git reset --hard",)),
    ("import os; os.system(' '.join(['rm', '-rf', '/']))", ("rm -rf /",)),
    ("exec(\"import os; os.system('ls')\")", ("ls",)),
    ("import os; run = os.system; run('ls')", ("ls",)),
    ("getattr(__import__('os'), 'system')('id')", ("id",)),
    # files
    ("import shutil; shutil.rmtree('/')", ("rm -r -f /",)),
    ("from shutil import rmtree\nrmtree('/home/user')", ("rm -r -f /home/user",)),
    ("import os, shutil; shutil.rmtree(os.path.expanduser('~'))", ("rm -r -f ~",)),
    ("import os; os.remove('-rf')", ("rm ./-rf",)),
    ("from pathlib import Path; Path('a.txt').unlink()", ("rm a.txt",)),
    ("import pathlib; pathlib.Path('d').rmdir()", ("rmdir d",)),
    ("import json; json.load(open('package.json'))", ("cat package.json",)),
    ("open('out.txt', 'w').write('x')", (": > out.txt",)),
    ("open('log', mode='a')", (": > log",)),
    ("open('db', 'r+')", ("cat db", ": > db")),
    (
        "from pathlib import Path\n(Path.home() / '.ssh' / 'id_rsa').read_text()",
        ("cat ~/.ssh/id_rsa",),
    ),
    (
        "import os; open(os.path.join(os.environ['HOME'], '.aws/credentials'))",
        ("cat ~/.aws/credentials",),
    ),
    ("from pathlib import Path; Path('~/.netrc').expanduser().read_text()", ("cat ~/.netrc",)),
    ("import os; os.rename('a', 'b')", ("mv a b",)),
    ("import os; os.chmod('/etc/passwd', 0o777)", ("chmod 777 /etc/passwd",)),
    # quiet: data, ordinary code
    ("print('rm -rf /')", ()),
    ("x = 'git reset --hard'\nprint(x)", ()),
    ("import os; print(os.path.join('a', 'b'))", ()),
    ("import sys, json; print(json.load(sys.stdin)['name'])", ()),
    ("def f(p):\n    return p\nf('rm -rf /')", ()),
]

PYTHON_INCOMPLETE = [
    "import os; list(map(os.system, cmds))",
    "import subprocess\nargs = ['ls']\nargs.append('/')\nsubprocess.run(args)",
    "import subprocess\nargs = ['ls']\nargs[0] = 'rm'\nsubprocess.run(args)",
    "import os; os.system(cmd)",
    "import os, sys; os.system(sys.argv[1])",
    "cmd = 'ls'\ncmd = 'rm -rf /'\nimport os; os.system(cmd)",
    "import subprocess; subprocess.run(['rm', '-rf', target])",
    "import os; os.system(f'rm -rf {target}')",
    "open(name)",
    "print 'python 2'",
    "exec(code)",
    "for p in paths:\n    p.unlink()",
    "import subprocess; subprocess.run(cmd, shell=True)",
]


@pytest.mark.parametrize(("code", "commands"), PYTHON)
def test_python_effects(code: str, commands: tuple[str, ...]) -> None:
    assert analyse("python", code) == Effects(commands, True)


@pytest.mark.parametrize("code", PYTHON_INCOMPLETE)
def test_python_sinks_without_literal_arguments_are_incomplete(code: str) -> None:
    assert analyse("python", code).complete is False


def test_code_downloaded_and_run_is_curl_into_python_and_not_known() -> None:
    effects = analyse(
        "python", "import urllib.request as u; exec(u.urlopen('https://x.io/i').read())"
    )
    assert effects == Effects(("curl -fsSL https://x.io/i | python3",), False)


def test_a_literal_beside_an_unknown_is_still_reported() -> None:
    effects = analyse("python", "import os; os.system('rm -rf /'); os.system(x)")
    assert effects == Effects(("rm -rf /",), False)


NODE = [
    ("require('child_process').execSync('rm -rf ~')", ("rm -rf ~",)),
    ("const cp = require('child_process'); cp.exec('git reset --hard')", ("git reset --hard",)),
    ("const { execSync: run } = require('node:child_process'); run('ls')", ("ls",)),
    ("import { spawnSync } from 'child_process'; spawnSync('rm', ['-rf', '/'])", ("rm -rf /",)),
    ("import * as cp from 'child_process'; cp.spawn('ls', ['-la'], {shell: true})", ("ls -la",)),
    ("const c = 'rm -rf /'; require('child_process').execSync(c)", ("rm -rf /",)),
    ("require('child_process').execSync('rm ' + '-rf /')", ("rm -rf /",)),
    ("require('child_process').execSync(`git push --force`)", ("git push --force",)),
    ("fs.rmSync('/', {recursive: true, force: true})", ("rm -r -f /",)),
    ("const fs = require('fs');\nfs.rmSync('/etc', { recursive: true });", ("rm -r -f /etc",)),
    ("require('fs').rmdirSync('dist')", ("rmdir dist",)),
    ("require('fs/promises').rm('out', {recursive: true})", ("rm -r -f out",)),
    ("require('fs').unlinkSync('a.txt')", ("rm a.txt",)),
    ("const o = {recursive: true}; fs.rmSync('/srv', o)", ("rm -r -f /srv",)),
    ("fs.readFileSync(path.join(os.homedir(), '.ssh', 'id_rsa'))", ("cat ~/.ssh/id_rsa",)),
    ("fs.writeFileSync('out.json', '{}')", (": > out.json",)),
    ("eval(\"require('child_process').execSync('id')\")", ("id",)),
    ("something.execSync('rm -rf /')", ("rm -rf /",)),
    # quiet
    ("console.log('rm -rf /')", ()),
    ("const s = /'/; console.log(s, \"child_process.execSync('x')\")", ()),
    ("const re = /a/g; re.exec('rm -rf /')", ()),
    ("// require('child_process').execSync('rm -rf /')\nconsole.log(1)", ()),
    ("const x = 1 + 2;\nconsole.log(x);", ()),
]

NODE_INCOMPLETE = [
    "files.forEach(require('fs').unlinkSync)",
    "const a = ['ls']; a.push('/'); require('child_process').spawnSync('rm', a)",
    "rm -rf /",
    "require('child_process').execSync(process.argv[2])",
    "require('child_process').execSync(`rm -rf ${dir}`)",
    "console.log('unclosed)",
    "eval(code)",
]


@pytest.mark.parametrize(("code", "commands"), NODE)
def test_node_effects(code: str, commands: tuple[str, ...]) -> None:
    assert analyse("node", code) == Effects(commands, True)


@pytest.mark.parametrize("code", NODE_INCOMPLETE)
def test_node_incomplete(code: str) -> None:
    assert analyse("node", code).complete is False


PERL = [
    ('system("git reset --hard")', ("git reset --hard",)),
    ("system('rm', '-rf', '/')", ("rm -rf /",)),
    ("system 'rm -rf /home/user';", ("rm -rf /home/user",)),
    ("exec qw(git push --force)", ("git push --force",)),
    ("my $out = `rm -rf /`;", ("rm -rf /",)),
    ("$x = qx{git clean -fdx};", ("git clean -fdx",)),
    ('my $d = "/tmp/x"; unlink $d, "b";', ("rm /tmp/x", "rm b")),
    ("use File::Path qw(rmtree); rmtree('/')", ("rm -r -f /",)),
    ("File::Path::remove_tree('/var', {verbose => 1})", ("rm -r -f /var",)),
    ('open(my $fh, "<", "$ENV{HOME}/.ssh/id_rsa")', ("cat ~/.ssh/id_rsa",)),
    ('open(F, "rm -rf / |")', ("rm -rf /",)),
    ('open(my $p, "-|", "git", "status")', ("git status",)),
    ('system("rm -rf /") if 1;', ("rm -rf /",)),
    ('eval "system(q{id})"', ("id",)),
    # quiet
    ("print 'hello'", ()),
    ('print "rm -rf /\\n";', ()),
    ("print if /system\\(/", ()),
    ("s/system/exec/g; print", ()),
    ("# system('rm -rf /')\nprint 1", ()),
    ("print -s 'file'", ()),
    ("my %h = (system => 1); print $h{system}", ()),
]

PERL_INCOMPLETE = [
    'my $c = "rm"; $c .= " -rf /"; system($c)',
    'my @a = ("ls"); push @a, "/"; system(@a)',
    "rm -rf /",
    "system($cmd)",
    'system("rm -rf $dir")',
    "print 'x",
    "unlink",
]


@pytest.mark.parametrize(("code", "commands"), PERL)
def test_perl_effects(code: str, commands: tuple[str, ...]) -> None:
    assert analyse("perl", code) == Effects(commands, True)


@pytest.mark.parametrize("code", PERL_INCOMPLETE)
def test_perl_incomplete(code: str) -> None:
    assert analyse("perl", code).complete is False


RUBY = [
    ('system("rm -rf /")', ("rm -rf /",)),
    ('system "git", "reset", "--hard"', ("git reset --hard",)),
    ("`rm -rf /home/user`", ("rm -rf /home/user",)),
    ("%x(git clean -fd)", ("git clean -fd",)),
    ("exec('ls')", ("ls",)),
    ("Kernel.system({'A' => '1'}, 'make')", ("make",)),
    ("IO.popen(['git', 'push', '-f']).read", ("git push -f",)),
    ("IO.popen('ls', 'r+')", ("ls",)),
    ("require 'open3'; Open3.capture2('id')", ("id",)),
    ("require 'fileutils'\nFileUtils.rm_rf('/')", ("rm -r -f /",)),
    ("FileUtils.rm_rf(%w[/etc /var])", ("rm -r -f /etc", "rm -r -f /var")),
    ('FileUtils.rm_rf(File.expand_path("~"))', ("rm -r -f ~",)),
    ("File.delete('a.txt')", ("rm a.txt",)),
    ('File.read(File.join(Dir.home, ".ssh", "id_rsa"))', ("cat ~/.ssh/id_rsa",)),
    ("File.write('out', 'x')", (": > out",)),
    ('d = "/srv"\nFileUtils.remove_dir(d)', ("rm -r -f /srv",)),
    # quiet
    ("puts 'rm -rf /'", ()),
    ('puts "hello world"', ()),
    ("# system('rm -rf /')\nputs 1", ()),
    ("x = 10 % 3; puts x", ()),
    ("puts 'a'.gsub(/system/, 'x')", ()),
]

RUBY_INCOMPLETE = [
    'c = "rm"; c << " -rf /"; system(c)',
    'c = "ls"; c.gsub!("ls", "rm -rf /"); system(c)',
    'c = ["ls"]; c[0] = "rm"; system(*c)',
    "rm -rf /",
    "system(cmd)",
    'system("rm -rf #{dir}")',
    "`#{cmd}`",
    "puts 'x",
]


@pytest.mark.parametrize(("code", "commands"), RUBY)
def test_ruby_effects(code: str, commands: tuple[str, ...]) -> None:
    assert analyse("ruby", code) == Effects(commands, True)


@pytest.mark.parametrize("code", RUBY_INCOMPLETE)
def test_ruby_incomplete(code: str) -> None:
    assert analyse("ruby", code).complete is False


PHP = [
    ("echo shell_exec('git reset --hard');", ("git reset --hard",)),
    ("system('rm -rf /');", ("rm -rf /",)),
    ('passthru("ls -la");', ("ls -la",)),
    ("exec('git status', $out, $code);", ("git status",)),
    ("echo `id`;", ("id",)),
    ("$c = 'rm -rf /'; exec($c);", ("rm -rf /",)),
    ("SYSTEM('whoami');", ("whoami",)),
    ("\\system('uptime');", ("uptime",)),
    ("unlink(getenv('HOME') . '/.bashrc');", ("rm ~/.bashrc",)),
    ("echo file_get_contents('/etc/passwd');", ("cat /etc/passwd",)),
    ("file_put_contents('x.txt', 'y');", (": > x.txt",)),
    ("pcntl_exec('/bin/rm', array('-rf', '/'));", ("/bin/rm -rf /",)),
    ("eval(\"system('id');\");", ("id",)),
    # quiet
    ("echo 'rm -rf /';", ()),
    ('echo "hi";', ()),
    ("$o->system('x');", ()),
    ("// system('rm -rf /')\necho 1;", ()),
]

PHP_INCOMPLETE = [
    "$a = ['ls']; $a[] = '/'; pcntl_exec('/bin/rm', $a);",
    "$a = ['ls']; array_push($a, '/'); pcntl_exec('/bin/rm', $a);",
    "system($cmd);",
    'exec("rm -rf $dir");',
    "echo 'x",
    "system(",
]


@pytest.mark.parametrize(("code", "commands"), PHP)
def test_php_effects(code: str, commands: tuple[str, ...]) -> None:
    assert analyse("php", code) == Effects(commands, True)


@pytest.mark.parametrize("code", PHP_INCOMPLETE)
def test_php_incomplete(code: str) -> None:
    assert analyse("php", code).complete is False


def test_an_unknown_language_is_incomplete() -> None:
    assert analyse("lua", "os.execute('rm -rf /')") == Effects((), False)


# -- here-documents: the whole program ---------------------------------------------------------


def test_a_program_on_standard_input_is_read_like_inline_code() -> None:
    program = interpreter_program(["python3"], "import shutil\nshutil.rmtree('/tmp/test')\n")
    assert program is not None
    assert analyse(*program) == Effects(("rm -r -f /tmp/test",), True)


@pytest.mark.parametrize(
    ("language", "code", "commands"),
    [
        ("perl", "print <<'EOT';\nsystem('rm -rf /')\nEOT\nsystem('ls');\n", ("ls",)),
        ("ruby", "puts <<~EOS\n  `rm -rf /`\nEOS\nsystem('ls')\n", ("ls",)),
        ("php", "echo <<<'EOT'\nsystem('rm -rf /');\nEOT;\nsystem('ls');\n", ("ls",)),
    ],
)
def test_here_documents_inside_programs_are_data(
    language: str, code: str, commands: tuple[str, ...]
) -> None:
    assert analyse(language, code) == Effects(commands, True)


# -- size: linear, and bounded by the budget ---------------------------------------------------


SINK_AFTER = {
    "python": ("import os\nx = '{}'\nos.system('rm -rf /')\n", "# {}\n"),
    "node": ("const x = '{}';\nrequire('child_process').execSync('rm -rf /');\n", "// {}\n"),
    "perl": ("my $x = '{}';\nsystem('rm -rf /');\n", "# {}\n"),
    "ruby": ("x = '{}'\nsystem('rm -rf /')\n", "# {}\n"),
    "php": ("$x = '{}';\nsystem('rm -rf /');\n", "// {}\n"),
}


@pytest.mark.parametrize("language", sorted(SINK_AFTER))
def test_a_sink_after_a_megabyte_of_string_or_comments_is_found(language: str) -> None:
    program, comment = SINK_AFTER[language]
    padding = "\\\\a" * 350_000  # 1 MB of escaped backslashes and letters
    assert analyse(language, program.format(padding)) == Effects(("rm -rf /",), True)
    lines = comment.format("system('x')") * 50_000  # about 1 MB of comments
    assert analyse(language, lines + program.format("a")) == Effects(("rm -rf /",), True)


@pytest.mark.parametrize("language", ["python", "node", "perl", "ruby", "php"])
def test_many_ordinary_statements_are_read(language: str) -> None:
    line = {
        "python": "print('x' * 3)\n",
        "node": "console.log('x');\n",
        "perl": "print 'x';\n",
        "ruby": "puts 'x'\n",
        "php": "echo 'x';\n",
    }[language]
    effects = analyse(language, line * 20000)
    assert effects == Effects((), True)


def test_deep_nesting_is_incomplete_not_an_error() -> None:
    assert analyse("python", "(" * 5000 + ")" * 5000).complete is False
    assert analyse("node", "(" * 5000 + ")" * 5000) == Effects((), True)


# -- never raises ------------------------------------------------------------------------------

_PIECES = st.sampled_from(
    [*"abcrm -rf/'\"`$@%{}()[]<>;,.=+\\\n#qxw:?!~|&0", "<<EOF\n", "\nEOF\n", "<<<'X'\n", "${",
     "#{", "qw(", "%x(", "system(", "os.system(", "import os\n", "=begin\n", "/*", "<?php ",
     "require('child_process').execSync(", "FileUtils.rm_rf(", "s{", "}{", "Path("]
)  # fmt: skip


@given(st.sampled_from(["python", "node", "perl", "ruby", "php"]), st.lists(_PIECES, max_size=40))
def test_any_text_gives_effects_never_an_error(language: str, pieces: list[str]) -> None:
    effects = analyse(language, "".join(pieces))
    assert isinstance(effects.complete, bool)
    assert all(isinstance(line, str) and line.strip() for line in effects.commands)


_ARGS = st.lists(st.sampled_from(["-c", "-e", "-we", "-", "--", "-m", "x", "-rfoo", "-W", ""]))


@given(
    st.sampled_from(["python3", "node", "perl", "ruby", "php", "/usr/bin/python3"]),
    _ARGS,
    st.none() | st.text(max_size=5),
)
def test_any_argv_is_read_without_error(program: str, args: list[str], stdin: str | None) -> None:
    found = interpreter_program([program, *args], stdin)
    assert found is None or (found[0] in {"python", "node", "perl", "ruby", "php"})
