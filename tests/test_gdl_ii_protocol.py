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
    made = [Player("mcts", 1), Player("random", 2)]
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
    record = host_match(str(example_path(name)), seats, start_clock=10, play_clock=2, seed=7, on_remote=sessions.append)
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
