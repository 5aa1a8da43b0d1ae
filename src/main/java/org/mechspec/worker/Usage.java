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
    private final TreeSet<String> answeredOps = new TreeSet<>();
    private final Map<String, Long> failed = new TreeMap<>();
    private final TreeSet<String> fellBack = new TreeSet<>();

    synchronized void answered(String op) {
        answered++;
        answeredOps.add(op);
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
            answeredOps.addAll(other.answeredOps);
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

    /**
     * As {@link #notJudged()}, for a check about {@code subjects} only (empty: any operation): null when the worker
     * answered a call of one of them, else why not: not served (the check then read mechspec's own), every call
     * failed, or never called.
     */
    public synchronized String notJudged(java.util.List<String> subjects) {
        if (subjects.isEmpty()) {
            return notJudged();
        }
        if (subjects.stream().anyMatch(answeredOps::contains)) {
            return null;
        }
        java.util.List<String> why = new java.util.ArrayList<>();
        java.util.List<String> notServed = subjects.stream().filter(fellBack::contains).toList();
        java.util.List<String> allFailed = subjects.stream().filter(failed::containsKey).toList();
        if (!notServed.isEmpty()) {
            why.add(String.join(", ", notServed) + " not served");
        }
        if (!allFailed.isEmpty()) {
            why.add("every call of " + String.join(", ", allFailed) + " failed");
        }
        return why.isEmpty() ? String.join(", ", subjects) + " never called" : String.join("; ", why);
    }
}
