"""What one seat sees of a game, and the words the REPL uses for it.

The game driver hands the REPL a `PlayerView` at any moment: the shared rules state, the seat,
what that seat alone knows of its own hidden hand cards, and every seat's name. The command
parser, the completer and the screen all read the game through it, so they name players,
cards, fields and rules the same way. Numbers a person types or reads start at 1 (hand
positions, fields, seats); the engine's start at 0.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import NamedTuple

from protocol.cards import BEANOMETER, COUNT, Bean, Card, bean_of, coins
from protocol.rules import Action, Offer, Player, RuleError, Slot, State
from protocol.steps import apply_own


class PlayerView(NamedTuple):
    """One seat's view of the game at one moment."""

    state: State
    seat: int
    hand: Mapping[Slot, Card]  # what this seat privately knows of its hidden hand cards
    names: Sequence[str]  # by seat

    @property
    def me(self) -> Player:
        return self.state.players[self.seat]

    def my_cards(self) -> list[tuple[int, Slot, Card | None]]:
        """My hand, front first: (position from 1, slot, card or None while unknown to me)."""
        return [
            (position, held.slot, held.card if held.card is not None else self.hand.get(held.slot))
            for position, held in enumerate(self.me.hand, 1)
        ]

    def who(self, seat: int | None) -> str:
        """A seat as a sentence names it: "you" for this seat, "everyone" for None."""
        if seat is None:
            return "everyone"
        return "you" if seat == self.seat else self.names[seat]

    def after(self, actions: Sequence[Action]) -> PlayerView:
        """This view once my actions are applied as one step of mine would apply them (offers
        first, withdrawals last: protocol.steps), or RuleError (a dry run)."""
        return self._replace(state=apply_own(self.state, self.seat, actions))

    def readable(self, error: RuleError | str) -> str:
        """A rule's sentence with seat numbers turned into names and card ids into beans."""
        text = str(error)
        text = re.sub(r"\bseat (\d+)", lambda m: self._seat_words(int(m.group(1))), text)
        return re.sub(r"(?<!hand )\bcard (\d+)", lambda m: _card_words(int(m.group(1))), text)

    def _seat_words(self, seat: int) -> str:
        return self.who(seat) if 0 <= seat < len(self.names) else f"seat {seat + 1}"


def _card_words(card: Card) -> str:
    try:
        return f"the {bean_of(card)} card"
    except ValueError:
        return f"card {card}"


def field_words(cards: Sequence[Card]) -> str:
    """A field as players say it: "chili 4" or "empty"."""
    return f"{bean_of(cards[0])} {len(cards)}" if cards else "empty"


def next_coins(bean: Bean, count: int) -> tuple[int, int] | None:
    """The next coins a field of `count` beans earns and at how many cards ((2, 6): 2 coins
    at 6); None when no more beans pay more."""
    now = coins(bean, count)
    for paid, need in enumerate(BEANOMETER[bean], 1):
        if need is not None and paid > now and need > count:
            return paid, need
    return None


def pays_words(cards: Sequence[Card]) -> str:
    """What a field pays now and at its next coin step: "1c, 2c at 6" (or "4c": no more)."""
    bean, count = bean_of(cards[0]), len(cards)
    following = next_coins(bean, count)
    now = f"{coins(bean, count)}c"
    return now if following is None else f"{now}, {following[0]}c at {following[1]}"


def unseen_beans(view: PlayerView) -> dict[Bean, int]:
    """For each bean of this game, its cards this seat has never seen: cards never opened to
    everyone (still in the first deck, or hidden in the others' hands) that are not in this
    seat's own hand. The cards of a later deck all came from the discard pile: seen."""
    unseen = view.state.hidden[0] - set(view.hand.values())
    counted = dict.fromkeys(view.state.setup.beans, 0)
    for card in unseen:
        counted[bean_of(card)] += 1
    return counted


def deck_count(view: PlayerView, bean: Bean) -> int:
    """How many cards of a bean this game's deck has (0: taken out for this many players)."""
    return COUNT[bean] if bean in view.state.setup.beans else 0


def bean_list(beans: Iterable[Bean]) -> str:
    """Beans with counts, in first-seen order: "2 chili, soy"."""
    counted: dict[Bean, int] = {}
    for bean in beans:
        counted[bean] = counted.get(bean, 0) + 1
    return ", ".join(f"{n} {bean}" if n > 1 else str(bean) for bean, n in counted.items())


def join_words(words: Sequence[str], last: str = "and") -> str:
    """ "a", "a and b", "a, b and c"."""
    if len(words) <= 1:
        return "".join(words)
    return f"{', '.join(words[:-1])} {last} {words[-1]}"


def offer_summary(view: PlayerView, offer: Offer) -> str:
    """An offer in a few words, by bean: "Ann: chili, soy for 2 blue"."""
    opened = {h.slot: h.card for h in view.state.players[offer.maker].hand}
    gives = [bean_of(c) for c in (opened.get(s) for s in offer.give_hand) if c is not None]
    gives += [bean_of(c) for c in offer.give_face_up]
    wants = [bean_of(c) for c in offer.want_cards]
    wants += [bean for bean, count in offer.want_beans for _ in range(count)]
    given, wanted = bean_list(gives) or "nothing", bean_list(wants) or "nothing"
    return f"{view.who(offer.maker)}: {given} for {wanted}"


# A name a bot is given (`bean-client bot`: bot-XXXX; `bean-client play`: bot1, bot2, ...).
BOT_NAME = re.compile(r"bot([-_ ]|\d|$)", re.IGNORECASE)


def bot_label(name: str, key: bytes, own_bots: Mapping[bytes, str]) -> str:
    """What is known of a player being a bot: one this client started, known by its key (no
    lobby or player can give another seat that key: the peers check it on every link), or
    one whose name says so, which is only its own claim. Empty for anyone else."""
    if key in own_bots:
        return f"your bot, {own_bots[key]}"
    return "named as a bot" if BOT_NAME.match(name) else ""
