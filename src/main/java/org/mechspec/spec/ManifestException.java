package org.mechspec.spec;

/** A manifest that cannot be used; the message names the file and the field. */
public class ManifestException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** A manifest that cannot be used, said in one line naming the file and field. */
    public ManifestException(String message) {
        super(message);
    }

    /** A manifest that cannot be used, said in one line, with its cause. */
    public ManifestException(String message, Throwable cause) {
        super(message, cause);
    }
}
