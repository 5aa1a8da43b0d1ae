package org.mechspec.pnmix;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.mechspec.compute.OneBitLevels;
import org.mechspec.spec.Breaks;

/**
 * The bit-equality differential must count every difference a broken device makes, exactly once per differing
 * byte or element, and must feed the device the shapes and values its comment promises. On a CPU-only run the
 * device is the CPU itself, so the "device" here is the CPU twin with one deliberate fault.
 */
class PnMixKernelChecksTest {
    private static final long SEED = 7;
    /** quantizePackMismatches runs 3 shapes; quantize/dequantize once per 1-bit mode, pack/unpack once per shape. */
    private static final int SHAPES = 3;
    private static final int PER_MODE_CALLS = SHAPES * OneBitLevels.values().length;

    private static long mismatches(DelegatingOps device) {
        return PnMixKernelChecks.quantizePackMismatches(device, new CpuPackedCacheOps(), SEED);
    }

    private static byte[] flipLowBit(byte[] b) {
        byte[] out = b.clone();
        out[0] ^= 1;
        return out;
    }

    @Test
    void theUnbrokenTwinHasNoMismatches() {
        assertThat(mismatches(new DelegatingOps())).isZero();
    }

    @Test
    @Breaks(paper = "pn-mix", check = "cuda_quantize_pack_bit_equal")
    void oneWrongBitInPerChannelCodesCountsOneBytePerCall() {
        assertThat(mismatches(new DelegatingOps() {
            @Override
            public PackedBlock quantizePerChannel(double[] x, int tokens, int[] bits, OneBitLevels oneBit) {
                PackedBlock b = cpu.quantizePerChannel(x, tokens, bits, oneBit);
                return new PackedBlock(flipLowBit(b.codes()), b.meta());
            }
        })).isEqualTo(PER_MODE_CALLS);
    }

    @Test
    @Breaks(paper = "pn-mix", check = "cuda_quantize_pack_bit_equal")
    void oneWrongBitInPerChannelScaleCountsOneBytePerCall() {
        assertThat(mismatches(new DelegatingOps() {
            @Override
            public PackedBlock quantizePerChannel(double[] x, int tokens, int[] bits, OneBitLevels oneBit) {
                PackedBlock b = cpu.quantizePerChannel(x, tokens, bits, oneBit);
                return new PackedBlock(b.codes(), flipLowBit(b.meta()));
            }
        })).isEqualTo(PER_MODE_CALLS);
    }

    @Test
    @Breaks(paper = "pn-mix", check = "cuda_quantize_pack_bit_equal")
    void oneWrongBitInPerTokenCodesCountsOneBytePerCall() {
        assertThat(mismatches(new DelegatingOps() {
            @Override
            public PackedBlock quantizePerToken(double[] x, int tokens, int channels, int gc, int bits, OneBitLevels oneBit) {
                PackedBlock b = cpu.quantizePerToken(x, tokens, channels, gc, bits, oneBit);
                return new PackedBlock(flipLowBit(b.codes()), b.meta());
            }
        })).isEqualTo(PER_MODE_CALLS);
    }

    @Test
    @Breaks(paper = "pn-mix", check = "cuda_quantize_pack_bit_equal")
    void oneWrongBitInPerTokenScaleCountsOneBytePerCall() {
        assertThat(mismatches(new DelegatingOps() {
            @Override
            public PackedBlock quantizePerToken(double[] x, int tokens, int channels, int gc, int bits, OneBitLevels oneBit) {
                PackedBlock b = cpu.quantizePerToken(x, tokens, channels, gc, bits, oneBit);
                return new PackedBlock(b.codes(), flipLowBit(b.meta()));
            }
        })).isEqualTo(PER_MODE_CALLS);
    }

    @Test
    @Breaks(paper = "pn-mix", check = "cuda_quantize_pack_bit_equal")
    void oneValueOffByAnUlpInPerChannelDequantizeCountsOncePerCall() {
        assertThat(mismatches(new DelegatingOps() {
            @Override
            public double[] dequantizePerChannel(PackedBlock block, int tokens, int[] bits) {
                double[] v = cpu.dequantizePerChannel(block, tokens, bits);
                v[v.length - 1] = Math.nextUp(v[v.length - 1]);
                return v;
            }
        })).isEqualTo(PER_MODE_CALLS);
    }

    @Test
    @Breaks(paper = "pn-mix", check = "cuda_quantize_pack_bit_equal")
    void oneValueOffByAnUlpInPerTokenDequantizeCountsOncePerCall() {
        assertThat(mismatches(new DelegatingOps() {
            @Override
            public double[] dequantizePerToken(PackedBlock block, int tokens, int channels, int gc, int bits) {
                double[] v = cpu.dequantizePerToken(block, tokens, channels, gc, bits);
                v[0] = Math.nextDown(v[0]);
                return v;
            }
        })).isEqualTo(PER_MODE_CALLS);
    }

    @Test
    @Breaks(paper = "pn-mix", check = "cuda_quantize_pack_bit_equal")
    void aMissingValueCountsAsOneMismatch() {
        // one element short: the length difference is the whole count
        assertThat(mismatches(new DelegatingOps() {
            @Override
            public double[] dequantizePerToken(PackedBlock block, int tokens, int channels, int gc, int bits) {
                double[] v = cpu.dequantizePerToken(block, tokens, channels, gc, bits);
                return java.util.Arrays.copyOf(v, v.length - 1);
            }
        })).isEqualTo(PER_MODE_CALLS);
    }

    @Test
    @Breaks(paper = "pn-mix", check = "cuda_quantize_pack_bit_equal")
    void wrongPackedBytesOrUnpackedCodesCountOncePerShape() {
        assertThat(mismatches(new DelegatingOps() {
            @Override
            public byte[] packPerChannel(int[] codes, int tokens, int[] bits) {
                return flipLowBit(cpu.packPerChannel(codes, tokens, bits));
            }
        })).isEqualTo(SHAPES);
        assertThat(mismatches(new DelegatingOps() {
            @Override
            public int[] unpackPerChannel(byte[] packed, int tokens, int[] bits) {
                int[] c = cpu.unpackPerChannel(packed, tokens, bits);
                c[0] ^= 1;
                return c;
            }
        })).isEqualTo(SHAPES);
        assertThat(mismatches(new DelegatingOps() {
            @Override
            public byte[] packPerToken(int[] codes, int tokens, int channels, int gc, int bits) {
                return flipLowBit(cpu.packPerToken(codes, tokens, channels, gc, bits));
            }
        })).isEqualTo(SHAPES);
        assertThat(mismatches(new DelegatingOps() {
            @Override
            public int[] unpackPerToken(byte[] packed, int tokens, int channels, int gc, int bits) {
                int[] c = cpu.unpackPerToken(packed, tokens, channels, gc, bits);
                c[c.length - 1] ^= 1;
                return c;
            }
        })).isEqualTo(SHAPES);
    }

    /** What the check handed the device: the inputs of every quantize and per-token pack call. */
    private static final class RecordingOps extends DelegatingOps {
        final List<double[]> channelX = new ArrayList<>();
        final List<int[]> channelShape = new ArrayList<>(); // tokens, channels
        final List<int[]> channelBits = new ArrayList<>();
        final List<int[]> tokenShape = new ArrayList<>(); // tokens, channels, groupChannels, bits
        final List<int[]> tokenCodes = new ArrayList<>();

        @Override
        public PackedBlock quantizePerChannel(double[] x, int tokens, int[] bits, OneBitLevels oneBit) {
            channelX.add(x.clone());
            channelShape.add(new int[] {tokens, bits.length});
            channelBits.add(bits.clone());
            return cpu.quantizePerChannel(x, tokens, bits, oneBit);
        }

        @Override
        public PackedBlock quantizePerToken(double[] x, int tokens, int channels, int gc, int bits, OneBitLevels oneBit) {
            tokenShape.add(new int[] {tokens, channels, gc, bits});
            return cpu.quantizePerToken(x, tokens, channels, gc, bits, oneBit);
        }

        @Override
        public byte[] packPerToken(int[] codes, int tokens, int channels, int gc, int bits) {
            tokenCodes.add(codes.clone());
            return cpu.packPerToken(codes, tokens, channels, gc, bits);
        }
    }

    private static RecordingOps recorded(long seed) {
        RecordingOps r = new RecordingOps();
        PnMixKernelChecks.quantizePackMismatches(r, new CpuPackedCacheOps(), seed);
        return r;
    }

    @Test
    void thePinnedShapeHasThreeAndOneBitChannelsAConstantChannelAndSignedZeros() {
        RecordingOps r = recorded(SEED);
        assertThat(r.channelShape.get(0)).containsExactly(128, 64);
        assertThat(r.tokenShape.get(0)).containsExactly(128, 64, 32, 2);
        int[] bits = r.channelBits.get(0);
        assertThat(bits).containsOnly(1, 3).contains(1, 3);
        double[] x = r.channelX.get(0);
        int plus = 0;
        int minus = 0;
        double sq = 0;
        int n = 0;
        for (int t = 0; t < 128; t++) {
            assertThat(x[t * 64]).isEqualTo(0.75);
            double z = x[t * 64 + 1];
            plus += Double.doubleToRawLongBits(z) == 0L ? 1 : 0;
            minus += Double.doubleToRawLongBits(z) == Long.MIN_VALUE ? 1 : 0;
            for (int c = 2; c < 64; c++) {
                sq += x[t * 64 + c] * x[t * 64 + c];
                n++;
            }
        }
        assertThat(plus).isPositive();
        assertThat(minus).isPositive();
        // the other channels are N(0, 2²): 7936 draws put the sample std within 0.15 of 2 (about 4.5 sigma)
        assertThat(Math.sqrt(sq / n)).isBetween(1.85, 2.15);
        // per-token codes are uniform over 2 bits: 8192 of them reach 3
        assertThat(java.util.Arrays.stream(r.tokenCodes.get(0)).max().getAsInt()).isEqualTo(3);
    }

    @Test
    void theRandomShapesSpanTheirRangesOverSeeds() {
        int maxTokens1 = 0;
        int maxChannels1 = 0;
        int maxTokenBits1 = 0;
        int maxChannelBits = 0;
        int maxTokens2 = 0;
        int maxTokenBits2 = 0;
        int maxCode = 0;
        for (long seed = 0; seed < 20; seed++) {
            RecordingOps r = recorded(seed);
            int[] s1 = r.tokenShape.get(PER_MODE_CALLS / SHAPES);
            int[] s2 = r.tokenShape.get(2 * PER_MODE_CALLS / SHAPES);
            assertThat(s1[0]).isBetween(1, 200);
            assertThat(s1[1]).isBetween(1, 9);
            assertThat(s1[2]).isEqualTo(s1[1]);
            assertThat(s2[1]).isEqualTo(12);
            assertThat(s2[2]).isEqualTo(4);
            assertThat(s2[0]).isBetween(1, 40);
            maxTokens1 = Math.max(maxTokens1, s1[0]);
            maxChannels1 = Math.max(maxChannels1, s1[1]);
            maxTokenBits1 = Math.max(maxTokenBits1, s1[3]);
            maxTokens2 = Math.max(maxTokens2, s2[0]);
            maxTokenBits2 = Math.max(maxTokenBits2, s2[3]);
            for (int i = 1; i < SHAPES; i++) {
                int[] bits = r.channelBits.get(i * PER_MODE_CALLS / SHAPES);
                maxChannelBits = Math.max(maxChannelBits, java.util.Arrays.stream(bits).max().getAsInt());
                maxCode = Math.max(maxCode, java.util.Arrays.stream(r.tokenCodes.get(i)).max().getAsInt());
            }
        }
        // 20 seeds of uniform draws reach well into each range
        assertThat(maxTokens1).isGreaterThan(100);
        assertThat(maxChannels1).isGreaterThan(5);
        assertThat(maxTokenBits1).isGreaterThan(4);
        assertThat(maxTokens2).isGreaterThan(20);
        assertThat(maxTokenBits2).isGreaterThan(4);
        assertThat(maxChannelBits).isGreaterThan(4);
        assertThat(maxCode).isGreaterThan(15);
    }

    @Test
    void attentionCaseZeroIsThePinnedCausalDecode() {
        for (long seed = 0; seed < 8; seed++) {
            PnMixKernelChecks.AttentionCase a = PnMixKernelChecks.attentionCase(seed, 0);
            // protocols.md (pn-mix): 384 prefill + 64 decode tokens, 8 query heads over 2 KV heads of 32 dims, 32 sinks
            assertThat(a.cache().length()).isEqualTo(448);
            assertThat(a.cache().sinkTokens()).isEqualTo(32);
            assertThat(a.cache().kvHeads()).isEqualTo(2);
            assertThat(a.cache().headDim()).isEqualTo(32);
            assertThat(a.queryHeads()).isEqualTo(8);
            assertThat(a.queryLen()).isEqualTo(64);
            assertThat(a.causal()).isTrue();
            assertThat(a.q()).hasSize(8 * 64 * 32);
        }
    }

    @Test
    void randomAttentionCasesSpanTheirShapesOverSeeds() {
        int minKv = Integer.MAX_VALUE;
        int maxKv = 0;
        int maxD = 0;
        int maxGqa = 0;
        int maxSinks = 0;
        int maxValueBits = 0;
        int maxLength = 0;
        int maxQueries = 0;
        int causal = 0;
        boolean twoWideKeyWidths = false;
        for (long seed = 0; seed < 40; seed++) {
            PnMixKernelChecks.AttentionCase a = PnMixKernelChecks.attentionCase(seed, 1);
            var cache = a.cache();
            minKv = Math.min(minKv, cache.kvHeads());
            maxKv = Math.max(maxKv, cache.kvHeads());
            maxD = Math.max(maxD, cache.headDim());
            maxGqa = Math.max(maxGqa, a.queryHeads() / cache.kvHeads());
            maxSinks = Math.max(maxSinks, cache.sinkTokens());
            maxLength = Math.max(maxLength, cache.length());
            maxQueries = Math.max(maxQueries, a.queryLen());
            causal += a.causal() ? 1 : 0;
            if (!cache.groups().isEmpty()) {
                maxValueBits = Math.max(maxValueBits, cache.valueBits());
                int[] w = java.util.Arrays.stream(cache.groups().get(0).keyBits()).distinct().toArray();
                twoWideKeyWidths |= w.length == 2 && w[0] > 1 && w[1] > 1;
            }
        }
        assertThat(minKv).isEqualTo(1);
        assertThat(maxKv).isEqualTo(3);
        assertThat(maxD).isGreaterThan(16);
        assertThat(maxGqa).isGreaterThan(1);
        assertThat(maxSinks).isPositive();
        assertThat(maxValueBits).isGreaterThan(4);
        assertThat(maxLength).isGreaterThan(150);
        assertThat(maxQueries).isGreaterThan(3);
        assertThat(causal).isStrictlyBetween(0, 40);
        // high and low widths both drawn from 1..8: some case mixes two widths above 1
        assertThat(twoWideKeyWidths).isTrue();
    }

    @Test
    void differentSeedsGiveDifferentRandomCases() {
        assertThat(java.util.Arrays.equals(PnMixKernelChecks.attentionCase(1, 1).q(), PnMixKernelChecks.attentionCase(2, 1).q()))
                .isFalse();
    }
}
