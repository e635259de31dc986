"""The dashboard's data and page in-process: a failing source costs its section only, and no
recorded string, whatever it holds, changes the page's markup (a Hypothesis property)."""

from __future__ import annotations

from collections.abc import Iterator
from html.parser import HTMLParser
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import forge_policy as fp
from forge_policy.audit.memory import MemoryAuditSink
from forge_policy.errors import StoreError
from forge_policy.stores.memory import MemoryStore
from forge_policy.ui import peer
from forge_policy.ui.data import gather
from forge_policy.ui.page import render


class BrokenLog(MemoryAuditSink):
    def records(self) -> Iterator[dict[str, Any]]:
        raise OSError(13, "Permission denied", "/p/.forge/audit/overrides.log")


class BrokenStore(MemoryStore):
    def session_ids(self) -> list[str]:
        raise StoreError("state.json: not valid JSON <b>")


def test_an_unreadable_audit_log_is_said_and_the_rest_is_drawn() -> None:
    evaluator = fp.Evaluator(fp.builtin_catalog(), audit=BrokenLog())
    data = gather(evaluator, now=0.0)
    assert data["audit_error"].startswith("PermissionError: [Errno 13] Permission denied")
    assert data["recent"] == [] and data["sessions"] == []
    page = render(data, nonce="n", project="p")
    assert 'id="audit-error">audit log: PermissionError' in page
    assert '<section id="rates">' in page


def test_a_failing_store_costs_its_section_only() -> None:
    evaluator = fp.Evaluator(fp.builtin_catalog(), store=BrokenStore())
    data = gather(evaluator, now=0.0)
    assert data["sessions"] == {"error": "StoreError: state.json: not valid JSON <b>"}
    assert data["integrity"]["ok"] is None  # a memory log keeps no chain: said, not failed
    page = render(data, nonce="n", project="p")
    assert "could not read this: StoreError: state.json: not valid JSON &lt;b&gt;" in page


def test_the_peer_of_an_ipv4_connection_on_a_dual_stack_socket() -> None:
    mapped = "0000000000000000FFFF00000100007F"
    line = f"  0: {mapped}:D431 {mapped}:1F90 01 0:0 00:0 0  1000  0 1 1"
    elsewhere = f"  1: {mapped[:-8]}0200000A:D432 {mapped}:1F90 01 0:0 00:0 0  0  0 2 1"
    assert peer._owner([line, elsewhere], peer_port=0xD431, server_port=0x1F90) == 1000
    assert peer._owner([elsewhere], peer_port=0xD432, server_port=0x1F90) is None


class Tags(HTMLParser):
    """The page's markup without its text: every tag with its attribute names."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, ...]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, *sorted(name for name, _ in attrs)))

    def handle_endtag(self, tag: str) -> None:
        self.tags.append(("/" + tag,))


def _page(text: str) -> list[tuple[str, ...]]:
    """The markup of a page whose every recorded string is ``text``."""
    record = {
        "number": 3,
        "timestamp": "2026-01-01T00:00:01+00:00",
        "kind": "override",
        "session_id": text,
        "behavior_id": text,
        "level": text,
        "mechanism": text,
        "call": text,
        "reason": text,
    }
    session = {
        "id": text,
        "created_at": text,
        "last_accessed_at": text,
        "disabled": [],
        "behaviors": {text: {"counter": 2, "level": text, "blocks": 1, "pending_block": True}},
        "timeline": {text: [[1.0, 1, text, text], [2.0, 2, "soft_block", "block"]]},
    }
    data = {
        "generated_at": text,
        "records": 1,
        "catalog": {"behaviors": 1, "enabled": 1},
        "audit_error": text,
        "integrity": {"ok": False, "records": 1, "problems": [text]},
        "sessions": [session],
        "recent": [record],
        "rates": {"behaviors": {text: {"violations": 1, "blocks": 1, "band": text}}, "totals": {}},
        "suggestions": [
            {
                "number": 1,
                "kind": text,
                "behavior": text,
                "title": text,
                "apply": text,
                "evidence": {text: [text], "n": text},
            }
        ],
        "shadow": {
            "candidate": text,
            "differed": 1,
            "compared": 2,
            "problems": [text],
            "behaviors": [{"behavior_id": text, "examples": [{"direction": text, "after": text}]}],
        },
        "coverage": {
            "summary": text,
            "transcripts": [text],
            "gaps": [{"session_id": text, "tool": text, "summary": text, "reason": text}],
        },
    }
    parser = Tags()
    parser.feed(render(data, nonce="n", project=text))
    return parser.tags


@settings(max_examples=40)
@given(  # empty text leaves optional parts out: a different page, rightly
    st.text(alphabet=st.sampled_from("<>\"'&=/ abcimgscript!-;"), min_size=1, max_size=40)
)
def test_no_recorded_string_changes_the_markup(text: str) -> None:
    assert _page(text) == _page("x")
