package org.mechspec.spec;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import org.mechspec.worker.Operations;

/**
 * A manifest's {@code operations} (and its {@code baselines}): each operation a name of an operation that exists (mechspec's own, or one a paper
 * declared), or an object declaring one of the paper's own, which is registered with {@link Operations} so a worker's
 * handshake may serve it: {@code {"name": "sinkwindow.stream", "precisions": ["f64"], "inputs": {...}, "outputs":
 * {...}, "params": {...}, "description": "..."}}, the tensors described for worker authors as {@code "f64 [T, d]"}.
 */
final class DeclaredOperations {
    private DeclaredOperations() {
    }

    /** The names of the paper's operations, its own declared on the way; a {@link ManifestException} naming a bad entry. */
    static List<String> read(String file, String paper, JsonNode operations) {
        List<String> names = new ArrayList<>();
        if (operations.isMissingNode()) {
            return names;
        }
        if (!operations.isArray()) {
            throw new ManifestException(file + ": field 'operations' must be an array");
        }
        for (int i = 0; i < operations.size(); i++) {
            JsonNode op = operations.get(i);
            String at = file + ": field 'operations[" + i + "]'";
            if (op.isObject()) {
                names.add(declare(at, paper, op));
            } else if (op.isTextual() && Operations.names().contains(op.asText())) {
                names.add(op.asText());
            } else {
                throw new ManifestException(at + " names '" + op.asText() + "', which is no worker operation (PROTOCOL.md: "
                        + String.join(", ", Operations.names()) + "; a paper's own is declared as an object with its name,"
                        + " precisions, inputs and outputs)");
            }
        }
        return names;
    }

    /** A manifest's {@code baselines}: each {@code {"name": snake_case, "description": "..."}}, names distinct. */
    static void baselines(String file, JsonNode baselines) {
        if (baselines.isMissingNode()) {
            return;
        }
        String shape = "' must be {\"name\": snake_case, \"description\": what it does}, names distinct";
        if (!baselines.isArray()) {
            throw new ManifestException(file + ": field 'baselines" + shape.replace("' must be", "' must be an array of"));
        }
        java.util.Set<String> seen = new java.util.HashSet<>();
        for (int i = 0; i < baselines.size(); i++) {
            JsonNode b = baselines.get(i);
            String name = b.path("name").asText("");
            if (!name.matches("[a-z][a-z0-9_]*") || !b.path("description").isTextual() || !seen.add(name)) {
                throw new ManifestException(file + ": field 'baselines[" + i + "]" + shape);
            }
        }
    }

    private static String declare(String at, String paper, JsonNode op) {
        String name = op.path("name").asText("");
        List<String> precisions = new ArrayList<>();
        op.path("precisions").forEach(p -> precisions.add(p.asText()));
        for (String field : List.of("inputs", "outputs")) {
            if (!op.path(field).isObject() || op.path(field).isEmpty()) {
                throw new ManifestException(at + " ('" + name + "') must describe its " + field
                        + " as an object of tensor name -> \"dtype [shape]\" for worker authors");
            }
        }
        if (!op.path("description").isTextual()) {
            throw new ManifestException(at + " ('" + name + "') must say what it computes in 'description'");
        }
        try {
            Operations.declare(paper, name, precisions);
        } catch (IllegalArgumentException e) {
            throw new ManifestException(at + ": " + e.getMessage());
        }
        return name;
    }
}
