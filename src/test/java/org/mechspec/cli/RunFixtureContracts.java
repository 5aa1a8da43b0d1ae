package org.mechspec.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Tag;
import org.mechspec.spec.Contract;
import org.mechspec.spec.SeedRun;
import org.mechspec.spec.Seeded;

/** Contracts for {@link RunCommandTest}'s failing run; only {@link RunWithFixtures} runs them. */
@Tag("launcher-fixture")
@Tag("clifixture")
class RunFixtureContracts {
    static final String MANIFEST = """
            {"paper": "clifixture", "title": "run fixture", "seeds": [42, 43], "dataset": {}, "protocol": {}, "claim_policy": {},
             "limitations": [], "sources": ["src/main/java/org/mechspec/cli"],
             "checks": [{"name": "passes", "description": "always"}, {"name": "fails", "description": "fails on seed 43"}],
             "metrics": [{"name": "value"}],
             "artifact": {"seeds": "$seeds", "per_seed": {"$each_seed": {"seed": "$seed", "metrics": {"$metrics": "*"}, "checks": "$checks"}},
                          "metrics": {"$aggregate": {"stats": ["mean", "n"], "metrics": "*"}}, "provenance": {"commit": "$commit"}}}
            """;

    @Contract(paper = "clifixture", check = "passes")
    @Seeded
    void passes(SeedRun run) {
        run.metric("value", run.seed() * 0.5);
    }

    @Contract(paper = "clifixture", check = "fails")
    @Seeded
    void fails(SeedRun run) {
        assertThat(run.seed()).as("seed").isLessThan(43);
    }
}
