package org.mechspec.spec;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ArgumentsSource;

/**
 * The seeded half of a contract: one invocation per (backend, manifest seed), each receiving a {@link SeedRun}.
 * {@code gpu = true} restricts it to the CUDA backend (skipped with the probe's reason when there is none). Tagged
 * {@code seeded}: {@code -Dgroups='seeded | cuda'} runs every seeded half and every test of the CUDA plumbing, which is
 * what a run on another backend adds to the CPU build (property halves and unit tests run on the CPU either way).
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@ParameterizedTest(name = "{0}")
@org.junit.jupiter.api.Tag("seeded")
@ArgumentsSource(SeedRunsProvider.class)
public @interface Seeded {
    /** Whether the seeded half runs on CUDA backends only (never on cpu; skipped with the reason where the run has none). */
    boolean gpu() default false;
}
