"""``python -I -S …/worker/launch.py``: runs :mod:`~forge_policy.worker.client` (see ``run``).

Python compiles this file on every run: it is kept short. The worker runs ``client.py``."""

import gc
import sys

if __name__ == "__main__":
    gc.disable()  # one call, then the process ends: the collector's passes buy it nothing
    sys.path.insert(0, sys.argv[0].rpartition("/")[0] or ".")
    try:
        import client  # type: ignore[import-not-found]  # forge_policy/worker/client.py
    finally:
        del sys.path[0]  # nothing else is imported from this folder by name
    client.run()
