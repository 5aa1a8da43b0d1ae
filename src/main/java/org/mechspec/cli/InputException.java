package org.mechspec.cli;

/** Input the command cannot work with (missing file, invalid JSON, unknown paper, bad option): exit code 2. */
final class InputException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    InputException(String message) {
        super(message);
    }
}
