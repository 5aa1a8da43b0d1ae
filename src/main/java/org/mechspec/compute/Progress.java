package org.mechspec.compute;

import java.util.Locale;

/**
 * One line per step of long work, on stderr: paper, seed, phase and the seconds since the run began. Quiet with
 * {@code -Dmechspec.quiet=true} ({@code mechspec run --quiet}).
 */
public final class Progress {
    private static final long START = System.nanoTime();

    private Progress() {
    }

    /** Prints one progress line for a long protocol's phase, unless the run is quiet. */
    public static void step(String paper, long seed, String phase) {
        if (!Boolean.getBoolean("mechspec.quiet")) {
            System.err.printf(Locale.ROOT, "[mechspec] %s seed %d: %s (%.1f s)%n", paper, seed, phase, (System.nanoTime() - START) / 1e9);
        }
    }
}
