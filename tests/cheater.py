"""A cheating peer for the end-to-end tests: an ordinary greedy bot whose game driver breaks
the protocol in one chosen way, as a modified client would. Honest peers must stop the game
and name it.

    python -m tests.cheater KIND HOST:PORT --seats N --name NAME [...]   (KIND: see CHEATS)
"""

from __future__ import annotations

import secrets
import sys
from collections.abc import Callable
from typing import Any

from client.game import PeerGame
from protocol.deck import Keys
from protocol.peer_messages import StepBody, StepFrame, sign
from protocol.rules import Action, Plant, State
from protocol.steps import ForbiddenAction, check_own_actions

CHEATS = (
    "wrong-key", "card-not-held", "out-of-order", "out-of-turn", "stale-state",
    "equivocation", "forged-signature", "withheld",
)  # fmt: skip
#: Cheats no signature proves: the honest clients refuse them, and name nobody.
UNPROVABLE = ("forged-signature",)


def _rewrite(payload: bytes, **changes: Any) -> bytes:
    wire = StepBody.decode(payload).to_wire()
    wire.update(changes)
    return StepBody.from_wire(wire).encode()


def _allowed(rules: State, seat: int, action: Action) -> bool:
    try:
        check_own_actions(rules, seat, [action])
    except ForbiddenAction:
        return False
    return True


class CheatingGame(PeerGame):
    """Publishes honestly until its chosen moment, then cheats once in its one way."""

    kind = ""

    def _publish(self, step: int, payload: bytes) -> None:
        body = StepBody.decode(payload)
        cheat: Callable[[int, bytes, StepBody], bool] = getattr(
            self, "_" + self.kind.replace("-", "_")
        )
        if getattr(self, "_cheated", False) or not cheat(step, payload, body):
            super()._publish(step, payload)
        else:
            self._cheated = True
            print(f"cheater: {self.kind} at step {step} as seat {self.seat}", file=sys.stderr)

    @property
    def _dealt(self) -> bool:
        return self.view.rules is not None and bool(self.view.hand)

    def _send(self, step: int, payload: bytes) -> None:
        super()._publish(step, payload)

    def _signed(self, step: int, payload: bytes, seat: int | None = None) -> StepFrame:
        author = self.seat if seat is None else seat
        return sign(self.identity, StepFrame(self.game_id, step, author, payload))

    def _wrong_key(self, step: int, payload: bytes, body: StepBody) -> bool:
        private = [dict(m) for m in body.deck if m.get("kind") == Keys.KIND and m["to"] is not None]
        if not private:
            return False
        keys = [bytes(k) for k in private[0]["keys"]]
        keys[0] = bytes([keys[0][0] ^ 1]) + keys[0][1:]
        deck = [dict(m, keys=keys) if m == dict(private[0]) else m for m in body.deck]
        self._send(step, _rewrite(payload, deck=deck))
        return True

    def _front_plant(self, body: StepBody) -> Plant | None:
        plants = [a for a in body.actions if isinstance(a, Plant)]
        rules = self.view.rules
        if not plants or rules is None or rules.players[self.seat].hand[0].card is not None:
            return None
        return plants[0]

    def _card_not_held(self, step: int, payload: bytes, body: StepBody) -> bool:
        """Claim another of its hidden cards as the front one, one the public rules allow
        there (so that only the deck, opening the slot, can tell)."""
        plant = self._front_plant(body)
        rules = self.view.rules
        if plant is None or rules is None:
            return False
        others = [
            card
            for card in self.view.hand.values()
            if card != plant.card and _allowed(rules, self.seat, Plant(plant.field, card))
        ]
        if not others:
            return False  # a later plant, then
        forged = {"type": "plant", "field": plant.field, "card": others[0]}
        self._send(step, _rewrite(payload, actions=[forged]))
        return True

    def _out_of_order(self, step: int, payload: bytes, body: StepBody) -> bool:
        rules = self.view.rules
        if (
            self._front_plant(body) is None
            or rules is None
            or len(rules.players[self.seat].hand) < 2
        ):
            return False
        second = rules.players[self.seat].hand[1].slot
        keys = self.lockstep.deck.keys_for(
            second.epoch, [second.position], None, check_routes=False
        )
        deck = [m for m in body.deck if m.get("kind") != Keys.KIND or m["to"] is not None]
        self._send(step, _rewrite(payload, deck=[*deck, keys.to_wire()]))
        return True

    def _out_of_turn(self, step: int, payload: bytes, body: StepBody) -> bool:
        rules = self.view.rules
        if not self._dealt or rules is None or rules.active == self.seat:
            return False
        actions = [*body.to_wire()["actions"], {"type": "end_trading"}]
        self._send(step, _rewrite(payload, actions=actions))
        return True

    def _stale_state(self, step: int, payload: bytes, body: StepBody) -> bool:
        if not self._dealt:
            return False
        self._send(step, _rewrite(payload, state=secrets.token_bytes(32)))
        return True

    def _equivocation(self, step: int, payload: bytes, body: StepBody) -> bool:
        """Two different signed messages for one step, each one the rules allow: its moves to
        some seats, the same step with no moves to the others. Only moves that open no hidden
        hand card will do, so that no key in the message is out of place without them."""
        rules = self.view.rules
        if not self._dealt or rules is None or not body.actions:
            return False
        if check_own_actions(rules, self.seat, body.actions):
            return False  # they open a hand card, whose key the other version could not hold
        other = _rewrite(payload, actions=[])
        self.inbox[step][self.seat] = self._signed(step, payload).frame
        for seat in self.mesh.connected:
            self.mesh.send(seat, self._signed(step, payload if seat % 2 else other))
        return True

    def _forged_signature(self, step: int, payload: bytes, body: StepBody) -> bool:
        """Pass off a message of its own making as another seat's."""
        if not self._dealt:
            return False
        victim = (self.seat + 1) % self.players
        forged = _rewrite(payload, seat=victim, actions=[], deck=[])
        self.mesh.broadcast(self._signed(step, forged, victim))
        self._send(step, payload)
        return True

    def _withheld(self, step: int, payload: bytes, body: StepBody) -> bool:
        """Stays connected, makes its message for a step the others have started (or owe
        something in), and never signs nor sends it, not even when asked. Its holdings are
        the honest client's: they say it owes the message, for longer and longer."""
        started = len(self.inbox.get(step, {})) > 0 or self.lockstep.urgent()
        if not self._dealt or not started:
            return False
        self._withheld_step = step
        return True

    def _compose(self, step: int) -> None:
        if step != getattr(self, "_withheld_step", None):
            super()._compose(step)


def main() -> None:
    from client.cli import build_parser, run_bot
    from client.runtime import run

    if len(sys.argv) < 2 or sys.argv[1] not in CHEATS:
        sys.exit(f"usage: python -m tests.cheater {{{','.join(CHEATS)}}} HOST:PORT [bot options]")
    game_class = type("Cheater", (CheatingGame,), {"kind": sys.argv[1]})
    args = build_parser().parse_args(["bot", *sys.argv[2:]])
    run(lambda reactor: run_bot(reactor, args, game_class))


if __name__ == "__main__":
    main()
