"""Unix sockets are refused (seccomp) unless listed; the network reaches only the listed hosts, through the proxy.

Real servers on the host (a Unix socket in the test's temp dir, HTTP on 127.0.0.2 and .3), real
commands in the real sandbox. Hosts are on 127.0.0.0/8 only.
"""

from __future__ import annotations

import http.server
import shlex
import socket
import threading

import pytest

from tests.sandbox.conftest import BACKENDS, NEEDS_BWRAP, run_in

CONNECT = "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print('reached', s.recv(9))"


@pytest.fixture
def unix_server(tmp_path):
    """A listening Unix socket that says 'hello' to whoever connects."""
    path = tmp_path / "outside.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen(4)

    def serve():
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            conn.sendall(b"hello")
            conn.close()

    threading.Thread(target=serve, daemon=True).start()
    yield path
    server.close()


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_unix_socket_outside_cannot_be_reached(make_policy, unix_server, backend):
    done = run_in(make_policy(), f'python3 -c "{CONNECT}" {unix_server}', backend)
    assert "reached" not in done.stdout
    assert "Operation not permitted" in done.stderr


@pytest.mark.parametrize("backend", BACKENDS)
def test_socketpair_and_tcp_inside_still_work(make_policy, backend):
    script = "import socket; a,b=socket.socketpair(); a.send(b'x'); print(b.recv(1)); socket.socket().close()"
    done = run_in(make_policy(), f'python3 -c "{script}"', backend)
    assert done.stdout.strip() == "b'x'", done.stderr


@NEEDS_BWRAP
def test_a_listed_socket_is_reached_and_an_unlisted_one_is_not(make_policy, unix_server, tmp_path):
    other = tmp_path / "other.sock"
    with socket.socket(socket.AF_UNIX) as unlisted:
        unlisted.bind(str(other))
        unlisted.listen(1)
        policy = make_policy(allow_unix_sockets=(str(unix_server),))
        done = run_in(policy, f'python3 -c "{CONNECT}" {unix_server}; python3 -c "{CONNECT}" {other}')
        assert "reached b'hello'" in done.stdout
        assert done.stdout.count("reached") == 1 and "Connection refused" in done.stderr
        unlisted.setblocking(False)
        with pytest.raises(BlockingIOError):
            unlisted.accept()


class _Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = f"hello from {self.server.server_address[0]} {self.path}".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def web_servers():
    """HTTP servers on 127.0.0.2 and 127.0.0.3 (same port), on the host."""
    first = http.server.ThreadingHTTPServer(("127.0.0.2", 0), _Hello)
    port = first.server_address[1]
    second = http.server.ThreadingHTTPServer(("127.0.0.3", port), _Hello)
    for server in (first, second):
        threading.Thread(target=server.serve_forever, daemon=True).start()
    yield port
    for server in (first, second):
        server.shutdown()
        server.server_close()


FETCH = (
    "import sys, urllib.request as u\n"
    "try: print(u.urlopen(sys.argv[1], timeout=60).read().decode())\n"
    "except Exception as e: print('failed', getattr(e, 'code', ''), e)\n"
)


def _fetch(url: str) -> str:
    """The command that fetches `url` with Python's urllib (which takes the proxy from the environment)."""
    return f"python3 -c {shlex.quote(FETCH)} {url}"


@NEEDS_BWRAP
def test_a_listed_host_is_reached_through_the_proxy_and_another_is_refused(make_policy, web_servers):
    policy = make_policy(allow_domains=("127.0.0.2",))
    launch_said = run_in(
        policy, f"{_fetch(f'http://127.0.0.2:{web_servers}/ok')}; {_fetch(f'http://127.0.0.3:{web_servers}/no')}"
    )
    lines = launch_said.stdout.splitlines()
    assert lines[0] == "hello from 127.0.0.2 /ok", launch_said.stderr
    assert lines[1].startswith("failed 403") and "hello" not in launch_said.stdout.split("\n", 1)[1]


@NEEDS_BWRAP
def test_the_proxy_refuses_spellings_that_hide_a_host_and_records_them(make_policy, web_servers):
    from nanohermes.sandbox import confine

    policy = make_policy(allow_domains=("127.0.0.2",))
    launch = confine(["true"], policy, policy.workspace)
    try:
        answers = {}
        for target in ("127.0.0.3", "127.0.0.2.evil.test", "127.0.0.2\x00.evil", "127.0.0.2 ", "evil.test.", "[::1]"):
            with socket.socket(socket.AF_UNIX) as client:
                client.connect(str(launch.proxy.path))
                client.sendall(f"CONNECT {target}:{web_servers} HTTP/1.1\r\n\r\n".encode("latin-1"))
                answers[target] = client.recv(200).split(b"\r\n")[0]
        with socket.socket(socket.AF_UNIX) as client:  # another spelling of the listed address is that address
            client.connect(str(launch.proxy.path))
            client.sendall(f"CONNECT 0x7f.0.0.2:{web_servers} HTTP/1.1\r\n\r\nGET / HTTP/1.0\r\n\r\n".encode())
            reply = b""
            while chunk := client.recv(4096):
                reply += chunk
    finally:
        launch.release()
    assert all(answer in (b"HTTP/1.1 403 Forbidden", b"HTTP/1.1 400 Bad Request") for answer in answers.values())
    assert b"200 Connection established" in reply and b"hello from 127.0.0.2" in reply
    assert launch.refused_hosts[:2] == ["127.0.0.3", "127.0.0.2.evil.test"]


@NEEDS_BWRAP
def test_with_the_network_off_and_no_hosts_listed_nothing_is_reached(make_policy, web_servers):
    done = run_in(make_policy(), _fetch(f"http://127.0.0.2:{web_servers}/"))
    assert done.stdout.startswith("failed") and "hello" not in done.stdout


@NEEDS_BWRAP
def test_the_sandboxs_own_loopback_stays_its_own_when_hosts_are_listed(make_policy):
    serve_and_fetch = (
        "python3 -m http.server 8799 --bind 127.0.0.1 >/dev/null 2>&1 & "
        "for i in $(seq 100); do python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", 8799))' "
        "2>/dev/null && break; sleep 0.2; done; " + _fetch("http://127.0.0.1:8799/") + "; kill %1"
    )
    done = run_in(make_policy(allow_domains=("pypi.org",)), serve_and_fetch)
    assert "Directory listing" in done.stdout, done.stdout + done.stderr
