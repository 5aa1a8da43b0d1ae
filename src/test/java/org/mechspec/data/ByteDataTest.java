package org.mechspec.data;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mechspec.compute.Rng;
import org.mechspec.spec.MissingDataSkips;
import org.junit.jupiter.api.extension.ExtendWith;

/** Byte tokens, fixed-length blocks and the WikiText-2 files the model trains and evaluates on. */
@ExtendWith(MissingDataSkips.class)
@Tag("model")
class ByteDataTest {

    @Test
    void tokenizerMapsEveryByteToItselfAndBack() {
        byte[] all = new byte[256];
        for (int i = 0; i < 256; i++) {
            all[i] = (byte) i;
        }
        int[] tokens = ByteTokenizer.encode(all);
        assertThat(tokens[200]).isEqualTo(200);
        assertThat(ByteTokenizer.decode(tokens)).isEqualTo(all);
        assertThatThrownBy(() -> ByteTokenizer.decode(new int[] {256})).hasMessageContaining("256");
    }

    @Test
    void blocksAreConsecutiveAndTheTailIsDropped() {
        byte[] text = "abcdefghij".getBytes(StandardCharsets.US_ASCII);
        TokenBlocks blocks = TokenBlocks.ofBytes(text, 3);
        assertThat(blocks.count()).isEqualTo(3);
        assertThat(ByteTokenizer.decode(blocks.block(2))).isEqualTo("ghi".getBytes(StandardCharsets.US_ASCII));
        assertThat(blocks.blocks(new int[] {1, 0})).containsExactly('d', 'e', 'f', 'a', 'b', 'c');
        assertThatThrownBy(() -> blocks.block(3)).hasMessageContaining("block 3 of 3");
        assertThatThrownBy(() -> TokenBlocks.ofBytes(text, 1)).hasMessageContaining("at least 2");
    }

    @Test
    void shuffledOrderIsThePinnedFisherYates() {
        TokenBlocks blocks = TokenBlocks.ofBytes(new byte[100], 10);
        assertThat(blocks.shuffledOrder(new Rng(42))).containsExactly(new Rng(42).permutation(10))
                .containsExactlyInAnyOrder(0, 1, 2, 3, 4, 5, 6, 7, 8, 9);
    }

    @Test
    void wikiTextSplitsAreThePinnedFiles() {
        assertThat(WikiText2.VALIDATION.bytes()).hasSize(1121681);
        assertThat(WikiText2.TEST.bytes()).hasSize(1256449);
    }
}
