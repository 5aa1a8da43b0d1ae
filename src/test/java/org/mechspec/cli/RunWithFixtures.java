package org.mechspec.cli;

import picocli.CommandLine;

/** {@code mechspec run} over this package's fixture contracts only (started in a child JVM by {@link RunCommandTest}). */
final class RunWithFixtures {
    private RunWithFixtures() {
    }

    public static void main(String[] args) {
        RunCommand run = new RunCommand();
        run.scanPackage = "org.mechspec.cli";
        run.excludedTags = java.util.List.of();
        run.childCommand = java.util.List.of(RunWithFixtures.class.getName());
        System.exit(new CommandLine(run).execute(args));
    }
}
