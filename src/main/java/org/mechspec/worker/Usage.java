package org.mechspec.worker;

import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * What the outside implementation did for one contract invocation: the calls it answered, the calls that failed (by
 * operation) and the operations the seams served with mechspec's CPU because the worker does not serve them. An
 * invocation in which the worker answered nothing judged nothing of it, so its verdict is "not judged", never "held"
 * ({@link #notJudged()}).
 */
public final class Usage {
    private long answered;
    private final Map<String, Long> failed = new TreeMap<>();
    private final TreeSet<String> fellBack = new TreeSet<>();

    synchronized void answered() {
        answered++;
    }

    synchronized void failed(String op) {
        failed.merge(op, 1L, Long::sum);
    }

    synchronized void fellBack(String op) {
        fellBack.add(op);
    }

    /** Adds what {@code other} counted (a shared value computed once and read by several invocations). */
    public synchronized void add(Usage other) {
        synchronized (other) {
            answered += other.answered;
            other.failed.forEach((op, n) -> failed.merge(op, n, Long::sum));
            fellBack.addAll(other.fellBack);
        }
    }

    /**
     * Why an invocation that passed judged nothing of the implementation, or null when the worker answered at least
     * one call. A failed call counts as judged only where it failed the contract (the caller's business).
     */
    public synchronized String notJudged() {
        if (answered > 0) {
            return null;
        }
        if (!failed.isEmpty()) {
            return "every call of " + String.join(", ", failed.keySet()) + " failed";
        }
        if (!fellBack.isEmpty()) {
            return String.join(", ", fellBack) + " not served";
        }
        return "calls no operation of the implementation";
    }
}
