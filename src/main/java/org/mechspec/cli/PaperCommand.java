package org.mechspec.cli;

/**
 * A subcommand added to {@code mechspec} from outside it (pn-mix's {@code bench}, say), so the command knows no paper:
 * a picocli {@code @Command} class that implements this interface, has a public no-argument constructor and is listed
 * in {@code META-INF/services/org.mechspec.cli.PaperCommand}. {@link Main} adds every one it finds on the class path,
 * under the name its {@code @Command} gives.
 */
public interface PaperCommand {
}
