"""The one SSRF guard for every outbound URL a graph names (SPEC 12): public addresses only, unless allowlisted.

Refused: loopback, private, link-local, site-local (fec0::/10, deprecated), unspecified, multicast, reserved
and other non-global addresses, and IPv6 forms that embed such an IPv4 address (::ffff:127.0.0.1,
::ffff:0:127.0.0.1 IPv4-translated, ::127.0.0.1, 64:ff9b::/96 and 64:ff9b:1::/48 NAT64, 2002::/16 6to4,
2001::/32 Teredo). NODEFLOW_HTTP_ALLOWLIST names the exceptions:
comma- or space-separated host names, addresses or networks (`intranet.example, 10.0.0.0/8`).

Two ways in, one rule:
- `check_url(url)` before a request: scheme, host, and every address the name resolves to;
- `GuardedBackend` inside an httpx client: it resolves the host itself when it connects, checks every
  address, and connects to a checked one, so a DNS answer that changes after `check_url` (rebinding)
  or a redirect to another host cannot reach an internal address.
"""

from __future__ import annotations

import asyncio
import functools
import ipaddress
import os
import socket
import zlib
from typing import Any, Callable, Iterable
from urllib.parse import urlsplit

import httpcore

ALLOWLIST_ENV = "NODEFLOW_HTTP_ALLOWLIST"

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Resolver = Callable[[str, int], Any]  # async (host, port) -> list of address strings

_NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))
_TRANSLATED = ipaddress.ip_network("::ffff:0:0:0/96")  # IPv4-translated (SIIT, RFC 2765): ::ffff:0:a.b.c.d
_KINDS = ("loopback", "link_local", "site_local", "unspecified", "multicast", "private", "reserved")


class BlockedUrl(ValueError):
    """A URL or address the guard refuses; the message names the host, the address and the allowlist."""


# 1. Addresses -------------------------------------------------------------------------------------

def embedded_ipv4(address: Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries (mapped, translated, compatible, NAT64, 6to4, Teredo), else None."""
    if address.version == 4:
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]  # the client's address (de-obfuscated by ipaddress)
    if address in _TRANSLATED or any(address in network for network in _NAT64):
        return ipaddress.IPv4Address(address.packed[-4:])
    if address.packed[:12] == bytes(12) and int(address) > 1:  # ::a.b.c.d (deprecated IPv4-compatible)
        return ipaddress.IPv4Address(address.packed[-4:])
    return None


def refusal(address: Address, networks: Iterable[Network] = ()) -> str | None:
    """Why `address` may not be reached ("a loopback address (127.0.0.1)"), or None when it may."""
    inner = embedded_ipv4(address)
    networks = list(networks)
    if any(candidate in network for candidate in (address, inner) if candidate is not None
           for network in networks if candidate.version == network.version):
        return None
    if inner is not None and not _public(inner):
        return f"a {_kind(inner)} address ({inner}, embedded in {address})"
    if not _public(address):
        return f"a {_kind(address)} address ({address})"
    return None


def _public(address: Address) -> bool:
    # Python counts fec0::/10 as global: deprecated (RFC 3879), but a network may still route it internally.
    return address.is_global and not address.is_multicast and not getattr(address, "is_site_local", False)


def _kind(address: Address) -> str:
    for kind in _KINDS:
        if getattr(address, f"is_{kind}", False):  # IPv4 addresses have no is_site_local
            return kind.replace("_", "-")
    return "non-public"


# 2. The allowlist ---------------------------------------------------------------------------------

def allowlist() -> tuple[set[str], list[Network]]:
    """(host names, networks) of NODEFLOW_HTTP_ALLOWLIST as it is now."""
    names: set[str] = set()
    networks: list[Network] = []
    for entry in os.environ.get(ALLOWLIST_ENV, "").replace(",", " ").split():
        entry = entry.lower().rstrip(".")
        try:
            networks.append(ipaddress.ip_network(entry.strip("[]"), strict=False))
        except ValueError:
            names.add(entry)
    return names, networks


# 3. Checks ----------------------------------------------------------------------------------------

async def system_resolver(host: str, port: int) -> list[str]:
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as error:
        raise BlockedUrl(f"cannot resolve {host}: {error.strerror or error}") from None
    return [info[4][0] for info in infos]


async def checked_addresses(host: str, port: int, *, resolver: Resolver | None = None,
                            what: str | None = None) -> list[Address] | None:
    """Every address `host` resolves to, each checked; None when the host name itself is allowlisted.

    Raises BlockedUrl naming `what` (the URL, by default the host) when any address is refused: a name
    with one internal address among public ones is refused too (the client might pick that one).
    """
    host = host.lower().rstrip(".").strip("[]")
    names, networks = allowlist()
    if host in names:
        return None
    try:
        found = [ipaddress.ip_address(host)]
    except ValueError:
        found = [ipaddress.ip_address(raw.split("%")[0]) for raw in await (resolver or system_resolver)(host, port)]
    if not found:
        raise BlockedUrl(f"cannot resolve {host}: no address")
    for address in found:
        reason = refusal(address, networks)
        if reason:
            raise BlockedUrl(f"refused {what or host}: {host} is {reason}; only public addresses can be reached "
                             f"unless {ALLOWLIST_ENV} lists the host")
    return found


async def check_url(url: str, *, resolver: Resolver | None = None) -> None:
    """Raise BlockedUrl unless `url` is http(s) with a host whose every address is public or allowlisted."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise BlockedUrl(f"only http:// and https:// URLs with a host can be reached, got {url!r}")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise BlockedUrl(f"the port of {url!r} is not a number from 0 to 65535") from None
    await checked_addresses(parts.hostname, port, resolver=resolver, what=url)


# 4. At connect time, inside httpx ------------------------------------------------------------------

class GuardedBackend(httpcore.AsyncNetworkBackend):
    """An httpcore network backend that checks every address when it connects and connects to that address.

    `on_refused(message)` is called before a refusal is raised: HTTP SDKs wrap transport errors in a
    generic "Connection error", so callers that want to say why record it there.
    """

    def __init__(self, *, resolver: Resolver | None = None, on_refused: Callable[[str], None] | None = None,
                 core: Any = httpcore):
        self._core = core  # httpcore, or httpcore2 (the MCP SDK's copy of it, under httpx2)
        self._inner = core.AnyIOBackend()
        self._resolver = resolver
        self._on_refused = on_refused

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                          local_address: str | None = None, socket_options: Any = None) -> Any:
        try:
            addresses = await checked_addresses(host, port, resolver=self._resolver)
        except BlockedUrl as error:
            if self._on_refused is not None:
                self._on_refused(str(error))
            raise self._core.ConnectError(str(error)) from None
        targets = [host] if addresses is None else [str(a) for a in addresses]
        last: Exception | None = None
        for target in targets:  # the checked addresses, never a second lookup of the name
            try:
                return await self._inner.connect_tcp(target, port, timeout=timeout, local_address=local_address,
                                                     socket_options=socket_options)
            except (self._core.ConnectError, self._core.ConnectTimeout, OSError) as error:
                last = error
        raise last if last is not None else self._core.ConnectError(f"cannot connect to {host}:{port}")

    async def connect_unix_socket(self, path: str, timeout: float | None = None, socket_options: Any = None) -> Any:
        raise self._core.ConnectError("Unix sockets are not reachable through the SSRF guard")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


# Compressed bodies are decoded a network read (<= 64 KB) at a time; gzip and deflate expand at most ~1,000
# times, so each step stays bounded. zstd (httpx decodes it when `zstandard` is installed) and a body compressed
# twice (`Content-Encoding: gzip, gzip`) expand without such a bound: a few KB became gigabytes in memory.
ACCEPT_ENCODING = "gzip, deflate"
BOUNDED_CODINGS = frozenset({"gzip", "x-gzip", "deflate"})
# The whole body, decoded, is bounded too: an SDK reads a whole answer, or one SSE event, into memory (a 300 MB
# event from a model URL a graph names took the process from 37 MB to 1.3 GB).
MAX_BODY_ENV = "NODEFLOW_HTTP_MAX_RESPONSE_MB"
DEFAULT_MAX_BODY_MB = 64


def refuse_unbounded_encoding(headers: Any, error: Callable[[str], Exception]) -> None:
    """Raise `error(message)` when a response's Content-Encoding could expand without bound."""
    codings = [c.strip().lower() for value in headers.get_list("content-encoding") for c in value.split(",")]
    codings = [c for c in codings if c and c != "identity"]
    if len(codings) > 1 or (codings and codings[0] not in BOUNDED_CODINGS):
        raise error(f"the response is compressed as {', '.join(codings)}; NodeFlow reads one layer of gzip or "
                    "deflate only (a body compressed otherwise can expand without limit)")


def max_body_bytes() -> int:
    """The most bytes of one response body (decoded) a guarded client reads: NODEFLOW_HTTP_MAX_RESPONSE_MB."""
    raw = os.environ.get(MAX_BODY_ENV, "").strip()
    if not raw:
        return DEFAULT_MAX_BODY_MB * 1024 * 1024
    if not raw.isdigit() or int(raw) == 0:
        raise ValueError(f"{MAX_BODY_ENV} must be a whole number of MB of at least 1, got {raw!r}")
    return int(raw) * 1024 * 1024


class _Inflate:
    """One layer of gzip or deflate decoded as httpx does it (deflate: zlib-wrapped, else raw as some servers
    send it); `error(message)` for a body that is not what its Content-Encoding says."""

    def __init__(self, coding: str, error: Callable[[str], Exception]) -> None:
        self._zlib = zlib.decompressobj(zlib.MAX_WBITS | 16 if coding == "gzip" else zlib.MAX_WBITS)
        self._may_be_raw = coding == "deflate"
        self._error = error

    def decode(self, data: bytes) -> bytes:
        try:
            decoded = self._zlib.decompress(data)
        except zlib.error as error:
            if not self._may_be_raw:
                raise self._error(str(error)) from None
            self._zlib, self._may_be_raw = zlib.decompressobj(-zlib.MAX_WBITS), False
            return self.decode(data)
        self._may_be_raw = False
        return decoded

    def flush(self) -> bytes:
        return self._zlib.flush()


class _CountedBody:
    """A response body decoded here (`_Inflate`, or as it came) and counted as it streams: past `limit` bytes it
    raises `too_large()`. Chunks go on as they arrive (SSE still streams)."""

    def __init__(self, stream: Any, inflate: _Inflate | None, limit: int, too_large: Callable[[], Exception]) -> None:
        self._stream, self._inflate, self._limit, self._too_large = stream, inflate, limit, too_large

    async def __aiter__(self) -> Any:
        size = 0
        async for raw in self._stream:
            chunk = self._inflate.decode(raw) if self._inflate else raw
            size += len(chunk)
            if size > self._limit:
                raise self._too_large()
            if chunk:
                yield chunk
        tail = self._inflate.flush() if self._inflate else b""
        if size + len(tail) > self._limit:
            raise self._too_large()
        if tail:
            yield tail

    async def aclose(self) -> None:
        await self._stream.aclose()


class _ReadsBoundedBodies:
    """Transport mixin: asks for gzip or deflate only, refuses a response compressed any other way, and (unless
    `limit_body` is off: a caller that counts the body itself) stops a body past `max_body_bytes()`."""

    _module: Any  # httpx or httpx2
    _counted: type
    limit_body = True
    on_refused: Callable[[str], None] | None = None

    async def handle_async_request(self, request: Any) -> Any:
        request.headers["accept-encoding"] = ACCEPT_ENCODING
        response = await super().handle_async_request(request)  # type: ignore[misc]
        try:
            refuse_unbounded_encoding(response.headers,
                                      lambda message: self._module.DecodingError(message, request=request))
            if self.limit_body:
                self._count_body(request, response, max_body_bytes())
        except Exception:
            await response.aclose()
            raise
        return response

    def _count_body(self, request: Any, response: Any, limit: int) -> None:
        """Decode the body here, so what is counted is what a reader holds; the response then reads as plain (the
        headers that named its coding gone). What httpx does not decode (x-gzip) is counted as it comes."""
        coding = response.headers.get("content-encoding", "").strip().lower()
        inflate = None
        if coding in ("gzip", "deflate"):
            inflate = _Inflate(coding, lambda message: self._module.DecodingError(message, request=request))
            del response.headers["content-encoding"]
            response.headers.pop("content-length", None)

        def too_large() -> Exception:
            message = (f"the response from {request.url.host} is larger than {limit // (1024 * 1024)} MB; "
                       f"NodeFlow stopped reading it ({MAX_BODY_ENV} sets the limit)")
            if self.on_refused is not None:  # SDKs wrap it in a generic error: the caller may record why
                self.on_refused(message)
            return self._module.ReadError(message, request=request)

        response.stream = self._counted(response.stream, inflate, limit, too_large)


@functools.cache
def _bounded(client_module: Any) -> type:
    """`client_module`'s (httpx or httpx2) AsyncHTTPTransport with `_ReadsBoundedBodies`."""
    counted = type("CountedBody", (_CountedBody, client_module.AsyncByteStream), {})
    return type("BoundedTransport", (_ReadsBoundedBodies, client_module.AsyncHTTPTransport),
                {"_module": client_module, "_counted": counted})


def guarded_transport(*, resolver: Resolver | None = None, on_refused: Callable[[str], None] | None = None,
                      limit_body: bool = True, **options: Any) -> Any:
    """An httpx.AsyncHTTPTransport whose connections go through `GuardedBackend` (no proxy from the environment)
    and whose responses are decoded within bounds (`refuse_unbounded_encoding`, `max_body_bytes` unless
    `limit_body` is off). `on_refused(message)` hears why an address or a body was refused."""
    import httpx

    transport = _bounded(httpx)(trust_env=False, **options)
    # httpx has no public argument for the network backend; the pool it builds reads this attribute when
    # it opens each connection.
    transport._pool._network_backend = GuardedBackend(resolver=resolver, on_refused=on_refused)
    transport.limit_body, transport.on_refused = limit_body, on_refused
    return transport


def guarded_httpx2_client(**options: Any) -> Any:
    """An httpx2.AsyncClient (the HTTP client of the MCP SDK) guarded like `guarded_client`."""
    import httpcore2
    import httpx2

    transport = _bounded(httpx2)(trust_env=False)
    transport._pool._network_backend = GuardedBackend(core=httpcore2)  # as in guarded_transport
    return httpx2.AsyncClient(transport=transport, trust_env=False, **options)


def guarded_client(*, resolver: Resolver | None = None, on_refused: Callable[[str], None] | None = None,
                   limits: Any = None, limit_body: bool = True, **options: Any) -> Any:
    """An httpx.AsyncClient that can reach only public (or allowlisted) addresses, redirects included, and reads
    at most `max_body_bytes()` of a response (unless `limit_body` is off: the caller counts the body itself)."""
    import httpx

    transport_options = {"limits": limits} if limits is not None else {}
    return httpx.AsyncClient(transport=guarded_transport(resolver=resolver, on_refused=on_refused,
                                                         limit_body=limit_body, **transport_options),
                             trust_env=False, **options)
