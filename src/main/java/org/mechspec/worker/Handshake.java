package org.mechspec.worker;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** What a worker said it is and serves, in its handshake reply ({@code PROTOCOL.md}, "Handshake"). */
public record Handshake(String name, String version, Map<String, List<String>> operations) {
    /** An implementation's id: it names the artifacts {@code <paper>.<id>.json}. */
    static final String ID = "[a-z0-9][a-z0-9-]{0,63}";

    /**
     * The handshake a reply declares; an {@link IllegalArgumentException} saying what is wrong with it (a bad or reserved
     * name, an unknown operation, a precision the operation does not have, no operation at all).
     */
    static Handshake of(JsonNode reply, String command) {
        String name = reply.path("name").asText("");
        if (!name.matches(ID) || List.of("cpu", "cuda", "cuda-emulated").contains(name)) {
            throw new IllegalArgumentException("worker '" + command + "': handshake name '" + name + "' must match " + ID
                    + " and not be cpu, cuda or cuda-emulated");
        }
        Map<String, List<String>> ops = new TreeMap<>();
        for (var it = reply.path("operations").fields(); it.hasNext(); ) {
            var e = it.next();
            List<String> known = Operations.precisions(e.getKey());
            if (known == null) {
                throw new IllegalArgumentException("worker " + name + ": handshake names unknown operation '" + e.getKey() + "' (known: "
                        + String.join(", ", Operations.names()) + ")");
            }
            List<String> precisions = new ArrayList<>();
            e.getValue().forEach(p -> precisions.add(p.asText()));
            if (precisions.isEmpty() || !known.containsAll(precisions)) {
                throw new IllegalArgumentException("worker " + name + ": operation " + e.getKey() + " declares precisions " + precisions
                        + "; it has " + known);
            }
            ops.put(e.getKey(), List.copyOf(precisions));
        }
        if (ops.isEmpty()) {
            throw new IllegalArgumentException("worker " + name + ": handshake declares no operations");
        }
        return new Handshake(name, reply.path("version").asText(""), ops);
    }
}
