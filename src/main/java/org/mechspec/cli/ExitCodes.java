package org.mechspec.cli;

/** The {@code mechspec} command's exit codes. */
public final class ExitCodes {
    /** Everything checked out. */
    public static final int OK = 0;
    /** Findings: failed contracts, invalid artifacts, drift, a refused merge. */
    public static final int FINDINGS = 1;
    /** Usage errors and input the command cannot work with (missing file, invalid JSON, unknown paper, no device). */
    public static final int BAD_INPUT = 2;

    private ExitCodes() {
    }
}
