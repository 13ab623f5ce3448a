"""Who a visitor is, behind the trusted reverse proxies (`Proxies`), and how many requests one may have waiting or
running at once (`Fairness`)."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field

from app.server.settings import SETTINGS
from engine.errors import shown


@dataclass(frozen=True)
class Fairness:
    """How many requests one visitor may have waiting or running at once, over every route that runs a function
    (the page's queue, /call, the REST /run and /api): per browser session and per client address (a visitor
    can make up new sessions, not new addresses)."""

    # the page's own events: 3 on opening (the banner, the tour, the AlterNet tab's photo), then a new photo's
    # AlterNet models, the Analyze, a map and its quick Stop handlers; at 3, an Analyze pressed soon after
    # opening the page or after a change of the steps was refused
    per_session: int = SETTINGS.max_per_session
    per_address: int = SETTINGS.max_per_address


Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def networks(value: str) -> tuple[Network, ...]:
    """Addresses and CIDR ranges, comma-separated ("127.0.0.1, 10.0.0.0/8"); ValueError naming a bad one."""
    found = []
    for part in (p.strip() for p in value.split(",")):
        if part:
            try:
                found.append(ipaddress.ip_network(part, strict=False))
            except ValueError:
                raise ValueError(f"VIT_EXPLORER_TRUSTED_PROXIES: '{shown(part)}' is not an address or range") from None
    return tuple(found)


@dataclass(frozen=True)
class Proxies:
    """The reverse proxies whose X-Forwarded-For is believed (VIT_EXPLORER_TRUSTED_PROXIES, addresses or CIDR
    ranges; none unless set), so that every visitor behind them is counted as one visitor and nobody else can
    pose as another."""

    trusted: tuple[Network, ...] = field(default_factory=lambda: networks(SETTINGS.trusted_proxies))

    def trusts(self, address: str) -> bool:
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return False
        return any(ip in network for network in self.trusted)

    def visitor(self, peer: str, forwarded: str | None) -> str:
        """The visitor's address: `peer`'s own, unless `peer` is a trusted proxy; then, going right to left
        through `forwarded` (X-Forwarded-For, each proxy appends the address it was reached from), the first
        address that is not a trusted proxy."""
        hops = [hop.strip() for hop in (forwarded or "").split(",") if hop.strip()]
        address = peer
        while hops and self.trusts(address):
            address = hops.pop()
        return shown(address, 60)

    def of_scope(self, scope) -> str:
        """The visitor's address of an ASGI request (its X-Forwarded-For headers joined, as proxies may send
        several)."""
        peer = (scope.get("client") or ("",))[0] or ""
        headers = [v.decode("latin1") for k, v in scope.get("headers") or [] if k == b"x-forwarded-for"]
        return self.visitor(peer, ", ".join(headers) or None)
