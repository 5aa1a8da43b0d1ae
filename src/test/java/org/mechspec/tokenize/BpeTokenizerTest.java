package org.mechspec.tokenize;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.mechspec.data.DataFiles;
import org.mechspec.data.WikiText2;
import org.mechspec.spec.MissingDataSkips;

/** Qwen's BPE over WikiText-2: it loads offline from the data folder, round-trips every split, and is deterministic. */
@Tag("model")
@ExtendWith(MissingDataSkips.class)
class BpeTokenizerTest {
    @TempDir
    Path dir;

    @Test
    void decodingTheEncodingGivesEverySplitBackAndTwoTokenizersAgree() {
        try (BpeTokenizer a = BpeTokenizer.qwen(); BpeTokenizer b = BpeTokenizer.qwen()) {
            for (WikiText2 split : new WikiText2[] {WikiText2.VALIDATION, WikiText2.TEST}) {
                String name = split.relativePath();
                String text = new String(split.bytes(), StandardCharsets.UTF_8);
                long[] ids = a.encode(text);
                assertThat(ids.length).as(name).isGreaterThan(text.length() / 8).isLessThan(text.length());
                assertThat(a.decode(ids)).as("decode(encode(%s))", name).isEqualTo(text);
                assertThat(b.encode(text)).as("a second tokenizer on %s", name).isEqualTo(ids);
                assertThat(a.encode(text)).as("the same tokenizer again on %s", name).isEqualTo(ids);
            }
            assertThat(a.sha256()).isEqualTo(BpeTokenizer.QWEN_SHA256);
        }
    }

    @Test
    void anAlteredTokenizerFileIsRefusedNamingItAndAMissingOneIsMissingData() throws Exception {
        Path altered = Files.createDirectories(dir.resolve("qwen-tokenizer")).resolve("tokenizer.json");
        byte[] bytes = Files.readAllBytes(BpeTokenizer.qwenFile());
        bytes[bytes.length / 2] ^= 1;
        Files.write(altered, bytes);
        String was = System.setProperty("mechspec.data.dir", dir.toString());
        try {
            assertThatThrownBy(BpeTokenizer::qwen).isInstanceOf(DataFiles.DataIntegrityException.class)
                    .hasMessageContaining(altered.toString()).hasMessageContaining("expected " + BpeTokenizer.QWEN_SHA256);
            Files.delete(altered);
            assertThatThrownBy(BpeTokenizer::qwen).isInstanceOf(DataFiles.MissingDataException.class)
                    .hasMessageContaining(altered + " is absent");
        } finally {
            System.setProperty("mechspec.data.dir", was);
        }
    }
}
