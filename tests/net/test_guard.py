"""nodeflow_app/net/guard.py: every internal address form refused (literal and resolved), allowlist, redirects, connect time."""

from __future__ import annotations

import gzip
import ipaddress
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Iterator

import httpx
import pytest

from nodeflow_app.net.guard import ALLOWLIST_ENV, BlockedUrl, check_url, embedded_ipv4, guarded_client, refusal

# Each form, with the kind the message must name.
INTERNAL = [
    ("127.0.0.1", "loopback"), ("127.8.9.10", "loopback"), ("10.1.2.3", "private"), ("172.16.0.1", "private"),
    ("192.168.0.1", "private"), ("169.254.169.254", "link-local"), ("0.0.0.0", "unspecified"),
    ("100.64.0.1", "non-public"), ("224.0.0.1", "multicast"),
    ("::1", "loopback"), ("::", "unspecified"), ("fe80::1", "link-local"), ("fc00::1", "private"),
    ("fd12:3456::1", "private"),
    ("::ffff:127.0.0.1", "loopback"), ("::127.0.0.1", "loopback"), ("::ffff:10.0.0.1", "private"),
    ("64:ff9b::7f00:1", "loopback"), ("64:ff9b::a9fe:a9fe", "link-local"), ("64:ff9b:1::c0a8:1", "private"),
    ("2002:7f00:1::", "loopback"), ("2002:a00:1::1", "private"), ("2002:a9fe:a9fe::", "link-local"),
    ("::ffff:0:7f00:1", "loopback"), ("::ffff:0:a9fe:a9fe", "link-local"),  # IPv4-translated (SIIT)
    ("fec0::1", "site-local"), ("feff:ffff::1", "site-local"),  # deprecated site-local, fec0::/10
]
PUBLIC = ["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111", "::ffff:8.8.8.8", "::ffff:0:808:808", "64:ff9b::808:808", "2002:808:808::"]


@pytest.fixture(autouse=True)
def no_allowlist(monkeypatch):
    monkeypatch.delenv(ALLOWLIST_ENV, raising=False)


def resolver_to(*addresses: str):
    async def resolve(host: str, port: int) -> list[str]:
        return list(addresses)
    return resolve


@pytest.mark.parametrize("address, kind", INTERNAL)
def test_each_internal_form_is_refused_by_kind(address, kind):
    reason = refusal(ipaddress.ip_address(address))
    assert reason is not None and reason.startswith(f"a {kind} address ("), reason


@pytest.mark.parametrize("address", PUBLIC)
def test_public_addresses_pass(address):
    assert refusal(ipaddress.ip_address(address)) is None


def test_embedded_ipv4_forms():
    assert [str(embedded_ipv4(ipaddress.ip_address(a))) for a in (
        "::ffff:1.2.3.4", "::ffff:0:1.2.3.4", "::1.2.3.4", "64:ff9b::102:304", "2002:102:304::")] == ["1.2.3.4"] * 5
    assert embedded_ipv4(ipaddress.ip_address("::1")) is None
    assert embedded_ipv4(ipaddress.ip_address("1.2.3.4")) is None


@pytest.mark.parametrize("address, kind", INTERNAL)
async def test_literal_urls_are_refused(address, kind):
    host = f"[{address}]" if ":" in address else address
    with pytest.raises(BlockedUrl, match=f"is a {kind} address .*unless {ALLOWLIST_ENV} lists the host"):
        await check_url(f"http://{host}:8080/v1")


@pytest.mark.parametrize("address, kind", INTERNAL)
async def test_names_resolving_to_internal_addresses_are_refused(address, kind):
    with pytest.raises(BlockedUrl, match=rf"refused https://models\.example/v1: models\.example is a {kind} address"):
        await check_url("https://models.example/v1", resolver=resolver_to(address))


async def test_one_internal_address_among_public_ones_is_refused():
    with pytest.raises(BlockedUrl, match="loopback"):
        await check_url("https://mixed.example/", resolver=resolver_to("8.8.8.8", "127.0.0.1"))
    await check_url("https://public.example/", resolver=resolver_to("8.8.8.8", "2606:4700:4700::1111"))


async def test_the_allowlist_takes_names_addresses_and_networks(monkeypatch):
    monkeypatch.setenv(ALLOWLIST_ENV, "llm.internal, 10.0.0.0/8 [::1]")
    await check_url("http://llm.internal:8000/v1", resolver=resolver_to("192.168.1.1"))
    await check_url("http://intranet.example/", resolver=resolver_to("10.9.9.9"))
    await check_url("http://[::ffff:10.0.0.1]/")  # the embedded address is in an allowed network
    await check_url("http://[::1]:9/")
    with pytest.raises(BlockedUrl, match="192.168.1.1"):
        await check_url("http://other.internal/", resolver=resolver_to("192.168.1.1"))


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://example.com/", "http:///path", "gopher://x/"])
async def test_other_schemes_are_refused(url):
    with pytest.raises(BlockedUrl, match="only http:// and https:// URLs"):
        await check_url(url)


# At connect time ----------------------------------------------------------------------------------

def _zstd(data: bytes) -> bytes:
    import zstandard

    return zstandard.ZstdCompressor().compress(data)


BOMB = bytes(64 * 1024 * 1024)  # 64 MB of zeros: a few KB once compressed twice
COMPRESSED = {"/gzip": (gzip.compress(b"hello"), "gzip"),
              "/gzip-twice": (gzip.compress(gzip.compress(BOMB)), "gzip, gzip"),
              "/zstd": (_zstd(BOMB), "zstd")}
del BOMB


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        port = self.server.server_address[1]
        if self.path == "/to-internal":
            self.send_response(302)
            self.send_header("Location", f"http://127.0.0.2:{port}/hello")
            self.end_headers()
            return
        body, encoding = b"hello", ""
        if self.path == "/accept-encoding":
            body = self.headers.get("accept-encoding", "").encode()
        elif self.path in COMPRESSED:
            body, encoding = COMPRESSED[self.path]
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        if encoding:
            self.send_header("Content-Encoding", encoding)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture(scope="module")
def port() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


async def test_the_client_refuses_at_connect_time_and_says_why(port):
    refused: list[str] = []
    async with guarded_client(on_refused=refused.append) as client:
        with pytest.raises(httpx.ConnectError, match="127.0.0.1 is a loopback address"):
            await client.get(f"http://127.0.0.1:{port}/hello")
    assert len(refused) == 1 and "loopback" in refused[0]


async def test_the_client_checks_the_address_it_connects_to_not_an_earlier_answer(port, monkeypatch):
    """A name that looked public when checked but resolves to loopback when connecting (DNS rebinding)."""
    await check_url(f"http://rebind.example:{port}/", resolver=resolver_to("8.8.8.8"))
    async with guarded_client(resolver=resolver_to("127.0.0.1")) as client:
        with pytest.raises(httpx.ConnectError, match="rebind.example is a loopback address"):
            await client.get(f"http://rebind.example:{port}/hello")


async def test_the_client_connects_to_the_checked_address_when_allowed(port, monkeypatch):
    monkeypatch.setenv(ALLOWLIST_ENV, "127.0.0.0/8")
    async with guarded_client(resolver=resolver_to("127.0.0.1")) as client:
        response = await client.get(f"http://name-only.example:{port}/hello")
    assert (response.status_code, response.text) == (200, "hello")


async def test_a_redirect_to_a_private_address_is_refused(port, monkeypatch):
    monkeypatch.setenv(ALLOWLIST_ENV, "127.0.0.1")
    async with guarded_client(follow_redirects=True) as client:
        assert (await client.get(f"http://127.0.0.1:{port}/hello")).text == "hello"
        with pytest.raises(httpx.ConnectError, match=r"127\.0\.0\.2 is a loopback address"):
            await client.get(f"http://127.0.0.1:{port}/to-internal")


async def test_a_body_compressed_beyond_one_bounded_layer_is_refused_before_it_is_read(port, monkeypatch):
    """gzip or deflate once: each network read expands at most ~1,000 times. Twice, or zstd: a few KB become
    gigabytes in memory (a server any graph names could take NodeFlow down)."""
    monkeypatch.setenv(ALLOWLIST_ENV, "127.0.0.1")
    async with guarded_client() as client:
        assert (await client.get(f"http://127.0.0.1:{port}/gzip")).text == "hello"
        asked = await client.get(f"http://127.0.0.1:{port}/accept-encoding", headers={"accept-encoding": "zstd, br"})
        assert asked.text == "gzip, deflate"
        for path, coding in (("/gzip-twice", "gzip, gzip"), ("/zstd", "zstd")):
            with pytest.raises(httpx.DecodingError, match=f"compressed as {coding}; NodeFlow reads one layer"):
                await client.get(f"http://127.0.0.1:{port}{path}")
