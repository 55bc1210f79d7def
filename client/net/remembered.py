"""Keys this user has met before, remembered on first use (as ssh's known_hosts): the lobbies'
keys by address, and the keys of the people it has played with by name.

Each store is a small JSON map (label -> key in hex) in the config dir, next to the identity
keys; a person may edit it (the warnings say which entry to remove). Writes replace the file
atomically; two clients of one user writing at once may lose an entry, never half a file.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Iterable
from pathlib import Path

from client.net.identity_store import APP_DIR, config_home
from protocol.identity import fingerprint
from protocol.messages import GameStart

MAX_ENTRIES = 10_000  # oldest forgotten first: the file stays small whatever a lobby sends


class RememberedKeys:
    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def lobbies(cls) -> RememberedKeys:
        return cls(config_home() / APP_DIR / "known_lobbies.json")

    @classmethod
    def players(cls) -> RememberedKeys:
        return cls(config_home() / APP_DIR / "known_players.json")

    def _read(self) -> dict[str, str]:
        try:
            data = json.loads(self.path.read_text())
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict):
            return {}
        return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)}

    def get(self, label: str) -> bytes | None:
        try:
            return bytes.fromhex(self._read().get(label, "")) or None
        except ValueError:
            return None

    def remember(self, entries: Iterable[tuple[str, bytes]]) -> None:
        known = self._read()
        for label, key in entries:
            known.pop(label, None)
            known[label] = key.hex()  # the newest last
        while len(known) > MAX_ENTRIES:
            del known[next(iter(known))]
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        temporary = self.path.with_name(f".{self.path.name}.{secrets.token_hex(8)}.tmp")
        temporary.write_text(json.dumps(known, indent=1, ensure_ascii=False) + "\n")
        os.replace(temporary, self.path)


def changed_player_keys(
    roster: GameStart, seat: int, known: RememberedKeys | None = None
) -> list[str]:
    """A warning for each other player whose key is not the one this user saw the last time
    it played with someone of that name; then the roster's keys are remembered."""
    store = known or RememberedKeys.players()
    warnings = []
    others = [member for index, member in enumerate(roster.seats) if index != seat]
    for member in others:
        before = store.get(member.name)
        if before is not None and before != member.public_key:
            warnings.append(
                f"{member.name}'s key has changed since your last game with {member.name}: "
                f"it was {fingerprint(before)}, it is now {fingerprint(member.public_key)}. "
                f"If {member.name} did not set up a new machine or key, someone else may be "
                "playing under that name: ask them at the table."
            )
    store.remember((member.name, member.public_key) for member in others)
    return warnings
