package org.mechspec.cli;

/**
 * One problem found in an artifact, at a JSON path. {@code failedCheck} marks a check recorded as false: the artifact
 * is well formed but reports a failed contract (merge accepts it, validate reports it).
 */
record Finding(String path, String message, boolean failedCheck) {
    static Finding at(JsonPath path, String message) {
        return new Finding(path.toString(), message, false);
    }

    @Override
    public String toString() {
        return path + ": " + message;
    }
}
