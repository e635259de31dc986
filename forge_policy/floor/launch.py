"""The command ``command_for(floor, command, "landlock")`` writes:
``python -I -S …/forge_policy/floor/launch.py FLOOR COMMAND``.

Python compiles a script on every run but loads a module from its cached bytecode, so this file
only imports :mod:`forge_policy.floor.landlock` (found beside this file; ``-I -S`` leaves
everything else off ``sys.path``) and runs it: built-ins and the standard library only.
"""

import sys

if __name__ == "__main__":
    sys.path.insert(0, sys.argv[0].rpartition("/")[0] or ".")
    try:
        import landlock  # type: ignore[import-not-found]  # forge_policy/floor/landlock.py
    finally:
        del sys.path[0]  # nothing else is imported from this folder by name
    sys.exit(landlock.main(sys.argv[1:]))
