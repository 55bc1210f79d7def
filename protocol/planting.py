"""Where a card should go and which harvest gives up least: the plain judgement of fields that
the greedy bot plays by and the turn clock's default moves use (client.turn_clock), so that a
player whose time runs out gets the moves a sensible player would make. Pure."""

from __future__ import annotations

from collections.abc import Sequence

from protocol.cards import BEANOMETER, Bean, Card, bean_of, coins
from protocol.rules import Harvest, State, legal_actions


def field_worth(bean: Bean, count: int) -> float:
    """Coins the field pays now, plus credit for being close to its next coin."""
    paid = coins(bean, count)
    following = [need for need in BEANOMETER[bean] if need is not None and need > count]
    if not following or count == 0:
        return float(paid)
    return paid + 0.8 / (following[0] - count + 1)


def loss_of_harvest(cards: Sequence[Card]) -> float:
    """What is given up by harvesting this field now rather than letting it grow."""
    bean = bean_of(cards[0])
    return field_worth(bean, len(cards)) - coins(bean, len(cards)) + 0.3


def best_field(fields: Sequence[Sequence[Card]], card: Card) -> int | None:
    """The field this card should go to without a harvest: its bean's fullest field, else an
    empty one; None when it fits nowhere."""
    bean = bean_of(card)
    matching = [i for i, f in enumerate(fields) if f and bean_of(f[0]) == bean]
    if matching:
        return max(matching, key=lambda i: len(fields[i]))
    empty = [i for i, f in enumerate(fields) if not f]
    return empty[0] if empty else None


def harvest_to_make_room(state: State, seat: int) -> Harvest | None:
    """The legal harvest that loses least (most coins now, least growth given up)."""
    fields = state.players[seat].fields
    options = [a for a in legal_actions(state, seat) if isinstance(a, Harvest)]
    if not options:
        return None
    return min(options, key=lambda h: (loss_of_harvest(fields[h.field]), -len(fields[h.field])))
