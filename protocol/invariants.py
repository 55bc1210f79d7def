"""Consistency laws every reachable state obeys; the simulator and the property tests check them.

A non-empty result means the engine has a bug: these are not rules a player can break.
"""

from __future__ import annotations

from collections import Counter

from protocol.cards import bean_of
from protocol.rules import Phase, Slot, State, offer_possible


def violations(state: State) -> list[str]:
    found: list[str] = []
    found += _cards_in_one_place(state)
    found += _hidden_slots_match(state)
    found += _fields_well_formed(state)
    found += _phase_consistent(state)
    found += _offers_consistent(state)
    return found


def _cards_in_one_place(state: State) -> list[str]:
    """Every card of the game is in exactly one place, hidden or public, across reshuffles."""
    places: Counter[int] = Counter()
    for player in state.players:
        places.update(h.card for h in player.hand if h.card is not None)
        for field in player.fields:
            places.update(field)
        places.update(player.earnings)
        places.update(player.pending)
    places.update(state.face_up)
    places.update(state.discard)
    for hidden in state.hidden:
        places.update(hidden)
    found = [f"card {card} is in {n} places" for card, n in sorted(places.items()) if n > 1]
    expected = set(state.setup.deck)
    missing = expected - set(places)
    extra = set(places) - expected
    if missing:
        found.append(f"cards lost: {sorted(missing)}")
    if extra:
        found.append(f"cards not in this game's deck: {sorted(extra)}")
    return found


def _hidden_slots_match(state: State) -> list[str]:
    """Each epoch has exactly as many hidden slots (in hands, being turned, in the deck) as it
    has unopened cards, and no slot is in two places."""
    found = []
    slots: list[Slot] = [h.slot for p in state.players for h in p.hand if h.card is None]
    slots += state.reveal_slots
    slots += [Slot(state.deck.epoch, i) for i in range(state.deck.drawn, state.deck.size)]
    known_slots = [h.slot for p in state.players for h in p.hand if h.card is not None]
    every_slot = slots + known_slots
    if len(set(every_slot)) != len(every_slot):
        found.append("a deck slot is in two places")
    per_epoch = Counter(slot.epoch for slot in slots)
    for epoch, hidden in enumerate(state.hidden):
        if per_epoch[epoch] != len(hidden):
            found.append(
                f"epoch {epoch}: {per_epoch[epoch]} hidden slots but {len(hidden)} unopened cards"
            )
        if not hidden <= set(state.epochs[epoch]):
            found.append(f"epoch {epoch}: unopened cards that were never in its deck")
    for slot in every_slot:
        if not (
            0 <= slot.epoch < len(state.epochs)
            and 0 <= slot.position < len(state.epochs[slot.epoch])
        ):
            found.append(f"slot {slot} lies outside its epoch's deck")
    if len(state.epochs) != len(state.hidden):
        found.append("epochs and hidden sets differ in number")
    final = state.exhaustions == state.setup.exhaustions_to_end
    if len(state.epochs) - 1 != state.exhaustions - (1 if final else 0):
        found.append(f"{len(state.epochs)} epochs after {state.exhaustions} exhaustions")
    if state.exhaustions > state.setup.exhaustions_to_end:
        found.append("more exhaustions than the game allows")
    return found


def _fields_well_formed(state: State) -> list[str]:
    found = []
    for seat, player in enumerate(state.players):
        if not state.setup.start_fields <= len(player.fields) <= 3:
            found.append(f"seat {seat} has {len(player.fields)} fields")
        for i, field in enumerate(player.fields):
            if len({bean_of(card) for card in field}) > 1:
                found.append(f"seat {seat} field {i + 1} mixes bean types")
    return found


def _phase_consistent(state: State) -> list[str]:
    found = []
    phase = state.phase
    if state.face_up and phase is not Phase.TRADE:
        found.append("face-up cards outside trading")
    if state.reveal_slots and phase is not Phase.REVEAL:
        found.append("cards being turned outside the reveal")
    if phase is Phase.REVEAL and not state.reveal_slots:
        found.append("a reveal with nothing to turn")
    pending = any(p.pending for p in state.players)
    if pending and phase not in (Phase.TRADE, Phase.PLANT_PENDING):
        found.append(f"cards wait to be planted in phase {phase}")
    if phase is Phase.PLANT_PENDING and not pending:
        found.append("step 3 with nothing to plant")
    if (state.offers or state.bids) and phase is not Phase.TRADE:
        found.append("open offers or bids outside trading")
    if not 0 <= state.planted <= 2:
        found.append(f"{state.planted} cards planted in step 1")
    if phase is Phase.PLANT and not state.players[state.active].hand:
        found.append("step 1 with an empty hand")
    if (phase is Phase.OVER) != (state.result is not None):
        found.append("a result without the end, or the end without a result")
    if phase is Phase.OVER and any(f for p in state.players for f in p.fields):
        found.append("fields left unsold at the end")
    if not 0 <= state.active < len(state.players):
        found.append("the active seat does not exist")
    return found


def _offers_consistent(state: State) -> list[str]:
    found = []
    ids = [o.id for o in state.offers]
    if len(set(ids)) != len(ids) or any(i >= state.next_offer_id for i in ids):
        found.append("offer ids repeat or run ahead")
    found += [
        f"offer {o.id} can no longer happen" for o in state.offers if not offer_possible(state, o)
    ]
    open_ids = set(ids)
    if any(offer_id not in open_ids for offer_id, _ in state.rejections):
        found.append("a rejection of an offer that is not open")
    found += _bids_consistent(state)
    return found


def _bids_consistent(state: State) -> list[str]:
    """Bids stand on open offers to everyone, once per bidder, on opened cards of the bidder's
    hand; nothing is promised twice (to two offers, two bids, or one of each)."""
    found = []
    offers = {o.id: o for o in state.offers}
    seen: set[tuple[int, int]] = set()
    for bid in state.bids:
        offer = offers.get(bid.offer)
        if offer is None or offer.to is not None or offer.maker == bid.bidder:
            found.append(f"a bid by seat {bid.bidder} on offer {bid.offer}, which takes no bids")
        if (bid.offer, bid.bidder) in seen or (bid.offer, bid.bidder) in state.rejections:
            found.append(f"seat {bid.bidder} answered offer {bid.offer} twice")
        seen.add((bid.offer, bid.bidder))
        opened = {h.slot for h in state.players[bid.bidder].hand if h.card is not None}
        if not set(bid.give_hand) <= opened:
            found.append(f"seat {bid.bidder} bids on offer {bid.offer} with cards not open")
    for seat in range(len(state.players)):
        promises: list[object] = [s for o in state.offers if o.maker == seat for s in o.give_hand]
        promises += [c for o in state.offers if o.maker == seat for c in o.give_face_up]
        promises += [s for b in state.bids if b.bidder == seat for s in b.give_hand]
        if len(set(promises)) != len(promises):
            found.append(f"seat {seat} has promised a card twice")
    return found
