package org.mechspec.worker;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Every operation a worker may serve, named as in the seams, with the precisions each has ({@code PROTOCOL.md}). A
 * handshake naming anything else is refused: a misspelt operation would otherwise judge nothing.
 */
public final class Operations {
    public static final String F64 = "f64";
    public static final String F32 = "f32";
    public static final String EXACT = "exact";

    private static final Map<String, List<String>> ALL = new LinkedHashMap<>();

    static {
        List<String> both = List.of(F64, F32);
        List<String> f64 = List.of(F64);
        List<String> exact = List.of(EXACT);
        ALL.put("attention", both);
        ALL.put("round_to_half", exact);
        ALL.put("round_to_bfloat16", exact);
        for (String op : List.of("nnls", "least_squares", "fold_direction", "rank_one_fold", "select_keys")) {
            ALL.put("foldbias." + op, f64);
        }
        for (String op : List.of("pack_per_channel", "unpack_per_channel", "pack_per_token", "unpack_per_token",
                "quantize_per_channel", "quantize_per_token", "dequantize_per_channel", "dequantize_per_token")) {
            ALL.put("pnmix." + op, exact);
        }
        ALL.put("pnmix.attend", both);
        ALL.put("pnmix.decode", both);
        ALL.put("oal.dense", both);
        ALL.put("oal.recurrent", both);
    }

    private Operations() {
    }

    public static Set<String> names() {
        return ALL.keySet();
    }

    /** The precisions {@code op} has, or null for an operation that does not exist. */
    public static List<String> precisions(String op) {
        return ALL.get(op);
    }
}
