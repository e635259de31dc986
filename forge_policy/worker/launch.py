"""What the hook launcher runs on this machine: ``python -I -S …/forge_policy/worker/launch.py``.

Python compiles a script on every run but loads a module from its cached bytecode, so this file
only imports :mod:`forge_policy.worker.client` (which ``-S`` leaves off ``sys.path``: it is found
beside this file) and runs it, saving the ~4 ms it takes to compile the client each call
(:func:`~forge_policy.worker.client.run`: it exits too).
"""

import sys

if __name__ == "__main__":
    sys.path.insert(0, sys.argv[0].rpartition("/")[0] or ".")
    try:
        import client  # type: ignore[import-not-found]  # forge_policy/worker/client.py
    finally:
        del sys.path[0]  # nothing else is imported from this folder by name
    client.run()
