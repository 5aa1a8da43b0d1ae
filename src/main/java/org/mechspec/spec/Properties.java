package org.mechspec.spec;

import org.quicktheories.QuickTheory;

/**
 * QuickTheories with one recorded seed per run: {@code -Dmechspec.propertySeed=N} replays a run; without it the
 * seed is drawn once per JVM and printed, so a failing property can always be reproduced (and each CI run still
 * explores other inputs). Shrinking has a fixed budget of {@link #SHRINK_CYCLES} tries.
 */
public final class Properties {
    /** The seed drawn (or given) when the JVM first used properties; {@link #seed()} prefers one given later, for a run in-process. */
    private static final long SEED = choose();

    private Properties() {
    }

    /**
     * Shrink tries after a falsification. QuickTheories' default is 100 times its default example count (100,000), and
     * against an outside implementation each try is a call through the worker: a wrong worker's rounding property spent
     * 60 s shrinking. At 2,000 the shapes shrink as far (B=1 … D=1 for a wrong attention) and values nearly as far;
     * a fixed count, not a time, so a replay shrinks to the same case.
     */
    public static final int SHRINK_CYCLES = 2_000;

    /** Use instead of {@code QuickTheory.qt()}. */
    public static QuickTheory qt() {
        return QuickTheory.qt().withFixedSeed(seed()).withShrinkCycles(SHRINK_CYCLES);
    }

    /** This run's property seed: {@code -Dmechspec.propertySeed}, or one drawn once per JVM and printed. */
    public static long seed() {
        String given = System.getProperty("mechspec.propertySeed", "").trim();
        return given.isEmpty() || given.startsWith("${") ? SEED : Long.parseLong(given);
    }

    /** How to replay a run's properties: the command's option and Maven's property. */
    public static String replayHint(long seed) {
        return "replay with " + runCommand() + " --property-seed " + seed + ", or mvn -Dmechspec.propertySeed=" + seed;
    }

    /** The command that runs this run's papers again: {@code mechspec run}, with {@code --project DIR} for a paper of its own. */
    public static String runCommand() {
        String project = System.getProperty("mechspec.project.dir", "");
        return "mechspec run" + (project.isEmpty() ? "" : " --project " + project);
    }

    private static long choose() {
        String given = System.getProperty("mechspec.propertySeed", "").trim();
        long seed = given.isEmpty() ? System.nanoTime() ^ 0x9E3779B97F4A7C15L : Long.parseLong(given);
        System.out.println("[mechspec] property seed " + seed + " (" + replayHint(seed) + ")");
        return seed;
    }
}
