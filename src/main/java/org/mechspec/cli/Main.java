package org.mechspec.cli;

import java.io.PrintWriter;
import java.util.ServiceLoader;
import org.mechspec.spec.ManifestException;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * The {@code mechspec} command: run the contracts, validate, merge and diff artifacts, and the subcommands papers add
 * ({@link PaperCommand}, e.g. pn-mix's {@code bench}); exit codes in {@link ExitCodes}.
 */
@Command(name = "mechspec", mixinStandardHelpOptions = true, version = "mechspec 0.1.0",
        description = "Executable specifications of attention and KV-cache mechanisms: run the contracts and work with their artifacts.",
        subcommands = {RunCommand.class, ValidateCommand.class, MergeCommand.class, DiffCommand.class, GpuCheckCommand.class, SlurmCommand.class, NewPaper.class, StressCommand.class})
public final class Main implements Runnable {
    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        throw new ParameterException(spec.commandLine(), "name a command: " + String.join(", ", spec.commandLine().getSubcommands().keySet()));
    }

    /** Runs the command line {@code args} and exits with its code. */
    public static void main(String[] args) {
        System.exit(execute(new PrintWriter(System.out, true), new PrintWriter(System.err, true), args));
    }

    /** Runs one command line with the given streams and returns its exit code. */
    public static int execute(PrintWriter out, PrintWriter err, String... args) {
        CommandLine cl = new CommandLine(new Main());
        for (PaperCommand command : ServiceLoader.load(PaperCommand.class)) {
            cl.addSubcommand(command);
        }
        cl.setOut(out);
        cl.setErr(err);
        cl.setParameterExceptionHandler((e, a) -> {
            err.println("mechspec: " + e.getMessage() + " (see: mechspec " + commandName(e.getCommandLine()) + "--help)");
            err.flush();
            return ExitCodes.BAD_INPUT;
        });
        cl.setExecutionExceptionHandler((e, line, parsed) -> {
            if (e instanceof InputException || e instanceof ManifestException) {
                err.println("mechspec: " + e.getMessage());
            } else {
                err.println("mechspec: internal error: " + e);
                e.printStackTrace(err);
            }
            err.flush();
            return ExitCodes.BAD_INPUT;
        });
        int code = cl.execute(args);
        out.flush();
        err.flush();
        return code;
    }

    private static String commandName(CommandLine line) {
        return line.getParent() == null ? "" : line.getCommandName() + " ";
    }
}
