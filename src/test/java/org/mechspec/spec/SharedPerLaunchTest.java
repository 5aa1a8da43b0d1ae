package org.mechspec.spec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.platform.launcher.core.LauncherConfig;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;

/**
 * {@link SeedRun#shared} computes once per launch for all checks of a seed ({@link SeedRun#sharedBySeeds}: once for
 * all seeds), and afresh in the next launch: a
 * mutation tester that relaunches the contracts against a mutated class therefore sees the mutant's result.
 */
class SharedPerLaunchTest {
    static final AtomicInteger COMPUTED = new AtomicInteger();
    static final AtomicInteger COMPUTED_BY_SEEDS = new AtomicInteger();

    @Test
    void oneComputationPerSeedAndLaunch() {
        String savedSeeds = System.setProperty("mechspec.seeds", "42,43");
        String savedBackend = System.setProperty("mechspec.backend", "cpu");
        try {
            COMPUTED.set(0);
            COMPUTED_BY_SEEDS.set(0);
            assertThat(launch()).as("passed invocations").isEqualTo(4);
            assertThat(COMPUTED).as("two checks, two seeds, one launch").hasValue(2);
            assertThat(COMPUTED_BY_SEEDS).as("sharedBySeeds: once for both seeds").hasValue(1);
            assertThat(launch()).isEqualTo(4);
            assertThat(COMPUTED).as("the second launch computes again").hasValue(4);
            assertThat(COMPUTED_BY_SEEDS).hasValue(2);
        } finally {
            restore("mechspec.seeds", savedSeeds);
            restore("mechspec.backend", savedBackend);
        }
    }

    private static void restore(String key, String value) {
        if (value == null) {
            System.clearProperty(key);
        } else {
            System.setProperty(key, value);
        }
    }

    @Test
    void withoutALaunchEveryCallComputes() {
        SeedRun run = new SeedRun(ManifestLoader.forPaper("kernels"), TwoChecks.CHECK, 42,
                org.mechspec.compute.CpuBackend.INSTANCE, null);
        AtomicInteger calls = new AtomicInteger();
        run.shared("x", Integer.class, calls::incrementAndGet);
        run.shared("x", Integer.class, calls::incrementAndGet);
        assertThat(calls).hasValue(2);
    }

    private static long launch() {
        SummaryGeneratingListener summary = new SummaryGeneratingListener();
        LauncherFactory.create(LauncherConfig.builder().enableTestExecutionListenerAutoRegistration(false)
                        .addTestExecutionListeners(summary).build())
                .execute(LauncherDiscoveryRequestBuilder.request().selectors(selectClass(TwoChecks.class)).build());
        return summary.getSummary().getTotalFailureCount() == 0 ? summary.getSummary().getTestsSucceededCount() : -1;
    }

    @Tag(ContractCoverage.FIXTURE_TAG)
    static class TwoChecks {
        static final String CHECK = "rng_pinned_test_vector";

        @Contract(paper = "kernels", check = CHECK)
        @Seeded
        void first(SeedRun run) {
            run.shared("work", Integer.class, COMPUTED::incrementAndGet);
            run.sharedBySeeds("model", Integer.class, COMPUTED_BY_SEEDS::incrementAndGet);
        }

        @Contract(paper = "kernels", check = CHECK)
        @Seeded
        void second(SeedRun run) {
            run.shared("work", Integer.class, COMPUTED::incrementAndGet);
            run.sharedBySeeds("model", Integer.class, COMPUTED_BY_SEEDS::incrementAndGet);
        }
    }
}
