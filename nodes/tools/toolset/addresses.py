"""Which URLs a tool may fetch: public addresses only, unless NODEFLOW_HTTP_ALLOWLIST names the host (SPEC 12).

The allowlist is comma- or space-separated host names, IP addresses or networks (`localhost, 10.0.0.0/8`).
Every address a name resolves to must be public (or allowed). Known limit: the HTTP client resolves the
name again when it connects, so a DNS server answering differently the second time is not caught.
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import socket
from urllib.parse import urlsplit

ALLOWLIST_ENV = "NODEFLOW_HTTP_ALLOWLIST"

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


async def check_url(url: str) -> None:
    """Raise ValueError unless `url` is http(s) and its host is public or allowlisted."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"only http:// and https:// URLs with a host can be fetched, got {url!r}")
    host = parts.hostname.lower().rstrip(".")
    names, networks = _allowlist()
    if host in names:
        return
    for address in await _resolve(host, parts.port or (443 if parts.scheme == "https" else 80)):
        if not _public(address) and not any(address in network for network in networks):
            raise ValueError(
                f"refused {url}: {host} is a {_kind(address)} address ({address}); only public addresses can "
                f"be fetched unless {ALLOWLIST_ENV} lists the host")


def _allowlist() -> tuple[set[str], list[ipaddress.IPv4Network | ipaddress.IPv6Network]]:
    names: set[str] = set()
    networks = []
    for entry in os.environ.get(ALLOWLIST_ENV, "").replace(",", " ").split():
        entry = entry.lower().rstrip(".")
        try:
            networks.append(ipaddress.ip_network(entry.strip("[]"), strict=False))
        except ValueError:
            names.add(entry)
    return names, networks


async def _resolve(host: str, port: int) -> list[Address]:
    try:
        return [_unmapped(ipaddress.ip_address(host.strip("[]")))]
    except ValueError:
        pass
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as error:
        raise ValueError(f"cannot resolve {host}: {error.strerror or error}") from None
    return [_unmapped(ipaddress.ip_address(info[4][0].split("%")[0])) for info in infos]


def _unmapped(address: Address) -> Address:
    """::ffff:127.0.0.1 is 127.0.0.1."""
    mapped = getattr(address, "ipv4_mapped", None)
    return mapped or address


def _public(address: Address) -> bool:
    return address.is_global and not address.is_multicast


def _kind(address: Address) -> str:
    for kind in ("loopback", "link_local", "unspecified", "multicast", "private", "reserved"):
        if getattr(address, f"is_{kind}"):
            return kind.replace("_", "-")
    return "non-public"
