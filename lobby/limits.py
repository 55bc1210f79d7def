"""The lobby's limits in one place, and the per-connection message rate limiter."""

from __future__ import annotations

from dataclasses import dataclass

from protocol.messages import MAX_IDLE_SECONDS


@dataclass(frozen=True)
class LobbyLimits:
    """Every bound the lobby enforces (frame sizes are per link, in protocol.messages)."""

    max_connections: int = 5000  # open TCP connections, said hello or not
    max_players: int = 5000  # sessions that said hello (names in use)
    max_rooms: int = 2000  # waiting rooms
    hello_seconds: float = 10.0  # a connection must say hello within this
    idle_seconds: int = 300  # a session silent this long is dropped (clients ping)
    messages_per_second: float = 20.0  # sustained rate per connection
    message_burst: int = 40  # messages a connection may send at once
    stall_seconds: float = 30.0  # a client that stops reading is dropped after this
    close_seconds: float = 5.0  # a dropped client that does not read its error is cut off
    tick_seconds: float = 1.0  # how often expiry runs
    # The relay (lobby/relay.py): what it holds for the links it splices, and for how long.
    relay_tables: int = 10000  # tables remembered (the oldest unused is forgotten)
    relay_table_seconds: float = 12 * 3600.0  # a table unused this long is forgotten
    relay_pairs_per_table: int = 64  # pair ids of one table (10 for five seats)
    relay_links_per_table: int = 40  # connections spliced at once, both ends counted
    relay_bytes_per_table: int = 256 * 1024 * 1024  # bytes relayed for one table, in all
    relay_unmatched: int = 1024  # relay connections not spliced (asking, or waiting)
    relay_unmatched_per_address: int = 64  # ... from one address
    relay_request_seconds: float = 10.0  # time to send the request
    relay_wait_seconds: float = 30.0  # an end waits this long for its other end
    relay_candidates_per_end: int = 4  # connections waiting as one end of one link (each
    # with its own secret: the honest one, and any made up; the oldest goes for a new one)
    relay_idle_seconds: float = 120.0  # a spliced link silent this long is cut

    def __post_init__(self) -> None:
        for name, value in vars(self).items():
            if not value > 0:
                raise ValueError(f"lobby limit {name} must be positive, not {value}")
        if self.idle_seconds > MAX_IDLE_SECONDS:  # the welcome message carries it
            raise ValueError(f"idle_seconds is at most {MAX_IDLE_SECONDS}, not {self.idle_seconds}")


class TokenBucket:
    """Allows `burst` events at once and `rate` per second sustained."""

    def __init__(self, rate: float, burst: int, now: float) -> None:
        self.rate = rate
        self.burst = float(burst)
        self._tokens = float(burst)
        self._updated = now

    def take(self, now: float) -> bool:
        """Spend one token; False when the bucket is empty (the caller is over the rate)."""
        elapsed = max(0.0, now - self._updated)
        self._updated = now
        self._tokens = min(self.burst, self._tokens + elapsed * self.rate)
        if self._tokens < 1.0:
            return False
        self._tokens -= 1.0
        return True
