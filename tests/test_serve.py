"""``forge-policy serve`` in a subprocess: token, methods, sizes, keep-alive, hot reload,
``hook --via-serve`` with and without a server, ``status``, and a clean SIGTERM shutdown."""

from __future__ import annotations

import http.client
import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

import forge_policy as fp
from tests.cli_support import SOFT_RULE, Project, decision_of, soft_catalog, tool_event
from tests.serve_support import Server, free_port

FORCE_PUSH = tool_event("Bash", "served", command="git push --force")


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Project, Server]]:
    project = Project(tmp_path)
    project.run("init", "--serve", "--port", str(free_port()))
    server = Server(project)
    yield project, server
    if server.process.poll() is None:
        code, _ = server.stop()
        assert code == 0


def test_requests_need_the_token_and_the_right_method(served: tuple[Project, Server]) -> None:
    _, server = served
    event = json.dumps(FORCE_PUSH).encode()
    assert server.request("POST", "/hook", event, token=None)[0] == 401
    assert server.request("POST", "/hook", event, token="wrong")[0] == 401
    assert server.request("GET", "/hook")[0] == 405
    assert server.request("PUT", "/hook", event)[0] == 405
    assert server.request("POST", "/elsewhere", event)[0] == 404
    status, body = server.request("GET", "/health")
    assert status == 200 and json.loads(body)["behaviors"] == len(fp.builtin_catalog())
    with socket.create_connection(("127.0.0.1", server.port)) as sock:  # header only, no body
        sock.sendall(
            f"POST /hook HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {server.token}\r\n"
            "Content-Length: 99999999\r\n\r\n".encode()
        )
        assert sock.recv(1024).startswith(b"HTTP/1.1 413 ")


def test_answers_are_the_command_hooks_answers(served: tuple[Project, Server]) -> None:
    project, server = served
    status, body = server.request("POST", "/hook", json.dumps(FORCE_PUSH).encode())
    direct = project.run("hook", input=json.dumps({**FORCE_PUSH, "session_id": "direct"}))
    assert status == 200 and body.decode() == direct.stdout.strip()
    read = tool_event("Read", "served", file_path="/p/a.py")
    assert server.request("POST", "/hook", json.dumps(read).encode()) == (200, b"")
    status, body = server.request("POST", "/hook", b"not json")
    assert status == 200 and "could not evaluate" in body.decode()
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    sockets = set()
    for _ in range(3):  # keep-alive: one connection, several requests
        conn.request("POST", "/hook", json.dumps(read), {"Authorization": f"Bearer {server.token}"})
        assert conn.getresponse().read() == b""
        sockets.add(id(conn.sock))
    conn.close()
    assert len(sockets) == 1
    status = project.json("status", "--session", "served")
    assert status["sessions"][0]["behaviors"]["no-destructive-git"]["counter"] == 1
    assert status["serve"]["answering"] is True


def test_via_serve_uses_the_server_and_falls_back_without_it(
    served: tuple[Project, Server],
) -> None:
    project, server = served
    before = json.loads(server.request("GET", "/health")[1])["requests"]
    result = project.run("hook", "--via-serve", input=json.dumps(FORCE_PUSH))
    assert decision_of(json.loads(result.stdout)) == "deny" and result.stderr == ""
    assert json.loads(server.request("GET", "/health")[1])["requests"] == before + 1
    assert "serve: answering (pid" in project.run("status").stdout

    code, err = server.stop()
    assert code == 0 and "forge-policy serve: stopped after" in err
    result = project.run("hook", "--via-serve", input=json.dumps(FORCE_PUSH))
    assert decision_of(json.loads(result.stdout)) == "deny"
    assert "connection refused); evaluating in-process" in result.stderr
    status = project.run("status").stdout
    assert "serve: configured (via-serve) but NOT answering" in status


def test_catalog_is_reloaded_when_a_file_changes(tmp_path: Path) -> None:
    project = Project(tmp_path)
    project.run("init", "--serve", "--port", str(free_port()))
    project.set_floor()  # served straight, not through `hook`: an allowed call stays unrewritten
    rule = soft_catalog(project.root / "behaviors") / "no-rm" / "behavior.yaml"
    server = Server(project, "--port", "0")

    def rm(name: str) -> bytes:  # a new call each time: an identical retry would be an override
        return json.dumps(tool_event("Bash", command=f"rm {name}")).encode()

    try:
        assert decision_of(json.loads(server.request("POST", "/hook", rm("a"))[1])) == "deny"
        rule.write_text(SOFT_RULE.replace('value: "rm "', 'value: "delete "'))
        assert server.request("POST", "/hook", rm("b")) == (200, b"")
        rule.write_text(SOFT_RULE.replace("default_level: soft_block", "default_level: loud"))
        # broken: the last catalog that loaded (its rule matches "delete ") keeps enforcing,
        # and the answer says so, naming the file and line (SPEC §10, last known good)
        answer = json.loads(server.request("POST", "/hook", rm("c"))[1])
        notice = answer["systemMessage"]
        assert ".forge/behaviors/no-rm/behavior.yaml:16:20" in notice
        assert "forge-policy validate" in notice and "permissionDecision" not in str(answer)
        assert (
            "behavior.yaml:16:20"
            in json.loads(server.request("GET", "/health")[1])["catalog_error"]
        )
        rule.write_text(SOFT_RULE)
        assert decision_of(json.loads(server.request("POST", "/hook", rm("d"))[1])) == "deny"
    finally:
        code, _ = server.stop()
    assert code == 0
