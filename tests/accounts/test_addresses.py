"""The address the sign-in limits count by: an IPv6 client by its /64, an IPv4 address however it is written."""

from __future__ import annotations

import pytest

from nodeflow_app.accounts.addresses import MAX_ADDRESS, sign_in_address


@pytest.mark.parametrize("seen, counted", [
    ("203.0.113.7", "203.0.113.7"),
    (" 203.0.113.7 ", "203.0.113.7"),
    ("::ffff:203.0.113.7", "203.0.113.7"),  # a dual-stack listener's IPv4 client
    ("2001:db8:1:2::1", "2001:db8:1:2::/64"),
    ("2001:DB8:1:2:aaaa:bbbb:cccc:dddd", "2001:db8:1:2::/64"),
    ("fe80::1%eth0", "fe80::/64"),
    ("::1", "::/64"),
    ("testclient", "testclient"),  # no IP address (Starlette's test client): kept as it is
    ("", None), (None, None),
])
def test_the_limits_count_an_address_as_its_client_holds_it(seen, counted):
    assert sign_in_address(seen) == counted


def test_a_value_that_is_no_address_is_cut_to_the_column():
    assert sign_in_address("x" * 500) == "x" * MAX_ADDRESS
