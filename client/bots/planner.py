"""The planner: a strategy that plans plantings and trades by the coins they are likely to bring.

It sees what its seat sees (the shared state and its own hand) and values a farm with
client.bots.farm: its hand is a queue planted from the front, so a card that would force a bad
harvest is worth trading or giving away, and cards it must plant are planted in the order and
with the harvests that keep the most. Its trading (making offers, answering them, and choosing
among takers) lives in client.bots.trading and uses the same values.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from client.bots.farm import (
    EMPTY,
    FULL,
    TUNING,
    Field,
    Holding,
    Tuning,
    farm_value,
    index_of,
    may_harvest,
    plan_planting,
    planting_outcomes,
    rollout_value,
    sample_futures,
    ways_to_plant,
)
from client.bots.strategy import Hand, Strategy, legal_prefix
from client.bots.trading import Trader
from protocol.cards import Card
from protocol.kdf import Stream
from protocol.rules import (
    Action,
    BuyField,
    EndPlanting,
    Harvest,
    Phase,
    Plant,
    PlantPending,
    State,
)


@dataclass(frozen=True)
class Option:
    """One way to do what must be done now: its actions, the coins they harvest, and the
    fields and hand they leave."""

    actions: tuple[Action, ...]
    earned: float
    fields: tuple[Field, ...]
    queue: tuple[int, ...]

    def value(self, farm: Holding) -> float:
        return self.earned + farm_value(self.fields, self.queue, farm.out)


class PlannerBot(Strategy):
    """Plans plantings, harvests, the third field and trades by their expected coins.

    With `rollouts` > 0, the best few ways to plant (by the farm's value) are judged again
    by that many determinized futures of the unseen cards (client.bots.farm.rollout_value)."""

    name = "planner"

    def __init__(
        self,
        tuning: Tuning = TUNING,
        rollouts: int = 0,
        finalists: int = 4,
        seed: bytes = b"planner's futures",
    ) -> None:
        self.tuning = tuning
        self.rollouts = rollouts
        self.finalists = finalists
        self.seed = seed
        self.trader = Trader()

    def decide(self, state: State, seat: int, hand: Hand) -> list[Action]:
        if state.phase in (Phase.OVER, Phase.REVEAL):
            return []
        farm = Holding.of(state, seat, hand, self.tuning)
        actions = self._tend_fields(state, farm)
        if actions:
            return legal_prefix(state, seat, actions)
        if state.phase is Phase.TRADE:
            return self.trader.trade(state, seat, hand, farm)
        if state.phase is Phase.PLANT and seat == state.active:
            actions = self._plant_from_hand(state, farm)
        elif state.phase is Phase.PLANT_PENDING and farm.pending:
            actions = self._plant_pending(state, farm)
        return legal_prefix(state, seat, actions)

    def stop_waiting(self, state: State, seat: int, hand: Hand) -> list[Action]:
        """The answers are not coming: the active player chooses among its takers, or ends
        trading."""
        if state.phase is not Phase.TRADE:
            return []
        farm = Holding.of(state, seat, hand, self.tuning)
        return self.trader.stop_waiting(state, seat, hand, farm)

    def _best(self, state: State, farm: Holding, options: Sequence[Option]) -> Option:
        """The option worth most to the farm; with rollouts, the best few judged again on the
        same futures (drawn from a stream seeded by the bot and what the table shows)."""
        ranked = sorted(options, key=lambda option: -option.value(farm))
        if self.rollouts <= 0 or len(ranked) == 1:
            return ranked[0]
        stream = Stream(self.seed, "futures", farm.seat, state.turn, state.phase.value)
        futures = sample_futures(farm.out, self.rollouts, stream)
        return max(
            ranked[: self.finalists],
            key=lambda o: o.earned + rollout_value(o.fields, o.queue, farm.out, futures),
        )

    # --- At any time: a full field is sold, a third field bought when it pays -------------------

    def _tend_fields(self, state: State, farm: Holding) -> list[Action]:
        fields = farm.fields
        for i, (bean, cards) in enumerate(fields):
            if bean != EMPTY and cards >= FULL[bean] and may_harvest(fields, i, farm.out.rule):
                return [Harvest(i)]  # it can earn nothing more and holds a field
        setup = state.setup
        if setup.can_buy_field and len(fields) == 2 and farm.coins >= setup.field_cost:
            with_third = Holding(
                farm.seat, (*fields, (EMPTY, 0)), farm.hand, farm.pending, farm.coins, farm.out
            )
            if with_third.worth() - farm.worth() > setup.field_cost + 0.25:
                return [BuyField()]
        return []

    # --- Step 1: the front card, and maybe the next one ---------------------------------------

    def _plant_from_hand(self, state: State, farm: Holding) -> list[Action]:
        if not farm.hand or state.planted >= 2:
            return []
        queue = farm.queue()
        options: list[Option] = []
        if state.planted == 0:
            first = farm.hand[0][1]
            for earned, after, actions in _ways_to_plant(farm.fields, queue[0], first, farm):
                options.append(Option((*actions, EndPlanting()), earned, after, queue[1:]))
                if len(farm.hand) > 1:
                    card = farm.hand[1][1]
                    for more, final, second in _ways_to_plant(after, queue[1], card, farm):
                        both = (*actions, *second)
                        options.append(Option(both, earned + more, final, queue[2:]))
        else:
            options.append(Option((EndPlanting(),), 0.0, farm.fields, queue))
            card = farm.hand[0][1]
            for earned, after, second in _ways_to_plant(farm.fields, queue[0], card, farm):
                options.append(Option(tuple(second), earned, after, queue[1:]))
        return list(self._best(state, farm, options).actions) if options else []

    # --- Step 3: the cards received or kept -----------------------------------------------------

    def _plant_pending(self, state: State, farm: Holding) -> list[Action]:
        queue = farm.queue()
        pending = [index_of(c) for c in farm.pending]
        if self.rollouts <= 0:
            plan = plan_planting(farm.fields, pending, queue, farm.out)
            return _pending_actions(farm, plan.steps)
        options = [
            Option(tuple(_pending_actions(farm, steps)), earned, fields, queue)
            for fields, (earned, steps) in planting_outcomes(
                farm.fields, pending, farm.out.rule
            ).items()
        ]
        return list(self._best(state, farm, options).actions)


def _pending_actions(farm: Holding, steps: Sequence[tuple[str, int, int]]) -> list[Action]:
    """A planting plan's steps as actions on the seat's own cards to plant."""
    cards: dict[int, list[Card]] = {}
    for card in farm.pending:
        cards.setdefault(index_of(card), []).append(card)
    actions: list[Action] = []
    for kind, first, second in steps:
        if kind == "harvest":
            actions.append(Harvest(first))
        else:
            actions.append(PlantPending(cards[first].pop(), second))
    return actions


def _ways_to_plant(
    fields: tuple[Field, ...], bean: int, card: Card, farm: Holding
) -> list[tuple[float, tuple[Field, ...], list[Action]]]:
    """Each way to plant one hand card: (coins harvested, fields after, actions)."""
    ways = []
    for steps, after, earned in ways_to_plant(fields, bean, 1, farm.out.rule):
        actions: list[Action] = [
            Harvest(first) if kind == "harvest" else Plant(second, card)
            for kind, first, second in steps
        ]
        ways.append((earned, after, actions))
    return ways
