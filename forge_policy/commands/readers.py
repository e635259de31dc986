"""Which files a reading command reads: ``cat``, ``head``, ``grep``, ``awk``, ``tar``, ``curl -T``….

:func:`reader_operands` gives the file operands of one command's argv (as the command model
gives it: basename first, wrappers stripped), knowing each reader's options that take a value
(``head -n 5``), the ones whose value is itself a file read (``grep -f FILE``), the program or
pattern that comes first (``awk PROGRAM FILE``), and a copier's destination (``cp a b DIR``).
"""

from __future__ import annotations

import os

# Reading commands. Each one's options that take a separate value; "*" marks a value that is
# itself a file the command reads.
# fmt: off
_READERS: dict[str, frozenset[str]] = {
    name: frozenset(opts.split()) for name, opts in {
        "cat": "", "tac": "", "nl": "-b -d -f -h -i -l -n -s -v -w", "less": "-b -h -j -p -x -y",
        "more": "", "most": "", "head": "-n -c", "tail": "-n -c -s --pid", "bat": "-l -r -H -m",
        "batcat": "-l -r -H -m", "base64": "-w", "base32": "-w", "xxd": "-l -s -c -g -o -n",
        "od": "-N -j -t -A -w", "hexdump": "-n -s -e -f*", "hd": "-n -s -e -f*", "strings": "-n",
        "source": "", ".": "", "diff": "-U -C -L -I -x -X*", "cmp": "-i -n", "zcat": "",
        "zless": "", "bzcat": "", "xzcat": "", "view": "", "ssh-add": "",
        "cp": "-t -S", "scp": "-c -F -i* -J -l -o -P -S", "rsync": "-e",
        "grep": "-e -f* -m -A -B -C -d -D", "egrep": "-e -f* -m -A -B -C", "zgrep": "-e -f* -m",
        "fgrep": "-e -f* -m -A -B -C", "rg": "-e -f* -g -t -T -m -A -B -C -j", "ag": "-G -A -B",
        "ssh": "-b -c -E -F -i* -J -l -L -m -o -p -R -W",
        "curl": "-T* --upload-file* -d --data --data-binary --data-urlencode -F --form -H -o -u "
        "-X -A -e", "wget": "-O -o --post-file* --body-file*",
        # programs that take a script or filter first, then the files they read
        "awk": "-F -v -f*", "gawk": "-F -v -f*", "mawk": "-F -v -f*", "nawk": "-F -v -f*",
        "sed": "-e -f* -l", "gsed": "-e -f* -l", "jq": "-f* --arg --argjson --slurpfile",
        "yq": "-f* --arg",
        # filters and tools that read the files they are given
        "sort": "-k -t -o -S -T", "uniq": "-f -s -w", "wc": "", "cut": "-d -f -b -c",
        "paste": "-d", "column": "-s -t -c", "fold": "-w", "fmt": "-w", "rev": "", "comm": "",
        "join": "-t -1 -2 -j -o", "split": "-l -b -n", "iconv": "-f -t", "expand": "-t",
        "gzip": "-S", "bzip2": "", "xz": "", "zstd": "-o", "zip": "-P", "7z": "",
        "tar": "-f* --file* -C -T* --files-from* -X* --exclude-from* --exclude",
        "openssl": "-in* -out -inkey* -passin -key* -config*", "gpg": "-o --output -r",
        "vim": "-c", "vi": "-c", "nvim": "-c", "nano": "", "emacs": "", "code": "",
        "md5sum": "", "sha1sum": "", "sha256sum": "", "sha512sum": "", "cksum": "", "sum": "",
        "python": "", "python3": "",
    }.items()
}
# fmt: on
# the first operand is the program (awk, sed, jq) unless a script flag gave it
_PROGRAM_FIRST = frozenset({"awk", "gawk", "mawk", "nawk", "sed", "gsed", "jq", "yq"})
_SCRIPT_FLAGS = ("-e", "-f", "--regexp", "--file", "--expression")
_COPIERS = frozenset({"cp", "scp", "rsync"})
#: the grep family: a pattern first, then the files or folders searched (facts.files reads a
#: folder-level search with it)
GREPS = frozenset({"grep", "egrep", "fgrep", "zgrep", "rg", "ag"})
_NO_OPERANDS = frozenset({"ssh", "curl", "wget", "openssl"})
_CURL_DATA = frozenset({"-d", "--data", "--data-binary", "--data-urlencode", "-F", "--form"})


def reader_operands(argv: list[str]) -> list[str]:
    """The file operands of a reading command, or ``[]`` for any other command.

    >>> reader_operands(["head", "-n", "5", ".env"]), reader_operands(["cp", "a", "b", "dir"])
    (['.env'], ['a', 'b'])
    >>> reader_operands(["grep", "-r", "key", "x.cfg"]), reader_operands(["rm", "id_rsa"])
    (['x.cfg'], [])
    """
    name = os.path.basename(argv[0])
    if name in _SUBCOMMAND_READERS:
        return _subcommand_reads(argv, _SUBCOMMAND_READERS[name])
    opts = _READERS.get(name)
    if opts is None:
        return []
    if name == "tar" and len(argv) > 1 and argv[1][:1].isalpha():
        # old-style bundled options (tar czf out.tgz dir): each letter an option, values after
        argv = [argv[0], *(f"-{letter}" for letter in argv[1]), *argv[2:]]
    operands: list[str] = []
    files: list[str] = []
    pattern_given = target_dir = False
    i = 1
    while i < len(argv):
        arg = argv[i]
        i += 1
        if arg == "--":
            operands.extend(argv[i:])
            break
        if not arg.startswith("-") or arg == "-":
            operands.append(arg)
            continue
        if arg.startswith("--"):
            flag, eq, attached = arg.partition("=")
            value = attached if eq else None
        elif arg in opts or f"{arg}*" in opts:  # a single-dash long option: openssl -in
            flag, value = arg, None
        else:
            flag, value = arg[:2], arg[2:] or None
        pattern_given = pattern_given or flag in _SCRIPT_FLAGS
        target_dir = target_dir or flag in ("-t", "--target-directory")
        if flag not in opts and f"{flag}*" not in opts:
            continue
        if value is None:
            if i >= len(argv):
                break
            value, i = argv[i], i + 1
        if f"{flag}*" in opts:
            files.append(value)
        elif name == "curl" and flag in _CURL_DATA and "@" in value.replace("<", "@"):
            files.append(value.replace("<", "@").split("@", 1)[1].split(";", 1)[0])
    if name in _NO_OPERANDS:
        return files
    if (name in GREPS or name in _PROGRAM_FIRST) and not pattern_given:
        operands = operands[1:]
    if name in ("python", "python3"):
        operands = _python_reads(argv)
    if name in _COPIERS and not target_dir:
        operands = operands[:-1]
    return files + [op for op in operands if op != "-"]


#: programs whose subcommands read a file named by an option: program -> subcommand -> its
#: options that take a value, "*" marking a file it reads. ``forge-policy explain -f FILE``
#: reads FILE (its stdin, ``< FILE``, is a redirect every command's reading counts).
_SUBCOMMAND_READERS: dict[str, dict[str, frozenset[str]]] = {
    "forge-policy": {"explain": frozenset({"-f*", "--file*", "--session"})},
}


def _subcommand_reads(argv: list[str], table: dict[str, frozenset[str]]) -> list[str]:
    """The files a subcommand reads, its options parsed as argparse does: ``-f X``, ``-fX``,
    ``-f=X``, ``--file X``, ``--file=X`` and an unambiguous prefix (``--fi X``).

    >>> _subcommand_reads(["forge-policy", "explain", "--json", "--fil=a"], _SUBCOMMAND_READERS[
    ...     "forge-policy"]), reader_operands(["forge-policy", "explain", "-f~/.ssh/id_rsa"])
    (['a'], ['~/.ssh/id_rsa'])
    >>> reader_operands(["forge-policy", "status", "-f", "x"])
    []
    """
    opts = table.get(argv[1]) if len(argv) > 1 else None
    if opts is None:
        return []
    longs = [o.rstrip("*") for o in opts if o.startswith("--")]
    files: list[str] = []
    i = 2
    while i < len(argv):
        arg = argv[i]
        i += 1
        if arg == "--":
            break
        if not arg.startswith("-") or arg == "-":
            continue
        if arg.startswith("--"):
            flag, eq, attached = arg.partition("=")
            named = [o for o in longs if o.startswith(flag)]
            flag = flag if flag in longs else named[0] if len(named) == 1 else flag
            value = attached if eq else None
        else:
            flag, value = arg[:2], arg[2:].removeprefix("=") or None
        if flag not in opts and f"{flag}*" not in opts:
            continue
        if value is None:
            if i >= len(argv):
                break
            value, i = argv[i], i + 1
        if f"{flag}*" in opts:
            files.append(value)
    return files


def _python_reads(argv: list[str]) -> list[str]:
    """``python -m zipfile -l X`` / ``python -m json.tool X``: the files such modules read (a
    script's own operands are its business; the code it runs is read by the command model)."""
    if "-m" not in argv:
        return []
    i = argv.index("-m") + 2
    return [a for a in argv[i:] if not a.startswith("-")]
