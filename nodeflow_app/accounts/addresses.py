"""The client address the sign-in limits count by (store/accounts.py), from the address a connection came from.

An IPv6 client is counted by its /64 network: one home or server is given a whole /64 and can pick any address in
it, so counting single IPv6 addresses would give each of them a fresh limit. An IPv4 address in IPv6 form
(`::ffff:192.0.2.1`, from dual-stack listeners) is the IPv4 address.
"""

from __future__ import annotations

import ipaddress

MAX_ADDRESS = 64  # the column's length; an IPv6 network in text needs at most 43 characters


def sign_in_address(ip: str | None) -> str | None:
    """`ip` as the limits count it; None when there is none. A value that is no IP address (a test client's name,
    a Unix socket's path) is kept as it is, cut to MAX_ADDRESS characters."""
    text = (ip or "").strip()
    if not text:
        return None
    try:
        address = ipaddress.ip_address(text.split("%", 1)[0])  # without an IPv6 zone ("fe80::1%eth0")
    except ValueError:
        return text[:MAX_ADDRESS]
    if address.version == 6 and address.ipv4_mapped is not None:
        return str(address.ipv4_mapped)
    if address.version == 6:
        return str(ipaddress.ip_network(f"{address}/64", strict=False))
    return str(address)
