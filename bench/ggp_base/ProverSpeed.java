import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.ggp.base.util.game.Game;
import org.ggp.base.util.statemachine.MachineState;
import org.ggp.base.util.statemachine.Move;
import org.ggp.base.util.statemachine.Role;
import org.ggp.base.util.statemachine.StateMachine;
import org.ggp.base.util.statemachine.implementation.prover.ProverStateMachine;

/**
 * Random playouts on ggp-base's ProverStateMachine, timed: the peer of bench/prover_speed.py.
 *
 * java -cp build/classes:lib/... ProverSpeed game.kif warmup_s measure_s seed [max_steps]
 *
 * A playout starts from the initial state and plays uniformly random joint moves (getLegalMoves for each
 * role, one picked at random, then getNextState) until isTerminal, then asks getGoal of every role: the
 * same calls ggp's benchmark makes on its own prover. Playouts run for warmup_s seconds of this thread's
 * processor time (the JIT compiles, the prover's fixed-answer cache fills; not counted), then for at least
 * measure_s seconds (whole playouts only; at least one). A playout longer than max_steps (default 10000)
 * is cut there. Prints one JSON line: load seconds, playouts, steps and the processor and wall seconds of
 * the measured part.
 */
public final class ProverSpeed {
    private static final ThreadMXBean BEAN = ManagementFactory.getThreadMXBean();

    private static double cpu() {
        return BEAN.getCurrentThreadCpuTime() / 1e9;
    }

    private static int playout(StateMachine machine, List<Role> roles, Random rng, int maxSteps, long[] goalSum)
            throws Exception {
        MachineState state = machine.getInitialState();
        int steps = 0;
        while (!machine.isTerminal(state) && steps < maxSteps) {
            List<Move> joint = new ArrayList<Move>(roles.size());
            for (Role role : roles) {
                List<Move> legal = machine.getLegalMoves(state, role);
                joint.add(legal.get(rng.nextInt(legal.size())));
            }
            state = machine.getNextState(state, joint);
            steps++;
        }
        if (steps < maxSteps) {
            for (Role role : roles) {
                goalSum[0] += machine.getGoal(state, role);
            }
        }
        return steps;
    }

    public static void main(String[] args) throws Exception {
        String rules = new String(Files.readAllBytes(Paths.get(args[0])), StandardCharsets.UTF_8);
        double warmup = Double.parseDouble(args[1]);
        double measure = Double.parseDouble(args[2]);
        Random rng = new Random(Long.parseLong(args[3]));
        int maxSteps = args.length > 4 ? Integer.parseInt(args[4]) : 10000;

        double c0 = cpu();
        Game game = Game.createEphemeralGame(Game.preprocessRulesheet(rules));
        StateMachine machine = new ProverStateMachine();
        machine.initialize(game.getRules());
        List<Role> roles = machine.getRoles();
        double load = cpu() - c0;

        long[] goalSum = new long[1];
        double w0 = cpu();
        int warmPlayouts = 0;
        while (cpu() - w0 < warmup) {
            playout(machine, roles, rng, maxSteps, goalSum);
            warmPlayouts++;
        }
        goalSum[0] = 0;
        long wall0 = System.nanoTime();
        double m0 = cpu();
        int playouts = 0;
        long steps = 0;
        int cut = 0;
        do {
            int n = playout(machine, roles, rng, maxSteps, goalSum);
            steps += n;
            cut += n >= maxSteps ? 1 : 0;
            playouts++;
        } while (cpu() - m0 < measure);
        double cpuSeconds = cpu() - m0;
        double wallSeconds = (System.nanoTime() - wall0) / 1e9;
        System.out.println("{\"load_s\": " + load + ", \"warmup_playouts\": " + warmPlayouts + ", \"playouts\": "
                + playouts + ", \"steps\": " + steps + ", \"cut\": " + cut + ", \"goal_sum\": " + goalSum[0]
                + ", \"cpu_s\": " + cpuSeconds + ", \"wall_s\": " + wallSeconds + "}");
    }
}
