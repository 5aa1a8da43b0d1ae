package org.mechspec.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** An artifact read from disk: a JSON object, or an {@link InputException} saying in one line why not. */
record ArtifactFile(Path path, JsonNode json) {
    static final ObjectMapper JSON = new ObjectMapper().enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

    static ArtifactFile read(Path path) {
        if (!Files.exists(path)) {
            throw new InputException(path + ": no such file");
        }
        if (!Files.isRegularFile(path) || !Files.isReadable(path)) {
            throw new InputException(path + ": not a readable file");
        }
        JsonNode json;
        try {
            json = JSON.readTree(Files.readString(path));
        } catch (JsonProcessingException e) {
            throw new InputException(path + ": invalid JSON at line " + e.getLocation().getLineNr() + ", column "
                    + e.getLocation().getColumnNr() + ": " + e.getOriginalMessage());
        } catch (IOException e) {
            throw new InputException(path + ": cannot read: " + e.getMessage());
        }
        if (json == null || !json.isObject()) {
            throw new InputException(path + ": an artifact must be a JSON object, got " + (json == null ? "nothing" : JsonPath.type(json)));
        }
        return new ArtifactFile(path, json);
    }

    /** The artifact's {@code mechspec} block (what mechspec wrote), or null for a foreign artifact such as a seed file. */
    JsonNode mechspecBlock() {
        JsonNode b = json.get("mechspec");
        return b != null && b.isObject() ? b : null;
    }
}
