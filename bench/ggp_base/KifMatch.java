import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;

import org.ggp.base.server.GameServer;
import org.ggp.base.server.event.ServerConnectionErrorEvent;
import org.ggp.base.server.event.ServerIllegalMoveEvent;
import org.ggp.base.server.event.ServerTimeoutEvent;
import org.ggp.base.util.game.Game;
import org.ggp.base.util.match.Match;
import org.ggp.base.util.observer.Event;
import org.ggp.base.util.observer.Observer;
import org.ggp.base.util.statemachine.Role;

/**
 * One match of a local .kif rule sheet under ggp-base's own GameServer (GameServerRunner needs the
 * online game repository, which this machine cannot reach).
 *
 * java -cp build/classes:lib/... KifMatch game.kif startClock playClock host port name [host port name ...]
 *
 * Prints one JSON line: goals per role, the server's faults (illegal moves, timeouts, connection
 * errors) per role with the step they came at and whether the game was over then (STOP), and the number of
 * joint moves.
 */
public final class KifMatch {
    public static void main(String[] args) throws Exception {
        String rules = new String(Files.readAllBytes(Paths.get(args[0])), StandardCharsets.UTF_8);
        Game game = Game.createEphemeralGame(Game.preprocessRulesheet(rules));
        int startClock = Integer.parseInt(args[1]);
        int playClock = Integer.parseInt(args[2]);
        List<String> hosts = new ArrayList<String>();
        List<Integer> ports = new ArrayList<Integer>();
        List<String> names = new ArrayList<String>();
        for (int i = 3; i + 2 < args.length; i += 3) {
            hosts.add(args[i]);
            ports.add(Integer.valueOf(args[i + 1]));
            names.add(args[i + 2]);
        }
        String id = "bench." + System.currentTimeMillis();
        Match match = new Match(id, -1, startClock, playClock, game, "");
        match.setPlayerNamesFromHost(names);
        GameServer server = new GameServer(match, hosts, ports);
        final List<String> faults = new ArrayList<String>();
        server.addObserver(new Observer() {
            @Override
            public void observe(Event event) {
                String kind = null;
                Role role = null;
                if (event instanceof ServerIllegalMoveEvent) {
                    kind = "illegal";
                    role = ((ServerIllegalMoveEvent) event).getRole();
                } else if (event instanceof ServerTimeoutEvent) {
                    kind = "timeout";
                    role = ((ServerTimeoutEvent) event).getRole();
                } else if (event instanceof ServerConnectionErrorEvent) {
                    kind = "connection";
                    role = ((ServerConnectionErrorEvent) event).getRole();
                }
                if (kind != null) {
                    // The joint moves made when it happened, and whether the game was over (a fault on STOP:
                    // the goals were settled before it).
                    int step = match.getMoveHistory().size();
                    boolean over = match.isCompleted();
                    synchronized (faults) {
                        faults.add("{\"kind\":\"" + kind + "\",\"role\":\"" + role + "\",\"step\":" + step
                            + ",\"after_end\":" + over + "}");
                    }
                }
            }
        });
        server.start();
        server.join();
        StringBuilder out = new StringBuilder("{\"goals\":" + server.getGoals());
        out.append(",\"steps\":").append(match.getMoveHistory().size());
        out.append(",\"roles\":\"").append(server.getStateMachine().getRoles()).append("\"");
        synchronized (faults) {
            out.append(",\"faults\":").append(faults.toString());
        }
        System.out.println(out.append("}"));
        System.exit(0);
    }
}
