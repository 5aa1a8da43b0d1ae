package org.mechspec.cli;

import org.junit.jupiter.api.Tag;
import org.mechspec.spec.Contract;
import org.mechspec.spec.SeedRun;
import org.mechspec.spec.Seeded;

/**
 * A contract that runs until it is stopped, so {@link GpuCheckCommandTest}'s budget always finds a step still running,
 * however fast the machine; only {@link RunWithFixtures} runs it, where that test's contracts folder declares it.
 */
@Tag("launcher-fixture")
@Tag("cliwait")
class WaitingFixtureContracts {
    static final String MANIFEST = """
            {"paper": "cliwait", "title": "waits until stopped", "seeds": [42], "dataset": {}, "protocol": {}, "claim_policy": {},
             "limitations": [], "sources": ["src/main/java/org/mechspec/cli"],
             "checks": [{"name": "waits", "description": "waits until the process is stopped"}], "metrics": []}
            """;

    @Contract(paper = "cliwait", check = "waits")
    @Seeded
    void waits(SeedRun run) throws InterruptedException {
        Thread.sleep(java.time.Duration.ofMinutes(10).toMillis());
    }
}
