"""The players' actions on the wire: one map per action, tagged by `type`, every field checked.

The rules engine's action classes stay free of wire concerns; this module maps each to a small
schema built from `protocol.messages` specs, so a step message from a peer is refused with a
sentence naming the field before the rules ever see it. The rules then judge what is legal.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from protocol.cards import ALL_CARDS, MAX_PLAYERS, Bean
from protocol.messages import FieldProblem, Int, ListOf, Nullable, Spec
from protocol.rules import (
    MAX_BEANS_WANTED,
    MAX_OPEN_OFFERS_PER_PLAYER,
    Accept,
    Action,
    BuyField,
    EndPlanting,
    EndTrading,
    Harvest,
    MakeOffer,
    Plant,
    PlantPending,
    Reject,
    Slot,
    Take,
    Withdraw,
)

CARD = Int(0, len(ALL_CARDS) - 1)
FIELD = Int(0, 2)
SEAT = Int(0, MAX_PLAYERS - 1)
OFFER_ID = Int(1, 2**31 - 1)
EPOCH = Int(0, 1000)


class SlotCard(Spec):
    """A hand card being opened: [epoch, position, card] on the wire, (Slot, card) in Python."""

    def parse(self, value: object, path: str) -> tuple[Slot, int]:
        if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], Slot):
            value = [value[0].epoch, value[0].position, value[1]]
        if not isinstance(value, list | tuple) or len(value) != 3:
            raise FieldProblem(path, "must be a list [epoch, position, card]")
        epoch = EPOCH.parse(value[0], f"{path}[0]")
        position = CARD.parse(value[1], f"{path}[1]")
        return Slot(epoch, position), CARD.parse(value[2], f"{path}[2]")

    def to_wire(self, value: Any) -> Any:
        slot, card = value
        return [slot.epoch, slot.position, card]


class BeanCount(Spec):
    """A wanted bean type and how many: [name, count] on the wire, (Bean, count) in Python."""

    def parse(self, value: object, path: str) -> tuple[Bean, int]:
        if not isinstance(value, list | tuple) or len(value) != 2:
            raise FieldProblem(path, "must be a list [bean, count]")
        name, count = value
        try:
            bean = Bean(name)
        except ValueError:
            raise FieldProblem(f"{path}[0]", "must be a bean name") from None
        return bean, Int(1, MAX_BEANS_WANTED).parse(count, f"{path}[1]")

    def to_wire(self, value: Any) -> Any:
        bean, count = value
        return [bean.value, count]


HAND_CARDS = ListOf(SlotCard(), 0, len(ALL_CARDS))
CARDS = ListOf(CARD, 0, MAX_OPEN_OFFERS_PER_PLAYER)

ACTION_SCHEMAS: dict[str, tuple[type, Mapping[str, Spec]]] = {
    "plant": (Plant, {"field": FIELD, "card": CARD}),
    "end_planting": (EndPlanting, {}),
    "harvest": (Harvest, {"field": FIELD}),
    "buy_field": (BuyField, {}),
    "offer": (
        MakeOffer,
        {
            "to": Nullable(SEAT),
            "give_hand": HAND_CARDS,
            "give_face_up": ListOf(CARD, 0, 2),
            "want_cards": CARDS,
            "want_beans": ListOf(BeanCount(), 0, len(Bean)),
        },
    ),
    "accept": (Accept, {"offer": OFFER_ID, "give_hand": HAND_CARDS}),
    "reject": (Reject, {"offer": OFFER_ID}),
    "withdraw": (Withdraw, {"offer": OFFER_ID}),
    "take": (Take, {"offer": OFFER_ID, "bidder": SEAT}),
    "end_trading": (EndTrading, {}),
    "plant_pending": (PlantPending, {"card": CARD, "field": FIELD}),
}
_TYPE_OF = {cls: name for name, (cls, _) in ACTION_SCHEMAS.items()}


def action_to_wire(action: Action) -> dict[str, Any]:
    name = _TYPE_OF.get(type(action))
    if name is None:
        raise ValueError(f"{type(action).__name__} is not sent between peers")
    specs = ACTION_SCHEMAS[name][1]
    wire = {f.name: specs[f.name].to_wire(getattr(action, f.name)) for f in fields(action)}
    return {"type": name, **wire}


def action_from_wire(value: object, path: str = "action") -> Action:
    """The action in a received map; FieldProblem names the field at fault."""
    if type(value) is not dict:
        raise FieldProblem(path, "must be a map with a 'type'")
    name = value.get("type")
    if type(name) is not str or name not in ACTION_SCHEMAS:
        raise FieldProblem(f"{path}.type", f"must be one of {', '.join(ACTION_SCHEMAS)}")
    cls, specs = ACTION_SCHEMAS[name]
    extra = set(value) - set(specs) - {"type"}
    if extra:
        raise FieldProblem(f"{path}.{sorted(map(str, extra))[0]}", f"is not a field of {name}")
    missing = set(specs) - set(value)
    if missing:
        raise FieldProblem(f"{path}.{sorted(missing)[0]}", "is missing")
    action: Action = cls(**{k: spec.parse(value[k], f"{path}.{k}") for k, spec in specs.items()})
    return action


class ActionSpec(Spec):
    """A schema field holding one action."""

    def parse(self, value: object, path: str) -> Action:
        if type(value) in _TYPE_OF:  # an action made here: checked like a received one
            value = action_to_wire(value)  # type: ignore[arg-type]
        return action_from_wire(value, path)

    def to_wire(self, value: Any) -> Any:
        return action_to_wire(value)
