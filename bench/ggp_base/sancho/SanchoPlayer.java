import java.io.IOException;
import java.lang.reflect.Field;
import java.net.InetSocketAddress;
import java.net.Proxy;
import java.net.ProxySelector;
import java.net.SocketAddress;
import java.net.URI;
import java.util.Collections;
import java.util.List;
import java.util.Properties;

import org.ggp.base.player.GamePlayer;
import org.ggp.base.player.gamer.Gamer;
import org.ggp.base.player.gamer.statemachine.mctsref.MctsRefGamer;
import org.ggp.base.player.gamer.statemachine.sancho.MachineSpecificConfiguration;
import org.ggp.base.player.gamer.statemachine.sancho.Sancho;

/**
 * Sancho 1.61c (SanchoGGP/ggp-base), or its plain-UCT MctsRefGamer, behind its fork's GamePlayer on a port.
 * Sancho's PlayerRunner finds its gamers by reflection, which finds none on Java 17, so this main builds the
 * gamer itself. It compiles against Sancho's fork only (build/sancho_bench), never against ggp-org's ggp-base.
 *
 * java -cp SANCHO/bin:SANCHO/data/cfg:SANCHO/src/external/...:build/sancho_bench SanchoPlayer PORT [sancho|mctsref]
 *      [KEY=VALUE ...]
 *
 * Run it from an empty working folder (the benchmark makes one per match): Sancho reads
 * data/cfg/$HOSTNAME.properties and its learned games (data/games) from the working folder and writes its logs
 * (logs/) there, so an empty folder means nothing learned is read and nothing is left in its checkout.
 *
 * Sancho's settings are MachineSpecificConfiguration's items, normally read from that properties file. They are
 * set here, before any class that reads them (ThreadControl, Sancho, GameSearcher) is loaded:
 *   CPU_INTENSIVE_THREADS=1   one CPU-intensive thread: the search thread, no rollout threads
 *   USE_AFFINITY=false        its thread pinning calls kernel32 (Windows only)
 *   NODE_TABLE_SIZE=500000    the node pool
 *   DISABLE_LEARNING=true     no per-game characteristics loaded or saved
 *   DISABLE_SAVED_PLANS=true  no puzzle plans from earlier matches
 * Its one network client is a chat client (Tlkio: it logs in to https://tlk.io/CHANNEL and posts its
 * announcements there). Turning it off (TLKIO_CHANNEL=NONE) makes Sancho 1.61c fail every START: its
 * pre-match announcement calls the client without checking that there is one (NullPointerException in
 * Sancho.makePreMatchAnnouncement). So the client stays on, and every connection of this JVM goes through a proxy
 * on loopback where nothing listens (port 9): its login fails at once, it logs "Failed to login to tlk.io" and its
 * messages are dropped.
 * KEY=VALUE arguments override or add items (e.g. SAFETY_MARGIN=2500, its default).
 */
public final class SanchoPlayer {
    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        String which = args.length > 1 ? args[1] : "sancho";

        Field field = MachineSpecificConfiguration.class.getDeclaredField("MACHINE_PROPERTIES");
        field.setAccessible(true);
        Properties cfg = (Properties) field.get(null);
        cfg.clear();  // nothing from a machine's file: only what is set here
        cfg.setProperty("CPU_INTENSIVE_THREADS", "1");
        cfg.setProperty("USE_AFFINITY", "false");
        cfg.setProperty("NODE_TABLE_SIZE", "500000");
        cfg.setProperty("DISABLE_LEARNING", "true");
        cfg.setProperty("DISABLE_SAVED_PLANS", "true");
        cfg.setProperty("TLKIO_CHANNEL", "loopback");
        for (int i = 2; i < args.length; i++) {
            int eq = args[i].indexOf('=');
            if (eq < 0) {
                throw new IllegalArgumentException("expected KEY=VALUE, got " + args[i]);
            }
            cfg.setProperty(args[i].substring(0, eq), args[i].substring(eq + 1));
        }
        ProxySelector.setDefault(new ProxySelector() {
            private final List<Proxy> loopback =
                Collections.singletonList(new Proxy(Proxy.Type.HTTP, new InetSocketAddress("127.0.0.1", 9)));

            @Override
            public List<Proxy> select(URI uri) {
                return loopback;
            }

            @Override
            public void connectFailed(URI uri, SocketAddress address, IOException e) {
                // Nothing to do: the client gives up.
            }
        });
        System.out.println("SanchoPlayer config: " + cfg);

        Gamer gamer;
        if (which.equals("sancho")) {
            gamer = new Sancho();
        } else if (which.equals("mctsref")) {
            gamer = new MctsRefGamer();
        } else {
            throw new IllegalArgumentException("sancho or mctsref, not " + which);
        }
        GamePlayer player = new GamePlayer(port, gamer);
        if (player.getGamerPort() != port) {
            // The fork's GamePlayer moves to the next port when one is taken: the server would call the wrong one.
            System.err.println("port " + port + " is taken");
            System.exit(2);
        }
        player.start();
        player.join();
    }
}
