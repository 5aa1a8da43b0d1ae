package org.mechspec.model;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Row-parallel loops over a fixed number of threads ({@code -Dmechspec.threads}, default 1). Work is split into
 * contiguous row ranges and every output row is computed by one thread in the same order as the serial loop,
 * so results are bit-identical for any thread count.
 */
public final class Parallel {
    private static final int THREADS = Math.max(1, Integer.getInteger("mechspec.threads", 1));
    private static final ExecutorService POOL = THREADS == 1 ? null : Executors.newFixedThreadPool(THREADS, r -> {
        Thread t = new Thread(r, "mechspec-rows");
        t.setDaemon(true);
        return t;
    });

    private Parallel() {
    }

    /** A body over the rows [start, end). */
    @FunctionalInterface
    public interface RowRange {
        void run(int start, int end);
    }

    public static int threads() {
        return THREADS;
    }

    /** Runs {@code body} over [0, rows); splits only when the loop is worth it ({@code work} ≈ flops). */
    public static void rows(int rows, long work, RowRange body) {
        if (POOL == null || rows < 2 || work < (1L << 18)) {
            body.run(0, rows);
            return;
        }
        int parts = Math.min(THREADS, rows);
        List<Future<?>> futures = new ArrayList<>(parts - 1);
        for (int p = 1; p < parts; p++) {
            int start = (int) ((long) rows * p / parts);
            int end = (int) ((long) rows * (p + 1) / parts);
            futures.add(POOL.submit(() -> body.run(start, end)));
        }
        body.run(0, (int) ((long) rows / parts));
        for (Future<?> f : futures) {
            try {
                f.get();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for a row range", e);
            } catch (ExecutionException e) {
                Throwable cause = e.getCause();
                if (cause instanceof RuntimeException re) {
                    throw re;
                }
                throw new IllegalStateException(cause);
            }
        }
    }
}
