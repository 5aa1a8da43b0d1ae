package org.mechspec.cli;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.util.Locale;

/** Input the command cannot work with (missing file, invalid JSON, unknown paper, bad option): exit code 2. */
public final class InputException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** Input the command cannot work with, said in one line ({@code message}). */
    public InputException(String message) {
        super(message);
    }

    /** A file the command was asked to write and could not, in one line naming it: {@code cannot write PATH: why}. */
    public static InputException cannotWrite(Path target, IOException e) {
        return new InputException("cannot write " + target + ": " + why(e));
    }

    private static String why(IOException e) {
        if (e instanceof AccessDeniedException) {
            return "permission denied";
        }
        if (e instanceof FileAlreadyExistsException || e instanceof NotDirectoryException) {
            // Files.createDirectories met a regular file where a folder must be.
            return ((FileSystemException) e).getFile() + " is not a folder";
        }
        if (e instanceof NoSuchFileException f) {
            return "no such file or folder " + f.getFile();
        }
        if (e instanceof FileSystemException f && f.getReason() != null) {
            return f.getReason().toLowerCase(Locale.ROOT); // e.g. "read-only file system", "no space left on device"
        }
        return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    }
}
