package org.mechspec.cli;

import com.fasterxml.jackson.databind.JsonNode;
import org.mechspec.report.LayoutCheck;
import com.fasterxml.jackson.databind.node.MissingNode;
import java.util.ArrayList;
import java.util.List;

/** A location in a JSON document: object keys and array indices, written like {@code per_seed[0].metrics.x}. */
record JsonPath(List<Object> segments) {
    static final JsonPath ROOT = new JsonPath(List.of());

    JsonPath key(String key) {
        return with(key);
    }

    JsonPath index(int index) {
        return with(index);
    }

    JsonPath append(JsonPath relative) {
        List<Object> s = new ArrayList<>(segments);
        s.addAll(relative.segments);
        return new JsonPath(List.copyOf(s));
    }

    private JsonPath with(Object segment) {
        List<Object> s = new ArrayList<>(segments);
        s.add(segment);
        return new JsonPath(List.copyOf(s));
    }

    /** The node at this path, or a missing node. */
    JsonNode in(JsonNode root) {
        JsonNode n = root;
        for (Object s : segments) {
            n = s instanceof Integer i ? n.path(i) : n.path((String) s);
        }
        return n == null ? MissingNode.getInstance() : n;
    }

    @Override
    public String toString() {
        StringBuilder b = new StringBuilder();
        for (Object s : segments) {
            if (s instanceof Integer i) {
                b.append('[').append(i).append(']');
            } else {
                b.append(b.length() == 0 ? "" : ".").append(s);
            }
        }
        return b.length() == 0 ? "(root)" : b.toString();
    }

    /** The path as LayoutCheck names it: every array index written {@code []}. */
    String layoutPath() {
        return toString().replaceAll("\\[\\d+]", "[]");
    }

    /** JSON type names as LayoutCheck writes them ("nothing" for an absent node). */
    static String type(JsonNode n) {
        return n.isMissingNode() ? "nothing" : LayoutCheck.type(n);
    }
}
