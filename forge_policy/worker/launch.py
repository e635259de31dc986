"""What the hook launcher runs on this machine: ``python -I -S …/forge_policy/worker/launch.py``.

Python compiles a script on every run but loads a module from its cached bytecode, so this file
only imports :mod:`forge_policy.worker.client` (which ``-S`` leaves off ``sys.path``: it is found
beside this file) and runs it, saving the ~4 ms it takes to compile the client each call
(:func:`~forge_policy.worker.client.run`: it exits too). The process answers one call (or one
status line) and ends, so the cyclic collector is off from the start, as ``forge-policy hook``
has it: its passes over what the imports allocate buy a process this short nothing. (The worker
is started as ``client.py --worker``, never through this file: it keeps its collector.)
"""

import gc
import sys

if __name__ == "__main__":
    gc.disable()
    sys.path.insert(0, sys.argv[0].rpartition("/")[0] or ".")
    try:
        import client  # type: ignore[import-not-found]  # forge_policy/worker/client.py
    finally:
        del sys.path[0]  # nothing else is imported from this folder by name
    client.run()
