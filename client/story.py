"""The story of a game for its end: every harvest (who, when, which bean, how many cards, how
many coins) and everyone's coins at the end of each turn.

`GameStory` is fed the actions as the lockstep applies them (`add` takes a step's report): live
at the screen, from the game file when a seat comes back from a crash (the steps it replays),
and offline by `bean-client replay --summary`. It is the same whoever feeds it, since every
seat applies the same actions to the same shared state. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from protocol.cards import Bean, bean_of, coins
from protocol.lockstep import StepReport
from protocol.rules import Action, Harvest, Plant, PlantPending, Result, State, harvest_value


@dataclass(frozen=True)
class Sale:
    """A field sold: by a harvest during the game, or in the final scoring (`at_end`)."""

    turn: int
    seat: int
    bean: Bean
    cards: int
    coins: int
    at_end: bool = False


@dataclass
class GameStory:
    sales: list[Sale] = field(default_factory=list)
    coins: dict[int, tuple[int, ...]] = field(default_factory=dict)  # turn: each seat's coins
    result: Result | None = None

    def add(self, report: StepReport) -> None:
        for applied in report.applied:
            self.applied(applied.seat, applied.action, applied.before, applied.after)

    def applied(self, seat: int | None, action: Action, before: State, after: State) -> None:
        """One action as the rules applied it (seat None: the table's own)."""
        if isinstance(action, Harvest) and seat is not None:
            cards = before.players[seat].fields[action.field]
            value = harvest_value(before, seat, action.field)
            self.sales.append(Sale(before.turn, seat, bean_of(cards[0]), len(cards), value))
        if after.result is not None and before.result is None:
            self._final_scoring(seat, action, before, after.result)
        if after.turn != before.turn or after.result is not None:
            self.coins[before.turn] = tuple(len(p.earnings) for p in after.players)

    def _final_scoring(
        self, seat: int | None, action: Action, before: State, result: Result
    ) -> None:
        """The fields sold when the game ended: as they stood before the last action, with
        the card it planted (the only action that ends a game and changes a field)."""
        self.result = result
        planted = (
            (seat, action.field, action.card) if isinstance(action, Plant | PlantPending) else None
        )
        for owner, player in enumerate(before.players):
            for index, cards in enumerate(player.fields):
                held = list(cards)
                if planted is not None and planted[:2] == (owner, index):
                    held.append(planted[2])
                if held:
                    bean = bean_of(held[0])
                    value = coins(bean, len(held))
                    self.sales.append(Sale(before.turn, owner, bean, len(held), value, True))

    @property
    def turns(self) -> int:
        """The turns played to their end (or to the end of the game)."""
        return max(self.coins, default=0)

    def coins_of(self, seat: int) -> list[int]:
        """A seat's coins at the end of turns 1, 2, ... (a turn not seen keeps the last count)."""
        series, last = [], 0
        for turn in range(1, self.turns + 1):
            counts = self.coins.get(turn)
            last = counts[seat] if counts is not None else last
            series.append(last)
        return series

    def sales_of(self, seat: int) -> list[Sale]:
        return [sale for sale in self.sales if sale.seat == seat]
