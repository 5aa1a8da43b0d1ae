package org.mechspec.spec;

import java.util.List;
import org.mechspec.worker.Implementation;
import org.mechspec.worker.WorkerBackend;
import org.opentest4j.TestAbortedException;

/**
 * The outside implementation a run judges ({@code -Dmechspec.implementation}, {@code PROTOCOL.md}): the backend
 * every contract of a paper it serves runs on, seeded and property halves alike, and the skip of a paper it serves
 * nothing of.
 */
public final class Implementations {
    private static WorkerBackend backend;
    private static boolean declared;

    private Implementations() {
    }

    /** The worker's backend, or null when the run judges mechspec's own code. */
    public static synchronized WorkerBackend backend() {
        String contracts = System.getProperty("mechspec.contracts.dir", "");
        if (!declared && System.getProperty(Implementation.PROPERTY) != null && !contracts.isEmpty()
                && java.nio.file.Files.isDirectory(java.nio.file.Path.of(contracts))) {
            // Every paper's own operations are declared before the worker's handshake may name them.
            ManifestLoader.loadAll(java.nio.file.Path.of(contracts));
            declared = true;
        }
        Implementation impl = Implementation.current();
        if (impl == null) {
            return null;
        }
        if (backend == null || backend.implementation() != impl) {
            backend = new WorkerBackend(impl);
        }
        return backend;
    }

    /**
     * The worker's backend for a contract of {@code manifest}'s paper, its calls attributed to that paper; null without
     * an implementation; a skip, with the reason, when the worker serves none of the paper's operations.
     */
    static WorkerBackend forPaper(Manifest manifest) {
        WorkerBackend b = backend();
        if (b == null) {
            return null;
        }
        List<String> served = b.implementation().served(manifest.operations());
        if (served.isEmpty()) {
            throw new TestAbortedException("implementation " + b.name() + " serves none of " + manifest.paper() + "'s operations ("
                    + (manifest.operations().isEmpty() ? "it declares none" : String.join(", ", manifest.operations())) + ")");
        }
        b.implementation().enterPaper(manifest.paper());
        return b;
    }
}
