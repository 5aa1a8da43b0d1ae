package org.mechspec.cli;

/** The {@code mechspec} command's exit codes. */
final class ExitCodes {
    /** Everything checked out. */
    static final int OK = 0;
    /** Findings: failed contracts, invalid artifacts, drift, a refused merge. */
    static final int FINDINGS = 1;
    /** Usage errors and input the command cannot work with (missing file, invalid JSON, unknown paper, no device). */
    static final int BAD_INPUT = 2;

    private ExitCodes() {
    }
}
