package org.mechspec.spec;

import org.quicktheories.QuickTheory;

/**
 * QuickTheories with one recorded seed per run: {@code -Dmechspec.propertySeed=N} replays a run; without it the
 * seed is drawn once per JVM and printed, so a failing property can always be reproduced (and each CI run still
 * explores other inputs).
 */
public final class Properties {
    private static final long SEED = choose();

    private Properties() {
    }

    /** Use instead of {@code QuickTheory.qt()}. */
    public static QuickTheory qt() {
        return QuickTheory.qt().withFixedSeed(SEED);
    }

    public static long seed() {
        return SEED;
    }

    private static long choose() {
        String given = System.getProperty("mechspec.propertySeed", "").trim();
        long seed = given.isEmpty() ? System.nanoTime() ^ 0x9E3779B97F4A7C15L : Long.parseLong(given);
        System.out.println("[mechspec] property seed " + seed + " (replay with -Dmechspec.propertySeed=" + seed + ")");
        return seed;
    }
}
