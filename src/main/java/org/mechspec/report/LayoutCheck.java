package org.mechspec.report;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Layout compatibility with a reference artifact: every JSON key path of the reference is present in ours
 * with the same JSON type (object, array, string, number, boolean, null). Array elements share the path
 * {@code name[]}. Under a free-key path (file names, split names) only the container's type is compared.
 */
public final class LayoutCheck {
    private LayoutCheck() {
    }

    /** Findings, one per missing or mistyped path; empty when compatible. */
    public static List<String> compare(JsonNode reference, JsonNode ours, List<String> freeKeys) {
        Map<String, String> want = paths(reference, freeKeys);
        Map<String, String> have = paths(ours, freeKeys);
        List<String> findings = new ArrayList<>();
        want.forEach((path, type) -> {
            String got = have.get(path);
            if (got == null) {
                findings.add(path + ": missing (reference has " + type + ")");
            } else if (!got.equals(type) && !got.contains(type)) {
                findings.add(path + ": expected " + type + ", got " + got);
            }
        });
        return findings;
    }

    /** Every key path with its JSON type; a path seen with several types (e.g. mixed arrays) joins them with '|'. */
    public static Map<String, String> paths(JsonNode root, List<String> freeKeys) {
        Map<String, String> out = new TreeMap<>();
        walk(root, "", freeKeys, out);
        return out;
    }

    private static void walk(JsonNode n, String path, List<String> freeKeys, Map<String, String> out) {
        if (!path.isEmpty()) {
            out.merge(path, type(n), (a, b) -> a.equals(b) || a.contains(b) ? a : a + "|" + b);
        }
        if (freeKeys.contains(path)) {
            return;
        }
        if (n.isObject()) {
            for (Iterator<Map.Entry<String, JsonNode>> it = n.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                walk(e.getValue(), path.isEmpty() ? e.getKey() : path + "." + e.getKey(), freeKeys, out);
            }
        } else if (n.isArray()) {
            for (JsonNode e : n) {
                walk(e, path + "[]", freeKeys, out);
            }
        }
    }

    /** The JSON type of {@code n}: object, array, string, number, boolean or null. */
    public static String type(JsonNode n) {
        if (n.isObject()) {
            return "object";
        }
        if (n.isArray()) {
            return "array";
        }
        if (n.isTextual()) {
            return "string";
        }
        if (n.isNumber()) {
            return "number";
        }
        if (n.isBoolean()) {
            return "boolean";
        }
        return "null";
    }
}
