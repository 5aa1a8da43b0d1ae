package org.mechspec.spec;

import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.LifecycleMethodExecutionExceptionHandler;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;
import org.mechspec.data.DataFiles.MissingDataException;
import org.opentest4j.TestAbortedException;

/**
 * A test that needs a data set which is not there is skipped with the data layer's message (what to download, the
 * flag to pass); every other failure passes through unchanged. On every {@link Contract}, and on plain tests that
 * read real data.
 */
public final class MissingDataSkips implements TestExecutionExceptionHandler, LifecycleMethodExecutionExceptionHandler {
    @Override
    public void handleTestExecutionException(ExtensionContext context, Throwable thrown) throws Throwable {
        throw skipIfDataMissing(thrown);
    }

    @Override
    public void handleBeforeAllMethodExecutionException(ExtensionContext context, Throwable thrown) throws Throwable {
        throw skipIfDataMissing(thrown);
    }

    @Override
    public void handleBeforeEachMethodExecutionException(ExtensionContext context, Throwable thrown) throws Throwable {
        throw skipIfDataMissing(thrown);
    }

    /** Whether this skip was for a missing data set. */
    public static boolean forMissingData(Throwable skip) {
        return skip instanceof TestAbortedException && missing(skip.getCause()) != null;
    }

    private static MissingDataException missing(Throwable thrown) {
        for (Throwable t = thrown; t != null; t = t.getCause()) {
            if (t instanceof MissingDataException m) {
                return m;
            }
        }
        return null;
    }

    /** The skip for a missing data set anywhere in the cause chain, else {@code thrown} itself. */
    static Throwable skipIfDataMissing(Throwable thrown) {
        MissingDataException m = missing(thrown);
        return m == null ? thrown : new TestAbortedException(m.getMessage(), thrown);
    }
}
