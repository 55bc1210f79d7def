"""An automated person at the REPL's keyboard, for tests.

The typist watches the game its screen shows (after every step, and whenever the prompt comes
back after a line) and types command lines into the prompt's input, one at a time, as a person
would. It plays like a greedy bot (client.bots.strategies.GreedyBot, its moves written out with
client.screen.commands.command_for), except for a few moves it makes whenever it can until they have
happened, so that a test sees every kind of exchange:

- it makes an offer a bot accepts: a counter to a bot's offer, or a hand card the active bot
  values more than the face-up card it asks for,
- it accepts a bot's offer or gift, and plants what it received,
- it gives a face-up card to a bot that can use it,
- as the active player it gives a card that both bots can use (face up, or from its hand) to
  everyone, waits for both to take it and takes the second taker (`take 7 bot2`),
- it bids on a bot's offer to everyone until a bot takes another player's bid instead,
- it types the short form of a move where that asks a question (`harvest`, `accept 7`,
  `plant`) and answers with the choice's number.

As the active player it looks at the table for a moment before trading (`patience`), so the
bots have a step to make their offers; when the game waits for it and it has nothing to type,
it looks again after `patience` (and, waiting for answers to its offers, gives up after a few
looks).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from prompt_toolkit.input import PipeInput

from client.bots.strategies import GreedyBot, planting_gain
from client.game import Outcome, PeerGame
from client.screen import GameScreen, PlayerView
from client.screen.commands import (
    CommandError,
    Question,
    Submit,
    command_for,
    parse_game_command,
    player_token,
)
from protocol.cards import bean_of
from protocol.lockstep import StepReport
from protocol.rules import (
    Accept,
    Action,
    EndTrading,
    Harvest,
    MakeOffer,
    Offer,
    Phase,
    Plant,
    PlantPending,
    State,
    Take,
    accepters,
    bids_on,
    legal_actions,
    promised,
    waiting_for,
)

# What a test wants to have seen, by the name the typist gives it.
GOALS = frozenset(
    {
        "offer accepted by a bot",  # an offer it made (wanting something) that a bot accepted
        "bot offer accepted",  # an offer or gift a bot made that it accepted
        "gift accepted by a bot",  # a gift it made that a bot accepted
        "harvest",
        "planted traded card",  # a card received in a trade, planted in step 3
        "question answered",  # a line that asked, answered by a number
        "took the second of two takers",  # of its offer to everyone
        "bid not chosen",  # it bid on a bot's offer to everyone; the bot took another bid
    }
)


Line = tuple[str, Question | None, int | None]  # a line, the question it asks, the answer


GIVE_UP_AFTER_LOOKS = 6  # looks (`patience` apart) it waits for answers to its offers


@dataclass
class Typed:
    """A line typed and not yet taken by the screen; `choice` answers the question it asks."""

    text: str
    mark: int  # how much the terminal had printed when it was typed
    question: Question | None = None
    choice: int | None = None
    answering: bool = False


@dataclass
class Typist:
    reactor: Any
    screen: GameScreen
    keyboard: PipeInput
    patience: float = 0.5
    typed: list[str] = field(default_factory=list)  # every line, in order
    seen: set[str] = field(default_factory=set)  # the GOALS that happened
    _line: Typed | None = None
    _awaiting_step: bool = False  # actions were submitted: the step playing them comes first
    _game: PeerGame | None = None
    _timer: Any = None  # looking again after `patience`
    _strategy: GreedyBot = field(default_factory=GreedyBot)
    _made: dict[int, bool] = field(default_factory=dict)  # my offers: id -> wants something
    _countered: set[int] = field(default_factory=set)
    _kept: set[int] = field(default_factory=set)  # face-up cards I kept (not traded)
    _lingered: int = -1  # the turn in which it last looked before trading
    _looks: int = 0  # looks with nothing to type while trading, in turn `_looks_turn`
    _looks_turn: int = -1
    _taking: tuple[int, int] | None = None  # (offer, second taker) it typed take for
    _bid_on: set[int] = field(default_factory=set)  # bots' offers to everyone it bid on
    took: tuple[int, str] | None = None  # (offer, the second taker's name) once taken

    def __post_init__(self) -> None:
        player = self.screen.player
        step_played, notice, finished = player.step_played, player.notice, player.finished

        def on_step(game: PeerGame, report: StepReport) -> None:
            step_played(game, report)
            self._awaiting_step = False
            self._note(game, report)
            self._look()

        def on_notice(game: PeerGame, text: str) -> None:
            notice(game, text)
            self._awaiting_step = False  # a move that could not be made is not coming
            self._look()

        def on_finish(game: PeerGame, outcome: Outcome) -> None:
            finished(game, outcome)
            self._cancel()

        player.step_played = on_step  # type: ignore[method-assign]
        player.notice = on_notice  # type: ignore[method-assign]
        player.finished = on_finish  # type: ignore[method-assign]
        self._at_next_prompt()

    # --- watching ----------------------------------------------------------------------------

    def _at_next_prompt(self) -> None:
        self.screen.session.app.pre_run_callables.append(self._prompt_back)

    def _prompt_back(self) -> None:
        """The prompt is back: the screen has taken the line typed last (if any). (Called
        while prompt_toolkit runs its pre-run list, which must not grow meanwhile.)"""
        self.reactor.callLater(0, self._taken)

    def _taken(self) -> None:
        self._at_next_prompt()
        typed, self._line = self._line, None
        if typed is not None and typed.question is not None and self._was_asked(typed):
            self._type(str(typed.choice), answering=True)
        else:
            self._look()

    def _was_asked(self, typed: Typed) -> bool:
        assert typed.question is not None
        printed = self.screen.terminal.printed[typed.mark :]
        return any(text.startswith(typed.question.prompt) for text in printed)

    def _look(self) -> None:
        """Type the next line, if the game is settled and there is something to do."""
        self._cancel()
        game = self.screen.game
        if game is None or game.outcome is not None or self._line is not None:
            return
        if self._awaiting_step or game.queued or game.inbox.get(game.step):
            return  # a step is under way; it is looked at once played
        if not self.screen.session.app.is_running:
            return  # looked at when the prompt is back
        self._hook_submit(game)
        view = self.screen.player.view(game)
        if view is None:
            return
        typed = self._choose(view)
        if typed is not None:
            self._type(*typed)
        elif any(seat == view.seat for seat, _ in waiting_for(view.state)):
            self._timer = self.reactor.callLater(self.patience, self._look)

    def _hook_submit(self, game: PeerGame) -> None:
        """Know when the screen submits actions (and so a step is coming)."""
        if self._game is game:
            return
        self._game = game
        submit = game.submit

        def submitted(actions: Any) -> None:
            submit(actions)  # a RuleError goes to the screen, which says why
            self._awaiting_step = True
            if self._line is not None and self._line.answering:
                self.seen.add("question answered")

        game.submit = submitted  # type: ignore[method-assign]

    def _type(
        self,
        text: str,
        question: Question | None = None,
        choice: int | None = None,
        answering: bool = False,
    ) -> None:
        mark = len(self.screen.terminal.printed)
        self._line = Typed(text, mark, question, choice, answering)
        self.typed.append(text)
        self.keyboard.send_text(text + "\r")

    def _cancel(self) -> None:
        if self._timer is not None and self._timer.active():
            self._timer.cancel()
        self._timer = None

    def _note(self, game: PeerGame, report: StepReport) -> None:
        """Which goals the step's actions met."""
        me = game.seat
        for applied in report.applied:
            seat, action = applied.seat, applied.action
            if seat == me and isinstance(action, MakeOffer):
                self._made[applied.before.next_offer_id] = bool(
                    action.want_cards or action.want_beans
                )
            elif seat != me and isinstance(action, Accept) and action.offer in self._made:
                if _offer_in(applied.before, action.offer).to is not None:  # not a bid
                    wanted = self._made[action.offer]
                    self.seen.add("offer accepted by a bot" if wanted else "gift accepted by a bot")
            elif seat == me and isinstance(action, Accept):
                if _offer_in(applied.before, action.offer).to is not None:
                    self.seen.add("bot offer accepted")
            elif (
                seat == me
                and isinstance(action, Take)
                and self._taking
                == (
                    action.offer,
                    action.bidder,
                )
            ):
                self.seen.add("took the second of two takers")
                self.took = (action.offer, game.names[action.bidder])
            elif seat != me and isinstance(action, Take) and action.offer in self._bid_on:
                if action.bidder != me:
                    self.seen.add("bid not chosen")
            elif seat == me and isinstance(action, Harvest):
                self.seen.add("harvest")
            elif seat == me and isinstance(action, EndTrading):
                self._kept |= set(applied.before.face_up)
            elif seat == me and isinstance(action, PlantPending) and action.card not in self._kept:
                self.seen.add("planted traded card")

    # --- choosing ----------------------------------------------------------------------------

    def _choose(self, view: PlayerView) -> Line | None:
        state, me = view.state, view.seat
        trading = state.phase is Phase.TRADE and me == state.active
        if trading and self._lingered != state.turn:
            self._lingered = state.turn  # a moment to see the bots' offers first
            return None
        forced = self._forced(view)
        if forced is not None:
            return forced
        if self._awaiting_second_taker(view):
            return None  # looked at again after `patience`
        actions = self._strategy.decide(state, me, view.hand)
        if not actions and trading:
            # Waiting for answers to its offers: a person gives up after a few looks.
            self._looks = self._looks + 1 if self._looks_turn == state.turn else 1
            self._looks_turn = state.turn
            if self._looks > GIVE_UP_AFTER_LOOKS:
                actions = self._strategy.stop_waiting(state, me, view.hand)
        return self._line_for(view, actions) if actions else None

    def _forced(self, view: PlayerView) -> Line | None:
        """A move it makes whenever it can until it has happened once."""
        return (
            self._take_the_second_taker(view)
            or self._answer_bot_offer(view)
            or self._give_to_everyone(view)
            or self._bid_on_bot_offer(view)
            or self._offer_to_active_bot(view)
            or self._give_face_up_card(view)
        )

    def _my_offers_to_everyone(self, view: PlayerView) -> list[Offer]:
        return [o for o in view.state.offers if o.maker == view.seat and o.to is None]

    def _give_to_everyone(self, view: PlayerView) -> Line | None:
        """As the active player, a face-up or hand card every bot can plant, to everyone."""
        state, me = view.state, view.seat
        if (
            "took the second of two takers" in self.seen
            or me != state.active
            or state.phase is not Phase.TRADE
            or self._my_offers_to_everyone(view)
        ):
            return None
        others = [p for seat, p in enumerate(state.players) if seat != me]
        # Hand cards first: the bots ask for the face-up ones.
        cards = [(f"#{n}", card) for n, _, card in view.my_cards() if card is not None]
        cards += [(f"face {n}", card) for n, card in enumerate(state.face_up, 1)]
        for words, card in cards:
            if all(planting_gain(player.fields, card) > 0 for player in others):
                line = _checked(f"gift all {words}", view)
                if line is not None:
                    return line
        return None

    def _awaiting_second_taker(self, view: PlayerView) -> bool:
        """Its offer to everyone has one taker and another may still come."""
        if "took the second of two takers" in self.seen:
            return False
        return any(
            len(bids_on(view.state, o.id)) == 1 and accepters(view.state, o)
            for o in self._my_offers_to_everyone(view)
        )

    def _take_the_second_taker(self, view: PlayerView) -> Line | None:
        """Two players took its offer to everyone: it takes the second one the screen named."""
        if "took the second of two takers" in self.seen:
            return None
        for offer in self._my_offers_to_everyone(view):
            bids = bids_on(view.state, offer.id)
            if len(bids) >= 2:
                self._taking = (offer.id, bids[1].bidder)
                return _checked(f"take {offer.id} {player_token(view, bids[1].bidder)}", view)
        return None

    def _bid_on_bot_offer(self, view: PlayerView) -> Line | None:
        """Take a bot's offer to everyone (a bid), until a bot has chosen another bid."""
        if "bid not chosen" in self.seen:
            return None
        offers = {o.id: o for o in view.state.offers}
        for accept in legal_actions(view.state, view.seat, view.hand):
            if isinstance(accept, Accept) and offers[accept.offer].to is None:
                self._bid_on.add(accept.offer)
                return self._line_for(view, [accept])
        return None

    def _answer_bot_offer(self, view: PlayerView) -> Line | None:
        """Accept a bot's offer, or counter one (the bot gets what it asked for, so it
        accepts). Accepting comes first: a counter promises the face-up card the bot asked
        for, and then the bot's own offer for it can no longer be accepted."""
        state, me = view.state, view.seat
        offers = {offer.id: offer for offer in state.offers}
        accepts = [
            a
            for a in legal_actions(state, me, view.hand)
            if isinstance(a, Accept) and a.offer not in self._countered
            and offers[a.offer].to is not None  # a trade, not a bid
        ]  # fmt: skip
        if accepts and "bot offer accepted" not in self.seen:
            return self._line_for(view, [accepts[0]])
        for accept in accepts:
            offer = offers[accept.offer]
            if "offer accepted by a bot" not in self.seen and _counterable(offer, view):
                self._countered.add(offer.id)
                faces = " ".join(f"face {state.face_up.index(c) + 1}" for c in offer.want_cards)
                return _checked(f"counter {offer.id} give {faces}", view)
        return None

    def _offer_to_active_bot(self, view: PlayerView) -> Line | None:
        """A hand card for a face-up card, which the active bot values more than what it
        gives (client.bots.strategies.GreedyBot weighs offers with `planting_gain`), and has not
        promised to an offer of its own."""
        state, me, active = view.state, view.seat, view.state.active
        if (
            "offer accepted by a bot" in self.seen
            or me == active
            or state.phase is not Phase.TRADE
            or any(offer.maker == me for offer in state.offers)
        ):
            return None
        fields = state.players[active].fields
        tied = promised(state, active)
        for face, wanted in enumerate(state.face_up, 1):
            if wanted in tied:
                continue
            for position, _, card in view.my_cards():
                if (
                    card is not None
                    and planting_gain(fields, card) > planting_gain(fields, wanted) + 0.3
                ):
                    to = player_token(view, active)
                    line = _checked(f"offer {to} give #{position} want face {face}", view)
                    if line is not None:
                        return line
        return None

    def _give_face_up_card(self, view: PlayerView) -> Line | None:
        """As the active player, a face-up card for a bot that can plant it."""
        state, me = view.state, view.seat
        mine_open = any(offer.maker == me for offer in state.offers)
        if "gift accepted by a bot" in self.seen or mine_open or me != state.active:
            return None
        for position, card in enumerate(state.face_up, 1):
            for seat, player in enumerate(state.players):
                if seat != me and planting_gain(player.fields, card) > 0:
                    return _checked(f"gift {player_token(view, seat)} face {position}", view)
        return None

    def _line_for(self, view: PlayerView, actions: list[Action]) -> Line:
        """The shortest line for the actions: one that asks, answered by the right number,
        where there is one; else the full line."""
        if len(actions) == 1:
            short = _short_line(actions[0], view)
            parsed = _parsed(short, view) if short else None
            if isinstance(parsed, Submit) and _same(parsed.actions, actions):
                return short, None, None
            if isinstance(parsed, Question):
                for number, choice in enumerate(parsed.choices, 1):
                    if _same(choice.actions, actions):
                        return short, parsed, number
        return "; ".join(command_for(action, view) for action in actions), None, None


def _offer_in(state: State, offer_id: int) -> Offer:
    return next(o for o in state.offers if o.id == offer_id)


def _counterable(offer: Offer, view: PlayerView) -> bool:
    """A bot's offer to me for face-up cards, which a counter can turn around."""
    state = view.state
    return (
        offer.maker != view.seat
        and view.seat == state.active
        and bool(offer.want_cards)
        and not offer.want_beans
        and all(card in state.face_up for card in offer.want_cards)
    )


def _short_line(action: Action, view: PlayerView) -> str:
    if isinstance(action, Harvest):
        return "harvest"
    if isinstance(action, Accept):
        return f"accept {action.offer}"
    if isinstance(action, Plant):
        return "plant"
    if isinstance(action, PlantPending):
        return f"plant {bean_of(action.card)}"
    return ""


def _parsed(line: str, view: PlayerView) -> Submit | Question | None:
    try:
        parsed = parse_game_command(line, view)
    except CommandError:
        return None
    return parsed if isinstance(parsed, Submit | Question) else None


def _checked(line: str, view: PlayerView) -> Line | None:
    """The line, if the rules allow what it says now."""
    return (line, None, None) if isinstance(_parsed(line, view), Submit) else None


def _same(these: tuple[Action, ...] | list[Action], those: list[Action]) -> bool:
    """The same moves; cards of one bean waiting to be planted are alike."""

    def key(action: Action) -> object:
        if isinstance(action, PlantPending):
            return ("plant pending", bean_of(action.card), action.field)
        return action

    return [key(a) for a in these] == [key(a) for a in those]
