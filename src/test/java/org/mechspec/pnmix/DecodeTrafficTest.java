package org.mechspec.pnmix;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The bytes of one split-K decode call, raw and in sectors, on a cache small enough to count by hand. */
@Tag("pn-mix")
class DecodeTrafficTest {
    @Test
    void everyBufferOfATinyPackedCacheRoundsUpToWholeSectors() {
        // 2 KV heads × 4 dims (8 channels): 1 sink token, one group of 4 tokens with 1-bit keys, 1 residual token;
        // 2-bit values in groups of 4 channels (2 value groups per token, 1 byte each).
        byte[] row = new byte[16];
        PackedBlock keys = new PackedBlock(new byte[8], new byte[32]);         // 8 channels × 1 byte; 8 × (scale, zero)
        PackedBlock values = new PackedBlock(new byte[8], new byte[32]);       // 4 tokens × 2 groups × 1 byte; × 4 bytes
        int[] bits = {1, 1, 1, 1, 1, 1, 1, 1};
        PackedKvCache cache = new PackedKvCache(2, 4, 1, row, row, 4, List.of(new PackedKvCache.Group(keys, bits, values)), 2, 4,
                1, row, row);
        cache.requireMechspecLayout();
        // fp32, 2 query heads, 2 chunks per KV head.
        DecodeTraffic t = DecodeTraffic.of(cache, 2, 2, 4);
        // Raw: sink k, v and residual k, v 4 × 16; key codes 8 × 16 (each channel's 1-byte stream padded to 16 bytes
        // in the device copy: CudaCacheCopy#paddedKeyOffsets) and the 16-byte tail after them, key scales/zeros, bits,
        // offsets 3 × 32; value codes 8, value scales/zeros 32; dims 44; query 32; partials m, l, acc 16 + 16 + 64
        // written and read; output 32; 2 KV heads' 4-byte counters, read and written.
        assertThat(t.rawBytes()).isEqualTo(64 + 128 + 16 + 96 + 8 + 32 + 44 + 32 + 2 * 96 + 32 + 2 * 8);
        // Sectors: one for each buffer of at most 32 bytes (11 of them: 4 fp16, 5 group buffers, query, output), four
        // for the key codes (128 bytes), two for the dims (44 bytes), m and l one each and acc two, and the counters'
        // one, twice: 11 + 4 + 2 + 2 × 5 = 27 sectors of 32 bytes.
        assertThat(t.sectorBytes()).isEqualTo(27 * 32);
    }

    @Test
    void anFp16CacheIsTwoBuffersOfRows() {
        // 1 KV head × 16 dims, 3 tokens: 96 bytes of keys and of values, 3 sectors each; fp64, 1 query head, 1 chunk:
        // query 128 bytes (4 sectors), m and l 8 bytes (1 sector each), acc 128 (4), the 4-byte counter (1), both
        // ways; output 4 sectors.
        PackedKvCache cache = PackedKvCache.fp16(1, 16, 3, new byte[96], new byte[96]);
        DecodeTraffic t = DecodeTraffic.of(cache, 1, 1, 8);
        assertThat(t.rawBytes()).isEqualTo(2 * 96 + 128 + 2 * (8 + 8 + 128 + 4) + 128);
        assertThat(t.sectorBytes()).isEqualTo(32L * (3 + 3 + 4 + 2 * (1 + 1 + 4 + 1) + 4));
    }
}
