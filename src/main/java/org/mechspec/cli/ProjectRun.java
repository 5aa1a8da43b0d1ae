package org.mechspec.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code mechspec run --project DIR} (and {@code stress --project DIR}): the contracts of papers kept in their own
 * Maven project, run by this command in a JVM of its own whose class path puts the project's compiled classes and
 * tests first (so its recorded source fingerprints are the ones found), then mechspec's, then the project's other
 * dependencies as its build listed them.
 * The project's manifests ({@code DIR/contracts}) are the only ones that run; the working folder stays the caller's,
 * so every other path option means what it says.
 */
final class ProjectRun {
    /** Where the project's build lists its dependencies (examples/own-paper/pom.xml writes it; optional). */
    static final String CLASSPATH_FILE = "target/mechspec.classpath";

    private ProjectRun() {
    }

    /** Why {@code project} cannot be run, or null. */
    private static String refusal(Path project) {
        if (!Files.isDirectory(project.resolve("contracts"))) {
            return "--project " + project + ": no contracts/ folder (a paper's project holds its manifests there)";
        }
        if (!Files.isDirectory(project.resolve("target/test-classes"))) {
            return "--project " + project + ": not built (no target/test-classes); run mvn test-compile in it first";
        }
        return null;
    }

    /**
     * Runs {@code mechspec <subcommand>} over {@code project} with the rest of {@code commandLine} (its own arguments,
     * {@code --project DIR} left out); its exit code. A folder that is no built project, or a child that cannot run,
     * is one line of bad input.
     */
    static int run(Path project, String subcommand, List<String> commandLine, PrintWriter stdout) {
        String refused = refusal(project);
        if (refused != null) {
            throw new InputException(refused);
        }
        try {
            return runChild(project, subcommand, without(commandLine, subcommand), stdout);
        } catch (IOException e) {
            throw new InputException("--project " + project + ": " + e.getMessage());
        }
    }

    private static int runChild(Path project, String subcommand, List<String> args, PrintWriter stdout) throws IOException {
        Path root = project.toAbsolutePath().normalize();
        List<String> classPath = new ArrayList<>(List.of(root.resolve("target/test-classes").toString(), root.resolve("target/classes").toString()));
        classPath.add(System.getProperty("java.class.path"));
        Path listed = root.resolve(CLASSPATH_FILE);
        if (Files.isRegularFile(listed)) {
            classPath.add(Files.readString(listed).strip());
        }
        List<String> command = new ArrayList<>(PaperProcesses.javaCommand());
        int cp = command.indexOf("-cp");
        command.subList(cp, cp + 2).clear();
        command.add(1, "-Dmechspec.contracts.dir=" + root.resolve("contracts"));
        command.add(1, "-Dmechspec.project.dir=" + root);
        command.addAll(List.of("-cp", String.join(java.io.File.pathSeparator, classPath), Main.class.getName(), subcommand));
        command.addAll(args);
        stdout.flush();
        Process p = new ProcessBuilder(command).inheritIO().start();
        Thread stop = new Thread(p::destroyForcibly);
        Runtime.getRuntime().addShutdownHook(stop);
        try {
            return p.waitFor();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            p.destroyForcibly();
            throw new IOException("interrupted while the project's contracts ran", e);
        } finally {
            try {
                Runtime.getRuntime().removeShutdownHook(stop);
            } catch (IllegalStateException shuttingDown) {
                // the hook is running or ran: the child is being stopped
            }
        }
    }

    /** The {@code subcommand}'s own arguments in the command line {@code args}, without {@code --project DIR}. */
    static List<String> without(List<String> args, String subcommand) {
        List<String> out = new ArrayList<>();
        for (int i = args.indexOf(subcommand) + 1; i < args.size(); i++) {
            if (args.get(i).equals("--project")) {
                i++;
            } else if (!args.get(i).startsWith("--project=")) {
                out.add(args.get(i));
            }
        }
        return out;
    }
}
