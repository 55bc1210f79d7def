"""Who of the other players is at the table: a link that drops and comes back, said in words.

The mesh reports every link that comes up or goes down, and why as far as it can tell
(`client.net.mesh.LinkLoss`); a seat whose link drops may also fail every redial until it is back.
`Presence` turns that into news a person reads once per absence ("bob's client stopped
answering", later "bob is back"), and keeps the seats that are away (the toolbar marks them).
What a failed redial adds while a seat is away (its machine refuses the link: its client is
not running; or does not answer) is said once more, once per kind. A link whose TLS ended
without its peer closing it is all one to this end: the peer's client died (its machine
closed the connection) or the network broke it; the words say both.
A seat whose link has never been up is not away: it has not arrived yet (at the start, or while
this seat comes back from a crash); its first problem is said once, with the mesh's reason.

Pure: the game driver calls it from its link callbacks and puts `away` in its view.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from client.net import LinkLoss


@dataclass(frozen=True)
class PresenceNews:
    """A player left the table or came back (`here`), in one sentence."""

    seat: int
    here: bool
    sentence: str


def loss_sentence(name: str, loss: LinkLoss, reason: str) -> str:
    """What is known of why the link to `name` went down, for a person."""
    what = {
        LinkLoss.CLOSED: f"{name}'s client closed its link (it left the game or was stopped)",
        LinkLoss.BROKEN: f"the link to {name} broke ({name}'s client stopped without closing "
        "it, or the network dropped)",
        LinkLoss.SILENT: f"{name}'s client stopped answering (nothing heard from it)",
        LinkLoss.NOT_LISTENING: f"{name}'s client is not running ({name}'s machine refuses "
        "the link)",
        LinkLoss.UNREACHABLE: f"the network to {name} dropped ({name}'s machine does not answer)",
        LinkLoss.TAMPERED: f"the link to {name} failed its integrity check (bytes changed or "
        "lost on the way; nobody is blamed)",
        LinkLoss.REFUSED: f"the link to {name} was refused: {reason.rstrip('.')}",
    }[loss]
    return f"{what}; {name} is away, and the game goes on when {name} is back."


class Presence:
    """The other seats' comings and goings, for one seat."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = tuple(names)
        self._seen: set[int] = set()  # seats whose link has been up
        self._away: dict[int, set[LinkLoss]] = {}  # seat: the kinds of loss said since it left
        self._told: set[int] = set()  # seats never seen whose first problem was said

    @property
    def away(self) -> frozenset[int]:
        """Seats whose link was up and is down now."""
        return frozenset(self._away)

    def link_up(self, seat: int) -> PresenceNews | None:
        self._seen.add(seat)
        if self._away.pop(seat, None) is None:
            return None
        return PresenceNews(seat, True, f"{self.names[seat]} is back.")

    def link_down(self, seat: int, reason: str, loss: LinkLoss) -> PresenceNews | None:
        name = self.names[seat]
        said = self._away.get(seat)
        if said is not None:  # away: a failed redial may say more, once
            if loss in said or loss not in (LinkLoss.NOT_LISTENING, LinkLoss.UNREACHABLE):
                return None
            said.add(loss)
            return PresenceNews(seat, False, loss_sentence(name, loss, reason))
        if seat in self._seen:
            self._away[seat] = {loss}
            return PresenceNews(seat, False, loss_sentence(name, loss, reason))
        if seat in self._told:
            return None
        self._told.add(seat)
        return PresenceNews(seat, False, f"no link to {name} yet: {reason}")
