package org.mechspec.cli;

import org.mechspec.report.TemplateForm;
import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Where a manifest's artifact template (contracts/README.md) puts each dynamic part, as paths into a rendered
 * artifact: the {@code $each_seed} arrays and, inside their elements, the seed, metric and check positions; the
 * {@code $aggregate} blocks and {@code $stat} figures; the negative result; the provenance facts. Reading an
 * artifact through these positions works for ours and for the seed files alike.
 */
final class TemplatePositions {
    /** A form ({@code "$commit"}, {@code {"$aggregate": ...}}) at a path, with its argument (null for string forms). */
    record Position(JsonPath path, TemplateForm form, JsonNode arg) {
    }

    /** An {@code {"$each_seed": T}} array, and T's forms at paths relative to one element. */
    record PerSeed(JsonPath array, List<Position> fields) {
    }

    /** Forms outside any {@code $each_seed}. */
    final List<Position> top = new ArrayList<>();
    final List<PerSeed> perSeed = new ArrayList<>();
    /** Every position's form by its layout path ({@code per_seed[].metrics}), inside {@code $each_seed} arrays too. */
    final Map<String, TemplateForm> formAt = new HashMap<>();

    private TemplatePositions(JsonNode template) {
        walk(template, JsonPath.ROOT, top);
        top.forEach(p -> formAt.put(p.path().layoutPath(), p.form()));
        perSeed.forEach(s -> {
            formAt.put(s.array().layoutPath(), TemplateForm.EACH_SEED);
            s.fields().forEach(f -> formAt.put(s.array().index(0).append(f.path()).layoutPath(), f.form()));
        });
    }

    static TemplatePositions of(JsonNode template) {
        return new TemplatePositions(template);
    }

    List<Position> top(TemplateForm form) {
        return top.stream().filter(p -> p.form == form).toList();
    }

    /** The value at the first position of this form, outside or in the first element of a per-seed array; may be missing. */
    JsonNode first(TemplateForm form, JsonNode artifact) {
        if (!top(form).isEmpty()) {
            return top(form).get(0).path().in(artifact);
        }
        for (PerSeed s : perSeed) {
            for (Position f : s.fields()) {
                if (f.form() == form) {
                    return s.array().index(0).append(f.path()).in(artifact);
                }
            }
        }
        return com.fasterxml.jackson.databind.node.MissingNode.getInstance();
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
}
