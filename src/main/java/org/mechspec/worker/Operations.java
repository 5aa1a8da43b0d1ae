package org.mechspec.worker;

import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Every operation a worker may serve, with the precisions each has ({@code PROTOCOL.md}): the ones mechspec's own papers
 * are built from, named as in their seams, and those a paper declares in its manifest (field {@code operations}, an
 * object per operation of its own), registered as its manifest is read. A handshake naming anything else is refused: a
 * misspelt operation would otherwise judge nothing.
 */
public final class Operations {
    /** Double precision. */
    public static final String F64 = "f64";
    /** Single precision. */
    public static final String F32 = "f32";
    /** Integer or bit-exact operations. */
    public static final String EXACT = "exact";
    /** What a paper's own operation is called: a namespace (its package's last part, say), a dot, a name. */
    public static final String DECLARED_NAME = "[a-z][a-z0-9_]*\\.[a-z][a-z0-9_]*";

    private static final Map<String, List<String>> BUILT_IN = new LinkedHashMap<>();
    /** Operation → precisions, and the paper that declared it, for the papers' own operations. */
    private static final Map<String, List<String>> DECLARED = new LinkedHashMap<>();
    private static final Map<String, String> DECLARED_BY = new LinkedHashMap<>();

    static {
        List<String> both = List.of(F64, F32);
        List<String> f64 = List.of(F64);
        List<String> exact = List.of(EXACT);
        BUILT_IN.put("attention", both);
        BUILT_IN.put("round_to_half", exact);
        BUILT_IN.put("round_to_bfloat16", exact);
        for (String op : List.of("nnls", "least_squares", "fold_direction", "rank_one_fold", "select_keys")) {
            BUILT_IN.put("foldbias." + op, f64);
        }
        for (String op : List.of("pack_per_channel", "unpack_per_channel", "pack_per_token", "unpack_per_token",
                "quantize_per_channel", "quantize_per_token", "dequantize_per_channel", "dequantize_per_token")) {
            BUILT_IN.put("pnmix." + op, exact);
        }
        BUILT_IN.put("pnmix.attend", both);
        BUILT_IN.put("pnmix.decode", both);
        BUILT_IN.put("oal.dense", both);
        BUILT_IN.put("oal.recurrent", both);
    }

    private Operations() {
    }

    /** Every operation's name: mechspec's own, then those papers declared so far. */
    public static synchronized Set<String> names() {
        Set<String> out = new LinkedHashSet<>(BUILT_IN.keySet());
        out.addAll(DECLARED.keySet());
        return out;
    }

    /** The precisions {@code op} has, or null for an operation that does not exist. */
    public static synchronized List<String> precisions(String op) {
        List<String> p = BUILT_IN.get(op);
        return p != null ? p : DECLARED.get(op);
    }

    /**
     * Registers paper {@code paper}'s own operation {@code op} with its precisions; the same declaration again is a
     * no-op. An {@link IllegalArgumentException} for a name that is not {@link #DECLARED_NAME}, one of mechspec's own,
     * one another paper declared, or a precision that is none of f64, f32, exact.
     */
    public static synchronized void declare(String paper, String op, List<String> precisions) {
        if (!op.matches(DECLARED_NAME)) {
            throw new IllegalArgumentException("operation '" + op + "' must be named namespace.name in lower case, e.g. mypaper.decode");
        }
        if (BUILT_IN.containsKey(op)) {
            throw new IllegalArgumentException("operation '" + op + "' is one of mechspec's own; a paper declares only operations of its own");
        }
        if (precisions.isEmpty() || !List.of(F64, F32, EXACT).containsAll(precisions)) {
            throw new IllegalArgumentException("operation '" + op + "' declares precisions " + precisions + "; each must be f64, f32 or exact");
        }
        String by = DECLARED_BY.get(op);
        if (by != null && !by.equals(paper)) {
            throw new IllegalArgumentException("operation '" + op + "' is declared by paper " + by + " already");
        }
        DECLARED.put(op, List.copyOf(precisions));
        DECLARED_BY.put(op, paper);
    }
}
