package org.mechspec.worker;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * safetensors files for the worker exchange: an 8-byte little-endian header length, a JSON header padded with spaces
 * to a multiple of 8, then the tensors back to back. The checkpoint reader ({@code model.SafeTensorsFile}) maps float
 * weights; this one carries the integer and byte tensors of the operations too.
 */
final class WireFiles {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Larger than any tensor an operation exchanges; a header claiming more is garbage. */
    private static final long MAX_BYTES = 1L << 31;

    private WireFiles() {
    }

    static void write(Path file, Map<String, WireTensor> tensors) throws IOException {
        ObjectNode header = JSON.createObjectNode();
        long offset = 0;
        for (Map.Entry<String, WireTensor> e : tensors.entrySet()) {
            ObjectNode t = header.putObject(e.getKey());
            t.put("dtype", e.getValue().dtype().name());
            var shape = t.putArray("shape");
            for (long d : e.getValue().shape()) {
                shape.add(d);
            }
            long end = offset + e.getValue().data().length;
            t.putArray("data_offsets").add(offset).add(end);
            offset = end;
        }
        byte[] json = JSON.writeValueAsString(header).getBytes(StandardCharsets.UTF_8);
        int padded = (json.length + 7) / 8 * 8;
        ByteBuffer head = ByteBuffer.allocate(8 + padded).order(ByteOrder.LITTLE_ENDIAN);
        head.putLong(padded).put(json);
        while (head.hasRemaining()) {
            head.put((byte) ' ');
        }
        try (var out = Files.newOutputStream(file)) {
            out.write(head.array());
            for (WireTensor t : tensors.values()) {
                out.write(t.data());
            }
        }
    }

    /**
     * Every tensor of {@code file}, read only when it is a regular file (no link followed: never a FIFO, which would
     * block, nor a device such as /dev/zero) of at most {@code maxBytes}; otherwise, and for a malformed file, an
     * {@link IOException} saying what is wrong, without reading it.
     */
    static Map<String, WireTensor> read(Path file, long maxBytes) throws IOException {
        java.nio.file.attribute.BasicFileAttributes a = Files.readAttributes(file, java.nio.file.attribute.BasicFileAttributes.class,
                java.nio.file.LinkOption.NOFOLLOW_LINKS);
        if (!a.isRegularFile()) {
            throw new IOException("not a regular file (" + (a.isSymbolicLink() ? "a symbolic link" : a.isDirectory() ? "a folder"
                    : "a FIFO, socket or device") + "); not read");
        }
        if (a.size() > maxBytes) {
            throw new IOException(a.size() + " bytes, more than the " + maxBytes + " the declared outputs can take; not read");
        }
        byte[] all;
        try (var in = Files.newInputStream(file, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            all = in.readNBytes((int) Math.min(Integer.MAX_VALUE - 8, maxBytes + 1));
        }
        if (all.length > maxBytes) {
            throw new IOException("grew past " + maxBytes + " bytes while read; not read");
        }
        return read(all);
    }

    /** Every tensor of a file's bytes; malformed bytes are an {@link IOException} saying what is wrong. */
    static Map<String, WireTensor> read(byte[] all) throws IOException {
        if (all.length < 8) {
            throw new IOException("shorter than the 8-byte header length (" + all.length + " bytes)");
        }
        long headerLength = ByteBuffer.wrap(all, 0, 8).order(ByteOrder.LITTLE_ENDIAN).getLong();
        if (headerLength < 2 || headerLength > all.length - 8) {
            throw new IOException("header length " + headerLength + " does not fit the file's " + all.length + " bytes");
        }
        JsonNode header = JSON.readTree(new String(all, 8, (int) headerLength, StandardCharsets.UTF_8));
        if (header == null || !header.isObject()) {
            throw new IOException("the header is not a JSON object");
        }
        int base = 8 + (int) headerLength;
        Map<String, WireTensor> out = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = header.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            if (e.getKey().equals("__metadata__")) {
                continue;
            }
            JsonNode t = e.getValue();
            WireTensor.Dtype dtype;
            try {
                dtype = WireTensor.Dtype.valueOf(t.path("dtype").asText());
            } catch (IllegalArgumentException ex) {
                throw new IOException("tensor '" + e.getKey() + "' has dtype '" + t.path("dtype").asText() + "', not one of F64, F32, I64, I32, U8");
            }
            JsonNode shapeNode = t.path("shape");
            long[] shape = new long[shapeNode.size()];
            for (int i = 0; i < shape.length; i++) {
                shape[i] = shapeNode.get(i).asLong(-1);
                if (shape[i] < 0) {
                    throw new IOException("tensor '" + e.getKey() + "' has a negative or non-integer dimension");
                }
            }
            long begin = t.path("data_offsets").path(0).asLong(-1);
            long end = t.path("data_offsets").path(1).asLong(-1);
            if (begin < 0 || end < begin || base + end > all.length || end - begin > MAX_BYTES) {
                throw new IOException("tensor '" + e.getKey() + "' has data_offsets [" + begin + ", " + end + "] outside the file's "
                        + (all.length - base) + " data bytes");
            }
            byte[] data = java.util.Arrays.copyOfRange(all, base + (int) begin, base + (int) end);
            try {
                out.put(e.getKey(), new WireTensor(dtype, shape, data));
            } catch (IllegalArgumentException ex) {
                throw new IOException("tensor '" + e.getKey() + "': " + ex.getMessage());
            }
        }
        return out;
    }
}
