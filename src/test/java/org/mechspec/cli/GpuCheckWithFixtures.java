package org.mechspec.cli;

import java.util.Arrays;
import picocli.CommandLine;

/**
 * {@code mechspec gpu-check} whose contracts step runs this package's fixture contracts ({@link RunWithFixtures}) and
 * whose bench is the real one (started in a child JVM by {@link GpuCheckCommandTest}).
 */
final class GpuCheckWithFixtures {
    private GpuCheckWithFixtures() {
    }

    public static void main(String[] args) {
        GpuCheckCommand check = new GpuCheckCommand();
        check.mainCommand = java.util.List.of(Steps.class.getName());
        System.exit(new CommandLine(check).execute(args));
    }

    /** The steps' main: {@code run} over the fixtures, anything else as the mechspec command. */
    public static final class Steps {
        private Steps() {
        }

        public static void main(String[] args) {
            if (args.length > 0 && args[0].equals("run")) {
                RunWithFixtures.main(Arrays.copyOfRange(args, 1, args.length));
            } else {
                Main.main(args);
            }
        }
    }
}
