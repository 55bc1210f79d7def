"""The planner: a strategy that plans plantings and trades by the coins they are likely to bring.

It sees what its seat sees (the shared state and its own hand) and values a farm with
client.farm: its hand is a queue planted from the front, so a card that would force a bad
harvest is worth trading or giving away, and cards it must plant are planted in the order and
with the harvests that keep the most. Its trading (making offers, answering them, and choosing
among takers) lives in client.trading and uses the same values.
"""

from __future__ import annotations

from client.farm import (
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
    ways_to_plant,
)
from client.strategy import Hand, Strategy, legal_prefix
from client.trading import Trader
from protocol.cards import Card
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


class PlannerBot(Strategy):
    """Plans plantings, harvests, the third field and trades by their expected coins."""

    name = "planner"

    def __init__(self, tuning: Tuning = TUNING) -> None:
        self.tuning = tuning
        self.trader = Trader()

    def decide(self, state: State, seat: int, hand: Hand) -> list[Action]:
        if state.phase in (Phase.OVER, Phase.REVEAL):
            return []
        farm = Holding.of(state, seat, hand, self.tuning)
        actions = self._tend_fields(state, farm)
        if actions:
            return legal_prefix(state, seat, actions)
        if state.phase is Phase.PLANT and seat == state.active:
            actions = self._plant_from_hand(state, farm)
        elif state.phase is Phase.TRADE:
            actions = self.trader.trade(state, seat, hand, farm)
        elif state.phase is Phase.PLANT_PENDING and farm.pending:
            actions = self._plant_pending(state, farm)
        return legal_prefix(state, seat, actions)

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
        options: list[tuple[float, list[Action]]] = []
        if state.planted == 0:
            first_card = farm.hand[0][1]
            for earned, after, actions in _ways_to_plant(farm.fields, queue[0], first_card, farm):
                options.append((earned + farm_value(after, queue[1:], farm.out), actions))
                if len(farm.hand) > 1:
                    card = farm.hand[1][1]
                    for more, final, second in _ways_to_plant(after, queue[1], card, farm):
                        value = earned + more + farm_value(final, queue[2:], farm.out)
                        options.append((value, actions + second))
        else:
            options.append((farm_value(farm.fields, queue, farm.out), [EndPlanting()]))
            card = farm.hand[0][1]
            for earned, after, second in _ways_to_plant(farm.fields, queue[0], card, farm):
                options.append((earned + farm_value(after, queue[1:], farm.out), second))
        if not options:
            return []
        value, actions = max(options, key=lambda option: option[0])
        if state.planted + sum(isinstance(a, Plant) for a in actions) == 1:
            actions = [*actions, EndPlanting()]
        return actions

    # --- Step 3: the cards received or kept -----------------------------------------------------

    def _plant_pending(self, state: State, farm: Holding) -> list[Action]:
        plan = plan_planting(
            farm.fields, [index_of(c) for c in farm.pending], farm.queue(), farm.out
        )
        cards = {index_of(c): [] for c in farm.pending}  # type: dict[int, list[Card]]
        for card in farm.pending:
            cards[index_of(card)].append(card)
        actions: list[Action] = []
        for kind, first, second in plan.steps:
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
