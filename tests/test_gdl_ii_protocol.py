"""GDL-II over the GGP protocol: ggp's host plays chance and sends each ``ggp serve`` player only its own last
move and percepts (the GDL-II PLAY and STOP), and the players play on what they know."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ggp.core.kif import term_text
from ggp.gdl.examples import EXAMPLES, example_path, load_example
from ggp.protocol import GGPServer, HostError, PlayerConfig, PlayerService, RemoteMatch, host_match
from ggp.protocol.messages import Play, PlayerView, Stop, parse_message, render_message


class Player:
    def __init__(self, spec: str, seed: int) -> None:
        self.service = PlayerService(PlayerConfig(spec=spec, name=f"p{seed}", seed=seed))
        self.server = GGPServer("127.0.0.1", 0, self.service.handle).start()  # type: ignore[arg-type]
        self.url = f"http://127.0.0.1:{self.server.port}"


@pytest.fixture(scope="module")
def players() -> Iterator[list[Player]]:
    # players that answer at once (random, from what they know), so that no result here depends on how busy
    # the machine is; the clocks are generous for the same reason
    made = [Player("random", 1), Player("random", 2)]
    yield made
    for p in made:
        p.server.close()


def test_gdl_ii_messages_read_and_write_both_ways() -> None:
    message = parse_message("( PLAY m1 3 bet ((did second pass) (your_card king)) )")
    assert isinstance(message, Play) and message.moves is None
    assert message.view == PlayerView(3, "bet", (("did", "second", "pass"), ("your_card", "king")))
    assert parse_message(render_message(message)) == message
    first = parse_message("(PLAY m1 0 NIL NIL)")
    assert first.view == PlayerView(0, None, ())  # type: ignore[union-attr]
    assert isinstance(parse_message("(STOP m1 4 pass NIL)"), Stop)


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_example_between_ggp_serve_players_with_no_fault_and_no_percept_a_player_may_not_see(
    players: list[Player], name: str
) -> None:
    game = load_example(name)
    sessions: list[RemoteMatch] = []
    seats = {role: players[i % len(players)].url for i, role in enumerate(game.players)}
    if len(set(seats.values())) < len(seats):
        pytest.fail(f"{name} has more players than this test starts servers")
    record = host_match(
        str(example_path(name)), seats, start_clock=30, play_clock=30, seed=7, on_remote=sessions.append
    )
    assert record.terminal and not list(record.all_faults())
    record.verify()
    # the true states of the match, step by step
    states = [game.initial_state()]
    for step in record.moves:
        states.append(game.next_state(states[-1], list(step.joint)))
    told = 0
    for role, text, _reply in sessions[0].exchanges:
        message = parse_message(text)
        if not isinstance(message, (Play, Stop)):
            continue
        view = message.view
        assert view is not None and message.moves is None  # never the joint move
        state = states[view.turn]
        assert tuple(term_text(p) for p in view.percepts) == game.percepts(state, role)
        if view.turn:
            own = record.moves[view.turn - 1].joint[game.role_index(role)]
            assert term_text(view.last_move) == own  # type: ignore[arg-type]
        told += 1
    assert told == len(game.players) * (record.steps + 1)  # a PLAY per step, then a STOP
    # the record keeps the true history, and so each player's view of it
    views = record.views(game)
    for role in game.players:
        assert len(views[role].steps) == record.steps
        assert views[role].steps[-1].percepts == game.percepts(states[-1], role)


def test_chance_takes_no_seat() -> None:
    with pytest.raises(HostError, match="random is chance"):
        host_match(str(example_path("montyhall")), {"random": "random"})


def test_a_gdl_ii_player_refuses_a_history_that_did_not_happen() -> None:
    from ggp.core.kif import parse_terms
    from ggp.gdl.examples import example_text
    from ggp.protocol.messages import ProtocolError, Start

    service = PlayerService(PlayerConfig(spec="random", name="p", seed=1))
    rules = tuple(parse_terms(example_text("kuhn_poker")))
    assert service.handle(render_message(Start("m1", "second", rules, 30, 5))).body == "ready"
    assert service.handle("(PLAY m1 0 NIL NIL)").body == "noop"
    assert service.handle("(PLAY m1 1 noop NIL)").body == "noop"  # the first's card dealt: nothing seen
    skipped = service.handle("(PLAY m1 3 noop ((did first bet)))")
    assert skipped.status == 400 and "turn 2 was never told" in skipped.body
    changed = service.handle("(PLAY m1 1 noop ((your_card jack)))")  # seen nothing, it was told
    assert changed.status == 400 and "told before" in changed.body
    # turn 2: its own card, then it answers the first's bet with a legal move of its own
    assert service.handle("(PLAY m1 2 noop ((your_card queen)))").body == "noop"
    assert service.handle("(PLAY m1 3 noop ((did first bet)))").body in ("bet", "pass")
    with pytest.raises(ProtocolError, match="whole number"):
        parse_message("(PLAY m1 \u00b2 noop NIL)")


def test_a_gdl_ii_play_for_a_game_of_perfect_information_is_refused() -> None:
    from ggp.core.kif import parse_terms
    from ggp.gdl import rules_text
    from ggp.protocol.messages import Start

    service = PlayerService(PlayerConfig(spec="random", name="p", seed=1))
    rules = tuple(parse_terms(rules_text("wallmaze")))
    assert service.handle(render_message(Start("m2", "white", rules, 30, 5))).body == "ready"
    refused = service.handle("(PLAY m2 0 NIL NIL)")
    assert refused.status == 400 and "GDL-I game" in refused.body


def test_the_belief_player_behind_ggp_serve_switches_doors() -> None:
    # a fixed budget of sampled states a move, not a clock: the choice must not hang on the machine's load
    player = Player("mcts:sims=48", 3)
    try:
        records = [
            host_match(str(example_path("montyhall")), {"candidate": player.url}, start_clock=10, play_clock=3, seed=s)
            for s in range(6)
        ]
    finally:
        player.server.close()
    for record in records:
        assert not list(record.all_faults()) and record.moves[2].joint[0] == "switch"
