package org.mechspec.model;

/** A safetensors file or checkpoint folder that cannot be used as is; the message names the file and tensor. */
public final class SafeTensorsException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public SafeTensorsException(String message) {
        super(message);
    }

    public SafeTensorsException(String message, Throwable cause) {
        super(message, cause);
    }
}
