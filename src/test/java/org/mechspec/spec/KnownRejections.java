package org.mechspec.spec;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What each check is known to reject: the broken mechanisms its {@link Breaks} tests build, one line each (the test's
 * name in words, and its class), so a reader of a verdict sees what "true" rules out. Found once per JVM.
 */
public final class KnownRejections {
    private static Map<String, List<String>> byCheck;

    private KnownRejections() {
    }

    /** The lines for {@code paper}/{@code check}, in test order; empty when none is found (a bundle without tests). */
    public static synchronized List<String> of(String paper, String check) {
        if (byCheck == null) {
            byCheck = new TreeMap<>();
            for (Method m : ContractCoverage.discoveredTestMethods()) {
                for (Breaks b : m.getAnnotationsByType(Breaks.class)) {
                    byCheck.computeIfAbsent(b.paper() + "/" + b.check(), k -> new ArrayList<>())
                            .add(words(m.getName()) + " (" + m.getDeclaringClass().getSimpleName() + ")");
                }
            }
        }
        return byCheck.getOrDefault(paper + "/" + check, List.of());
    }

    /** {@code flippedFoldSignBreaksTheLogitIdentity} → "flipped fold sign breaks the logit identity". */
    static String words(String camel) {
        return camel.replaceAll("([a-z0-9])([A-Z])", "$1 $2").replaceAll("([A-Z]+)([A-Z][a-z])", "$1 $2").replace('_', ' ')
                .toLowerCase(java.util.Locale.ROOT);
    }
}
