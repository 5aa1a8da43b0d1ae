package org.mechspec.cli;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.CharacterCodingException;
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
        String text;
        try {
            text = Files.readString(path);
        } catch (CharacterCodingException e) {
            throw new InputException(path + ": not UTF-8 text");
        } catch (IOException e) {
            throw new InputException(path + ": cannot read: " + e.getMessage());
        }
        JsonNode json;
        try {
            json = JSON.readTree(text);
        } catch (JsonProcessingException e) {
            throw new InputException(path + ": " + whyNotJson(e));
        }
        if (json == null || !json.isObject()) {
            throw new InputException(path + ": an artifact must be a JSON object, got " + (json == null ? "nothing" : JsonPath.type(json)));
        }
        return new ArtifactFile(path, json);
    }

    /** Why a parse failed, in one line: where, when the parser knows (a constraint violation carries no location). */
    static String whyNotJson(JsonProcessingException e) {
        if (e instanceof StreamConstraintsException && e.getOriginalMessage() != null
                && e.getOriginalMessage().contains("nesting depth")) {
            return "not JSON: nested deeper than " + JSON.getFactory().streamReadConstraints().getMaxNestingDepth() + " levels";
        }
        JsonLocation at = e.getLocation();
        if (at == null || at.getLineNr() < 1) {
            return "not JSON: " + firstLine(e.getOriginalMessage());
        }
        return "invalid JSON at line " + at.getLineNr() + ", column " + at.getColumnNr() + ": " + firstLine(e.getOriginalMessage());
    }

    private static String firstLine(String message) {
        if (message == null || message.isBlank()) {
            return "unreadable";
        }
        String m = message.strip();
        int nl = m.indexOf('\n');
        return nl < 0 ? m : m.substring(0, nl).strip();
    }

    /** The artifact's {@code mechspec} block (what mechspec wrote), or null for a foreign artifact such as a seed file. */
    JsonNode mechspecBlock() {
        JsonNode b = json.get("mechspec");
        return b != null && b.isObject() ? b : null;
    }
}
