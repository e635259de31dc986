"""The example of docs/how-to/real-client-tests.md runs as written."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

DOC = Path(__file__).resolve().parents[2] / "docs" / "how-to" / "real-client-tests.md"


def test_the_documented_example_passes(forge_real_client: Any) -> None:
    found = re.search(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.DOTALL)
    assert found is not None, "the how-to lost its example"
    namespace: dict[str, Any] = {}
    exec(compile(found.group(1), str(DOC), "exec"), namespace)
    tests = [value for name, value in namespace.items() if name.startswith("test_")]
    assert len(tests) == 1
    tests[0](forge_real_client)
