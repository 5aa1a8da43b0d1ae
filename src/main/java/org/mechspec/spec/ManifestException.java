package org.mechspec.spec;

/** A manifest that cannot be used; the message names the file and the field. */
public class ManifestException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public ManifestException(String message) {
        super(message);
    }

    public ManifestException(String message, Throwable cause) {
        super(message, cause);
    }
}
