package org.mechspec.cli;

import static org.junit.platform.engine.discovery.DiscoverySelectors.selectPackage;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import org.junit.platform.engine.FilterResult;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.PostDiscoveryFilter;
import org.junit.platform.launcher.TagFilter;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.mechspec.report.OutputFolder;
import org.mechspec.spec.Contract;
import org.mechspec.spec.Properties;
import org.mechspec.spec.Seeded;
import org.mechspec.spec.Stress;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * The property halves of one paper (or one check) with many generated examples: how close each check came to failing,
 * and the shrunk counterexample of any that failed. Nothing else runs (no seeded half, no artifact).
 */
@Command(name = "stress", mixinStandardHelpOptions = true, header = "Run a paper's property halves with many examples; show the worst margins.",
        description = {
            "Runs the property halves of --paper (only --check's, if given) with --examples",
            "generated examples each, on the CPU, and prints per check the worst margin (the",
            "reported figure against its bound; negative fails) and the input that came",
            "closest; a falsified property prints its shrunk counterexample and the seed to",
            "replay it with (--property-seed N; Maven: -Dmechspec.propertySeed=N). Writes DIR/stress/<paper>.json.",
            "Exit 0 every property held, 1 one was falsified, 2 bad options."})
final class StressCommand implements Callable<Integer> {
    @Option(names = "--paper", required = true, paramLabel = "P", description = "the paper whose properties to stress")
    String paper;

    @Option(names = "--check", paramLabel = "C", description = "only this check's property half")
    String check;

    @Option(names = "--examples", paramLabel = "N", defaultValue = "2000", description = "generated examples per property (default: ${DEFAULT-VALUE})")
    int examples;

    @Option(names = "--out", paramLabel = "DIR", defaultValue = "mechspec-out", description = "output folder (default: ${DEFAULT-VALUE})")
    Path out;

    @Option(names = "--data-dir", paramLabel = "DIR", description = "data sets folder, for properties that read real data")
    Path dataDir;

    @Option(names = "--property-seed", paramLabel = "N", description = "QuickTheories' seed (-Dmechspec.propertySeed): replays a falsified property")
    Long propertySeed;

    @Option(names = "--project", paramLabel = "DIR", description = {"stress a paper of a Maven project of its own that depends on mechspec",
            "(as run --project: built with mvn test-compile there; its manifests in DIR/contracts)"})
    Path project;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws java.io.IOException {
        PrintWriter stdout = spec.commandLine().getOut();
        if (project != null) {
            return ProjectRun.run(project, "stress", spec.commandLine().getParseResult().originalArgs(), stdout);
        }
        Manifests manifests = Manifests.contracts();
        if (!manifests.papers().contains(paper)) {
            throw new InputException("unknown paper '" + paper + "' (known: " + String.join(", ", manifests.papers()) + ")");
        }
        if (check != null && !manifests.forPaper(paper).checks().containsKey(check)) {
            throw new InputException("--check " + check + " is not a check of " + paper);
        }
        if (examples < 1) {
            throw new InputException("--examples must be at least 1, got " + examples);
        }
        String refused = OutputFolder.refusal("--out", out);
        if (refused != null) {
            throw new InputException(refused);
        }
        OutputFolder.create(out);
        Map<String, String> properties = new HashMap<>();
        properties.put("mechspec.propertyExamples", Integer.toString(examples));
        properties.put("mechspec.backend", "cpu");
        properties.put("mechspec.quiet", "true");
        properties.put("mechspec.out", out.toAbsolutePath().resolve("reports").toString());
        properties.put("allure.results.directory", out.toAbsolutePath().resolve("allure-results").toString());
        if (dataDir != null) {
            properties.put("mechspec.data.dir", dataDir.toAbsolutePath().toString());
        }
        if (propertySeed != null) {
            properties.put("mechspec.propertySeed", Long.toString(propertySeed));
        }
        SummaryGeneratingListener summary = new SummaryGeneratingListener();
        Stress.reset();
        var request = LauncherDiscoveryRequestBuilder.request().selectors(selectPackage(manifests.forPaper(paper).javaPackage()))
                .filters(TagFilter.includeTags("contract"), TagFilter.includeTags(paper), TagFilter.excludeTags("launcher-fixture"),
                        propertyHalvesOf(paper, check))
                .build();
        org.mechspec.spec.ScopedLaunch.execute(org.junit.platform.launcher.core.LauncherFactory.create(), request, properties, out.toAbsolutePath().resolve("allure-results"), summary);
        var ledger = Stress.byPaper().getOrDefault(paper, Map.of());
        if (ledger.isEmpty()) {
            throw new InputException(paper + (check == null ? "" : "/" + check) + " has no property half to stress");
        }
        stdout.println(Stress.table(ledger));
        ledger.forEach((c, e) -> {
            if (!e.falsified.isEmpty()) {
                stdout.println("FALSIFIED " + c + ": " + e.falsified);
            }
        });
        stdout.println("stress: " + paper + ", " + ledger.size() + " properties, " + examples + " examples each, property seed "
                + Properties.seed() + "; wrote " + out.resolve("stress").resolve(paper + ".json"));
        boolean falsified = ledger.values().stream().anyMatch(e -> !e.falsified.isEmpty())
                || summary.getSummary().getTotalFailureCount() > 0;
        return falsified ? ExitCodes.FINDINGS : ExitCodes.OK;
    }

    /** The property halves ({@code @Contract} without {@code @Seeded}) of the paper, or of one check. */
    private static PostDiscoveryFilter propertyHalvesOf(String paper, String check) {
        return d -> {
            if (!(d.getSource().orElse(null) instanceof MethodSource m)) {
                return FilterResult.included("a container");
            }
            Contract c = m.getJavaMethod().getAnnotation(Contract.class);
            boolean keep = c != null && m.getJavaMethod().getAnnotation(Seeded.class) == null && c.paper().equals(paper)
                    && (check == null || c.check().equals(check));
            return keep ? FilterResult.included("a property half") : FilterResult.excluded("not a property half of the selection");
        };
    }
}
