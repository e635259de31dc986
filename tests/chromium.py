"""Headless Chromium for the tests of the self-contained HTML pages (``replay --html``,
``shadow report --html``, the dashboard): :func:`chromium` runs it on a page with no network,
:func:`dom` parses what ``--dump-dom`` prints into :class:`Node` trees to assert on."""

from __future__ import annotations

import subprocess
from html.parser import HTMLParser
from pathlib import Path

from tests.optional import need_binary

# a closed network: nothing may reach out, and a first run must not wait for anything
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--hide-scrollbars",
)
VOID = {"meta", "br", "img", "input", "link", "hr", "area", "base", "col", "source", "wbr"}


class Node:
    """An element of the dumped DOM: tag, attributes, children, text."""

    def __init__(self, tag: str, attrs: dict[str, str]) -> None:
        self.tag, self.attrs = tag, attrs
        self.content: list[Node | str] = []  # in document order

    @property
    def children(self) -> list[Node]:
        return [c for c in self.content if isinstance(c, Node)]

    @property
    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text for c in self.content)

    @property
    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())

    def iter(self) -> list[Node]:
        found = [self]
        for child in self.children:
            found.extend(child.iter())
        return found

    def find(self, tag: str, cls: str | None = None, **attrs: str) -> list[Node]:
        return [
            n
            for n in self.iter()
            if n.tag == tag
            and (cls is None or cls in n.classes)
            and all(n.attrs.get(k.replace("_", "-")) == v for k, v in attrs.items())
        ]


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].content.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1].content.append(data)


def dom(text: str) -> Node:
    """The parsed tree of an HTML text (as Chromium's ``--dump-dom`` prints it)."""
    builder = _Builder()
    builder.feed(text)
    return builder.root


def chromium(tmp_path: Path, page: Path, *args: str) -> str:
    """Headless Chromium on ``page`` (a fresh profile under ``tmp_path``) with ``args``
    (``--dump-dom``, ``--screenshot=F``); its stdout. Skips where Chromium is not installed."""
    binary = need_binary("chromium", "chromium-browser")
    profile = tmp_path / "chromium-profile"
    result = subprocess.run(
        [binary, *FLAGS, f"--user-data-dir={profile}", *args, page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout
