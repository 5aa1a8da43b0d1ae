package org.mechspec.cli;

import org.mechspec.report.TemplateForm;
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

    /** A form ({@code "$commit"}, {@code {"$aggregate": ...}}) at a path, with its argument (null for string forms). */
    record Position(JsonPath path, TemplateForm form, JsonNode arg) {
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

    List<Position> top(TemplateForm form) {
        return top.stream().filter(p -> p.form == form).toList();
    }

    private void walk(JsonNode t, JsonPath path, List<Position> into) {
        if (t.isTextual() && t.asText().startsWith("$")) {
            into.add(new Position(path, form(t.asText(), false), null));
        } else if (t.isArray()) {
            for (int i = 0; i < t.size(); i++) {
                walk(t.get(i), path.index(i), into);
            }
        } else if (t.isObject()) {
            String key = singleForm(t);
            if (key == null) {
                t.fields().forEachRemaining(e -> walk(e.getValue(), path.key(e.getKey()), into));
            } else if (form(key, true) == TemplateForm.EACH_SEED && into == top) {
                PerSeed p = new PerSeed(path, new ArrayList<>());
                walk(t.get(key), JsonPath.ROOT, p.fields);
                perSeed.add(p);
            } else {
                into.add(new Position(path, form(key, true), t.get(key)));
            }
        }
    }

    private static TemplateForm form(String key, boolean object) {
        TemplateForm f = TemplateForm.of(key, object);
        if (f == null) {
            throw new IllegalArgumentException("unknown template form " + (object ? "{\"" + key + "\": ...}" : "'" + key + "'"));
        }
        return f;
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
            switch (form(t.asText(), false)) {
                case SEEDS:
                    return F.arrayNode();
                case SEED:
                case FIRST_SEED:
                    return F.numberNode(0);
                case CHECKS:
                case RUNTIME:
                case SOURCES:
                    return F.objectNode();
                case CLAIMS_IMPROVEMENT:
                case GPU_VALIDATED:
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
        String key = singleForm(t);
        if (key != null) {
            switch (form(key, true)) {
                case EACH_SEED: {
                    JsonNode element = skeleton(t.get(key));
                    return element == null ? F.arrayNode() : F.arrayNode().add(element);
                }
                case CHECK:
                    return F.booleanNode(false);
                case STAT:
                    return F.numberNode(0);
                case METRIC:
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
