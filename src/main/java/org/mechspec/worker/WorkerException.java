package org.mechspec.worker;

/**
 * A worker failed an operation, or its reply broke the protocol: one line naming the worker, the operation and what
 * went wrong (with the last lines of its stderr when it died or hung). Fails the contract that made the call.
 */
public final class WorkerException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** The error type the worker reported ({@code PROTOCOL.md}), or "protocol" when mechspec found the fault. */
    private final String type;

    WorkerException(String type, String message) {
        super(message);
        this.type = type;
    }

    /** The protocol's error type the worker replied with (e.g. invalid_argument), or the client's own for a broken call. */
    public String type() {
        return type;
    }
}
