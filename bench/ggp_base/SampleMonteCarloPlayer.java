import org.ggp.base.player.GamePlayer;
import org.ggp.base.player.gamer.statemachine.sample.SampleMonteCarloGamer;

/**
 * ggp-base's SampleMonteCarloGamer behind ggp-base's GamePlayer on a port: what PlayerRunner does, without
 * its lookup of gamer classes by reflection, which finds no class on Java 17 (PlayerRunner answers
 * "Available choices are: []").
 *
 * java -cp build/classes:build/bench:lib/... SampleMonteCarloPlayer 9148
 */
public final class SampleMonteCarloPlayer {
    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        GamePlayer player = new GamePlayer(port, new SampleMonteCarloGamer());
        player.start();
        player.join();
    }
}
