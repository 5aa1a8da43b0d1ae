package org.mechspec.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Where a manifest's artifact template (contracts/README.md) puts each dynamic part, as paths into a rendered
 * artifact: the {@code $each_seed} arrays and, inside their elements, the seed, metric and check positions; the
 * {@code $aggregate} blocks and {@code $stat} figures; the negative result; the provenance facts. Reading an
 * artifact through these positions works for ours and for the seed files alike.
 */
final class TemplatePositions {
    private static final JsonNodeFactory F = JsonNodeFactory.instance;

    /** Forms that record where and how a run was made; each must be present and non-empty. */
    static final Set<String> PROVENANCE = Set.of("$backend", "$device", "$jvm", "$commit", "$dataset_fingerprint",
            "$sources", "$records_sha256", "$artifact_path");

    /** A form ({@code "$commit"}, {@code {"$aggregate": ...}}) at a path, with its argument (null for string forms). */
    record Position(JsonPath path, String form, JsonNode arg) {
    }

    /** An {@code {"$each_seed": T}} array, and T's forms at paths relative to one element. */
    record PerSeed(JsonPath array, List<Position> fields) {
    }

    /** Forms outside any {@code $each_seed}. */
    final List<Position> top = new ArrayList<>();
    final List<PerSeed> perSeed = new ArrayList<>();
    /** The template's layout: static parts as they are, each form replaced by a value of the JSON type it renders to. */
    final JsonNode skeleton;

    private TemplatePositions(JsonNode template) {
        walk(template, JsonPath.ROOT, top);
        this.skeleton = skeleton(template);
    }

    static TemplatePositions of(JsonNode template) {
        return new TemplatePositions(template);
    }

    List<Position> top(String form) {
        return top.stream().filter(p -> p.form.equals(form)).toList();
    }

    private void walk(JsonNode t, JsonPath path, List<Position> into) {
        if (t.isTextual() && t.asText().startsWith("$")) {
            into.add(new Position(path, t.asText(), null));
        } else if (t.isArray()) {
            for (int i = 0; i < t.size(); i++) {
                walk(t.get(i), path.index(i), into);
            }
        } else if (t.isObject()) {
            String form = singleForm(t);
            if (form == null) {
                t.fields().forEachRemaining(e -> walk(e.getValue(), path.key(e.getKey()), into));
            } else if (form.equals("$each_seed") && into == top) {
                PerSeed p = new PerSeed(path, new ArrayList<>());
                walk(t.get(form), JsonPath.ROOT, p.fields);
                perSeed.add(p);
            } else {
                into.add(new Position(path, form, t.get(form)));
            }
        }
    }

    /** The form key of a one-key {@code {"$...": arg}} object, else null. */
    private static String singleForm(JsonNode t) {
        if (t.size() != 1) {
            return null;
        }
        String key = t.fieldNames().next();
        return key.startsWith("$") ? key : null;
    }

    /** Null where the type is not fixed ({@code $metric}: number or boolean): its presence is checked when read. */
    private static JsonNode skeleton(JsonNode t) {
        if (t.isTextual() && t.asText().startsWith("$")) {
            switch (t.asText()) {
                case "$seeds":
                    return F.arrayNode();
                case "$seed":
                case "$first_seed":
                    return F.numberNode(0);
                case "$checks":
                case "$runtime":
                case "$sources":
                    return F.objectNode();
                case "$claims_improvement":
                case "$gpu_validated":
                    return F.booleanNode(false);
                default:
                    return F.textNode("");
            }
        }
        if (t.isArray()) {
            ArrayNode a = F.arrayNode();
            t.forEach(e -> {
                JsonNode s = skeleton(e);
                if (s != null) {
                    a.add(s);
                }
            });
            return a;
        }
        if (!t.isObject()) {
            return t.deepCopy();
        }
        String form = singleForm(t);
        if (form != null) {
            switch (form) {
                case "$each_seed": {
                    JsonNode element = skeleton(t.get(form));
                    return element == null ? F.arrayNode() : F.arrayNode().add(element);
                }
                case "$check":
                    return F.booleanNode(false);
                case "$stat":
                    return F.numberNode(0);
                case "$metric":
                    return null;
                default: // $metrics, $aggregate: objects whose keys are data
                    return F.objectNode();
            }
        }
        ObjectNode o = F.objectNode();
        for (Iterator<Map.Entry<String, JsonNode>> it = t.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            JsonNode s = skeleton(e.getValue());
            if (s != null) {
                o.set(e.getKey(), s);
            }
        }
        return o;
    }
}
