"""nodeflow_app/net/guard.py: every internal address form refused (literal and resolved), allowlist, redirects, connect time."""

from __future__ import annotations

import gzip
import ipaddress
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Iterator

import httpx
import pytest

from nodeflow_app.net.guard import (
    ALLOWLIST_ENV, MAX_BODY_ENV, BlockedUrl, check_url, embedded_ipv4, guarded_client, guarded_httpx2_client,
    max_body_bytes, refusal,
)

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
PUBLIC = ["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111", "::ffff:8.8.8.8", "::ffff:0:808:808", "64:ff9b::808:808",
          "2002:808:808::"]


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



async def test_a_body_past_the_limit_is_refused_by_its_decoded_size(port, monkeypatch):
    """A server a graph names (a model URL) sent one 300 MB SSE event and the SDK held it all: every guarded
    client stops a body at NODEFLOW_HTTP_MAX_RESPONSE_MB, counted decoded (3 MB of zeros gzipped is 3 KB)."""
    monkeypatch.setenv(ALLOWLIST_ENV, "127.0.0.1")
    monkeypatch.setenv(MAX_BODY_ENV, "1")
    refused: list[str] = []
    too_large = (r"the response from 127\.0\.0\.1 is larger than 1 MB; NodeFlow stopped reading it "
                 rf"\({MAX_BODY_ENV} sets the limit\)")
    async with guarded_client(on_refused=refused.append) as client:
        for path in ("/gzip", "/deflate", "/raw-deflate"):  # decoded by the guard now, as httpx did
            answer = await client.get(f"http://127.0.0.1:{port}{path}")
            assert (answer.text, "content-encoding" in answer.headers) == ("hello", False)
        assert len((await client.get(f"http://127.0.0.1:{port}/just-under")).content) == 1024 * 1024
        for path in ("/big", "/big-gzip"):
            with pytest.raises(httpx.ReadError, match=too_large):
                await client.get(f"http://127.0.0.1:{port}{path}")
    assert len(refused) == 2 and "larger than 1 MB" in refused[0]  # what the LLM nodes report (SDKs hide it)
    async with guarded_httpx2_client() as mcp_client:  # the MCP SDK's client
        import httpx2

        with pytest.raises(httpx2.ReadError, match=too_large):
            await mcp_client.get(f"http://127.0.0.1:{port}/big-gzip")
    async with guarded_client(limit_body=False) as counting_itself:  # the HTTP Request node has its own limits
        assert len((await counting_itself.get(f"http://127.0.0.1:{port}/big")).content) == 3 * 1024 * 1024


async def test_a_limited_body_still_streams(port, monkeypatch):
    """The limit counts as chunks pass: the first part of an answer arrives before the server sends the rest."""
    monkeypatch.setenv(ALLOWLIST_ENV, "127.0.0.1")
    _release.clear()
    async with guarded_client() as client, client.stream("GET", f"http://127.0.0.1:{port}/slow") as response:
        parts = response.aiter_bytes()
        assert await anext(parts) == b"first "
        _release.set()
        assert b"".join([part async for part in parts]) == b"rest"


def test_the_limit_is_64_mb_unless_set(monkeypatch):
    monkeypatch.delenv(MAX_BODY_ENV, raising=False)
    assert max_body_bytes() == 64 * 1024 * 1024
    monkeypatch.setenv(MAX_BODY_ENV, "500")
    assert max_body_bytes() == 500 * 1024 * 1024
    monkeypatch.setenv(MAX_BODY_ENV, "1.5")
    with pytest.raises(ValueError, match=f"{MAX_BODY_ENV} must be a whole number of MB"):
        max_body_bytes()

# At connect time ----------------------------------------------------------------------------------

def _zstd(data: bytes) -> bytes:
    import zstandard

    return zstandard.ZstdCompressor().compress(data)


BOMB = bytes(64 * 1024 * 1024)  # 64 MB of zeros: a few KB once compressed twice
COMPRESSED = {"/gzip": (gzip.compress(b"hello"), "gzip"),
              "/gzip-twice": (gzip.compress(gzip.compress(BOMB)), "gzip, gzip"),
              "/zstd": (_zstd(BOMB), "zstd")}
del BOMB
COMPRESSED["/big-gzip"] = (gzip.compress(bytes(3 * 1024 * 1024)), "gzip")
COMPRESSED["/deflate"] = (zlib.compress(b"hello"), "deflate")
COMPRESSED["/raw-deflate"] = (zlib.compress(b"hello")[2:-4], "deflate")  # without the zlib wrapper, as some send it
PLAIN = {"/big": bytes(3 * 1024 * 1024), "/just-under": bytes(1024 * 1024)}
_release = threading.Event()  # /slow sends its rest once the test has read its first part


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        port = self.server.server_address[1]
        if self.path == "/to-internal":
            self.send_response(302)
            self.send_header("Location", f"http://127.0.0.2:{port}/hello")
            self.end_headers()
            return
        if self.path == "/slow":  # no Content-Length: HTTP/1.0 reads to the end of the connection
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"first ")
            self.wfile.flush()
            _release.wait(10)
            self.wfile.write(b"rest")
            return
        body, encoding = PLAIN.get(self.path, b"hello"), ""
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
