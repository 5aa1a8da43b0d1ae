package org.mechspec.spec;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.ArgumentsProvider;
import org.junit.jupiter.params.support.ParameterDeclarations;
import org.mechspec.compute.Backend;
import org.mechspec.compute.Backends;
import org.opentest4j.TestAbortedException;

/**
 * Supplies one {@link SeedRun} per (backend, seed) for a {@link Seeded} contract. Seeds come from the manifest,
 * optionally narrowed by {@code -Dmechspec.seeds=42,43}.
 */
public final class SeedRunsProvider implements ArgumentsProvider {
    @Override
    public Stream<? extends Arguments> provideArguments(ParameterDeclarations parameters, ExtensionContext context) {
        Method method = context.getRequiredTestMethod();
        Contract contract = method.getAnnotation(Contract.class);
        if (contract == null) {
            throw new ManifestException(method + " is @Seeded but has no @Contract(paper, check)");
        }
        Seeded seeded = method.getAnnotation(Seeded.class);
        Manifest manifest = ManifestLoader.forPaper(contract.paper());
        manifest.check(contract.check());
        Backend worker = Implementations.forPaper(manifest);
        List<Backend> backends = worker != null ? List.of(worker) : Backends.forContract(seeded.gpu());
        ExtensionContext.Store launch = context.getRoot().getStore(ExtensionContext.Namespace.create(SeedRun.class));
        List<Arguments> out = new ArrayList<>();
        for (Backend backend : backends) {
            for (long seed : selectedSeeds(manifest)) {
                out.add(Arguments.of(new SeedRun(manifest, contract.check(), seed, backend, launch)));
            }
        }
        return out.stream();
    }

    /** The manifest's seeds, or the subset named by {@code -Dmechspec.seeds}. */
    public static List<Long> selectedSeeds(Manifest manifest) {
        String only = System.getProperty("mechspec.seeds", "").trim();
        if (only.isEmpty()) {
            return manifest.seeds();
        }
        List<Long> out = new ArrayList<>();
        for (String s : only.split(",")) {
            long seed;
            try {
                seed = Long.parseLong(s.trim());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("-Dmechspec.seeds must be a comma-separated list of integers, got '" + only + "'");
            }
            if (manifest.seeds().contains(seed)) {
                out.add(seed);
            }
        }
        if (out.isEmpty()) {
            throw new TestAbortedException("none of -Dmechspec.seeds=" + only + " is a seed of " + manifest.paper());
        }
        return out;
    }
}
