import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import org.ggp.base.util.gdl.grammar.GdlSentence;
import org.ggp.base.util.gdl.grammar.GdlTerm;
import org.ggp.base.util.game.Game;
import org.ggp.base.util.match.Match;
import org.ggp.base.util.statemachine.MachineState;
import org.ggp.base.util.statemachine.Move;
import org.ggp.base.util.statemachine.Role;
import org.ggp.base.util.statemachine.StateMachine;
import org.ggp.base.util.statemachine.implementation.prover.ProverStateMachine;

/**
 * Reads a match record in ggp-base's match JSON (as ggp's web app exports it) with ggp-base's own Match
 * class, and replays its moves on ggp-base's prover.
 *
 * java -cp build/classes:lib/... ReadMatch game.kif match.json
 *
 * Prints one JSON line: what the Match constructor read (moves, states, goals, errors, clocks, player
 * names), whether toJSON() reads back to the same, and the replay: at each joint move whether every
 * move was legal and whether the next state equals the record's, then the terminal flag and goals of
 * the last state against the record's goalValues. "problems" lists every difference (empty: none).
 */
public final class ReadMatch {
    private static String quote(String text) {
        return "\"" + text.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    private static Set<String> texts(Set<GdlSentence> sentences) {
        Set<String> out = new TreeSet<String>();
        for (GdlSentence s : sentences) {
            out.add(s.toString());
        }
        return out;
    }

    public static void main(String[] args) throws Exception {
        String rules = new String(Files.readAllBytes(Paths.get(args[0])), StandardCharsets.UTF_8);
        String json = new String(Files.readAllBytes(Paths.get(args[1])), StandardCharsets.UTF_8);
        Game game = Game.createEphemeralGame(Game.preprocessRulesheet(rules));
        Match match = new Match(json, game, null);
        List<String> problems = new ArrayList<String>();

        Match again = new Match(match.toJSON(), game, null);
        boolean roundTrip = again.getMoveHistory().equals(match.getMoveHistory())
                && again.getStateHistory().equals(match.getStateHistory())
                && again.getGoalValues().equals(match.getGoalValues())
                && again.getErrorHistory().equals(match.getErrorHistory());
        if (!roundTrip) {
            problems.add("toJSON() does not read back to the same match");
        }

        StateMachine machine = new ProverStateMachine();
        machine.initialize(game.getRules());
        List<Role> roles = machine.getRoles();
        MachineState state = machine.getInitialState();
        List<List<GdlTerm>> moves = match.getMoveHistory();
        List<Set<GdlSentence>> states = match.getStateHistory();
        if (states.size() != moves.size() + 1) {
            problems.add(states.size() + " states for " + moves.size() + " joint moves");
        }
        int statesEqual = 0;
        int legalMoves = 0;
        for (int k = 0; k <= moves.size(); k++) {
            if (k < states.size()) {
                if (texts(state.getContents()).equals(texts(states.get(k)))) {
                    statesEqual++;
                } else {
                    problems.add("state " + k + " differs from the prover's");
                }
            }
            if (k == moves.size()) {
                break;
            }
            List<Move> joint = new ArrayList<Move>();
            for (int r = 0; r < roles.size(); r++) {
                Move move = new Move(moves.get(k).get(r));
                if (machine.getLegalMoves(state, roles.get(r)).contains(move)) {
                    legalMoves++;
                } else {
                    problems.add("step " + (k + 1) + ": " + move + " is not legal for " + roles.get(r));
                }
                joint.add(move);
            }
            state = machine.getNextState(state, joint);
        }
        boolean terminal = machine.isTerminal(state);
        List<Integer> goals = machine.getGoals(state);
        if (match.isCompleted() && !terminal) {
            problems.add("the record says completed, but the last state is not terminal");
        }
        if (terminal && !goals.equals(match.getGoalValues())) {
            problems.add("goals " + goals + " but the record says " + match.getGoalValues());
        }

        StringBuilder out = new StringBuilder("{");
        out.append("\"match\":").append(quote(match.getMatchId()));
        out.append(",\"roles\":").append(quote(roles.toString()));
        out.append(",\"moves\":").append(moves.size());
        out.append(",\"states\":").append(states.size());
        out.append(",\"errors\":").append(match.getErrorHistory().size());
        out.append(",\"startClock\":").append(match.getStartClock());
        out.append(",\"playClock\":").append(match.getPlayClock());
        out.append(",\"players\":").append(quote(String.valueOf(match.getPlayerNamesFromHost())));
        out.append(",\"completed\":").append(match.isCompleted());
        out.append(",\"goalValues\":").append(quote(match.getGoalValues().toString()));
        out.append(",\"round_trip\":").append(roundTrip);
        out.append(",\"states_equal\":").append(statesEqual);
        out.append(",\"legal_moves\":").append(legalMoves);
        out.append(",\"terminal\":").append(terminal);
        out.append(",\"prover_goals\":").append(quote(goals.toString()));
        out.append(",\"problems\":[");
        for (int i = 0; i < problems.size(); i++) {
            out.append(i > 0 ? "," : "").append(quote(problems.get(i)));
        }
        System.out.println(out.append("]}"));
        System.exit(problems.isEmpty() ? 0 : 1);
    }
}
