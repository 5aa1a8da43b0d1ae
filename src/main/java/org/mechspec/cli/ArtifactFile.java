package org.mechspec.cli;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonStreamContext;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.Reader;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** An artifact read from disk: a JSON object, or an {@link InputException} saying in one line why not. */
record ArtifactFile(Path path, JsonNode json) {
    /** Duplicate keys are an error, not "the last one wins": two values for one metric are no artifact. */
    static final ObjectMapper JSON = new ObjectMapper().enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);
    /** The largest file validate, diff and merge read: an artifact is tens of KiB, a seed file a few. */
    static final long MAX_BYTES = 64L << 20;

    static ArtifactFile read(Path path) {
        if (!Files.exists(path)) {
            throw new InputException(path + ": no such file");
        }
        if (!Files.isRegularFile(path) || !Files.isReadable(path)) {
            throw new InputException(path + ": not a readable file");
        }
        try {
            long size = Files.size(path);
            if (size > MAX_BYTES) {
                throw new InputException(String.format(java.util.Locale.ROOT, "%s: %.1f MiB, over the %d MiB an artifact may have; not read",
                        path, size / (double) (1 << 20), MAX_BYTES >> 20));
            }
        } catch (IOException e) {
            throw new InputException(path + ": cannot read: " + e.getMessage());
        }
        JsonNode json;
        // Streamed through a strict UTF-8 decoder: no copy of the text, and malformed bytes are an error, not U+FFFD.
        try (Reader in = new BufferedReader(new InputStreamReader(Files.newInputStream(path), StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT).onUnmappableCharacter(CodingErrorAction.REPORT)))) {
            json = JSON.readTree(in);
        } catch (JsonProcessingException e) {
            throw new InputException(path + ": " + whyNotJson(e));
        } catch (CharacterCodingException e) {
            throw new InputException(path + ": not UTF-8 text");
        } catch (IOException e) {
            throw new InputException(path + ": cannot read: " + e.getMessage());
        }
        if (json == null || !json.isObject()) {
            throw new InputException(path + ": an artifact must be a JSON object, got " + (json == null ? "nothing" : JsonPath.type(json)));
        }
        return new ArtifactFile(path, json);
    }

    /** Why a parse failed, in one line: where, when the parser knows (a constraint violation carries no location). */
    static String whyNotJson(JsonProcessingException e) {
        String duplicate = duplicateKey(e);
        if (duplicate != null) {
            return duplicate;
        }
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

    /** "duplicate key 'k' at a.b" for a strict duplicate detection failure, else null. */
    private static String duplicateKey(JsonProcessingException e) {
        String m = e.getOriginalMessage();
        if (m == null || !m.startsWith("Duplicate field '") || !(e.getProcessor() instanceof JsonParser parser)) {
            return null;
        }
        String key = m.substring("Duplicate field '".length(), m.indexOf('\'', "Duplicate field '".length()));
        java.util.ArrayDeque<Object> segments = new java.util.ArrayDeque<>();
        for (JsonStreamContext c = parser.getParsingContext(); c.getParent() != null && !c.getParent().inRoot(); c = c.getParent()) {
            JsonStreamContext parent = c.getParent();
            segments.push(parent.inArray() ? (Object) parent.getCurrentIndex() : parent.getCurrentName());
        }
        JsonPath at = new JsonPath(List.copyOf(segments));
        return "invalid JSON: duplicate key '" + key + "' in the object at " + at + " (line " + e.getLocation().getLineNr()
                + "): a key must appear once";
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
