package org.mechspec.pnmix;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Iterator;
import org.mechspec.compute.CudaBackend;

/**
 * What pn-mix's CUDA path keeps on the device between calls: the copies of the {@value #KEPT} caches used last (the
 * protocol alternates its packed cache with the fp16 reference it is judged against) and one set of scratch
 * buffers. A cache whose groups changed gets a new copy and the least recently used one is freed, so at most
 * {@value #KEPT} caches stay on the device however many calls and operation objects a run makes. After a sticky
 * fault (the process's CUDA is unusable) the old pointers are never used again: copies and scratch are forgotten. Use only
 * while holding the backend's lock ({@code synchronized (cuda)}).
 */
final class CudaCacheCopies {
    static final int KEPT = 2;
    private static CudaCacheCopies current;

    private final CudaBackend cuda;
    /** Most recently used first. */
    private final Deque<CudaCacheCopy> copies = new ArrayDeque<>();
    private CudaScratch scratch;

    private CudaCacheCopies(CudaBackend cuda) {
        this.cuda = cuda;
    }

    /** The device state of {@code cuda} (one backend per process; another one replaces it). */
    static synchronized CudaCacheCopies of(CudaBackend cuda) {
        if (current == null || current.cuda != cuda) {
            if (current != null) {
                current.drop(null);
            }
            current = new CudaCacheCopies(cuda);
        }
        return current;
    }

    /** The device copy of {@code cache}'s sink and groups: the one already there, or a new one. */
    CudaCacheCopy copyOf(PackedKvCache cache) {
        copies.removeIf(c -> !c.live());
        for (Iterator<CudaCacheCopy> it = copies.iterator(); it.hasNext(); ) {
            CudaCacheCopy c = it.next();
            if (c.holds(cache)) {
                it.remove();
                copies.addFirst(c);
                return c;
            }
        }
        CudaCacheCopy fresh = CudaCacheCopy.upload(cuda, cache);
        copies.addFirst(fresh);
        while (copies.size() > KEPT) {
            copies.removeLast().close();
        }
        return fresh;
    }

    CudaScratch scratch() {
        if (scratch == null || !scratch.live()) {
            scratch = new CudaScratch(cuda);
        }
        return scratch;
    }

    /**
     * Frees and forgets everything, after a call failed: a fault may have left the context unusable, and nothing kept
     * from before it may be trusted. Failures to free are added to {@code cause} (when given), not thrown over it.
     */
    void drop(Throwable cause) {
        for (AutoCloseable c : copies) {
            closeQuietly(c, cause);
        }
        copies.clear();
        if (scratch != null) {
            closeQuietly(scratch, cause);
            scratch = null;
        }
    }

    private static void closeQuietly(AutoCloseable c, Throwable cause) {
        try {
            c.close();
        } catch (Exception e) {
            if (cause != null) {
                cause.addSuppressed(e);
            }
        }
    }
}
