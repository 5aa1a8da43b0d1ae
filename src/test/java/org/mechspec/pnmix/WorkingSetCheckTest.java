package org.mechspec.pnmix;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.mechspec.spec.Breaks;

/**
 * {@code packed_attention_working_set_bounded} against the CPU twin (which reads the cache a block at a time) and
 * against a mutant that dequantizes the whole cache before each attention, as an implementation that reuses its
 * dense attention does.
 */
@Tag("pn-mix")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class WorkingSetCheckTest {
    private final PnMixKernelChecks.DecodeCase cache = WorkingSetCheck.cacheFor(42, new CpuPackedCacheOps());

    @Test
    void theCpuTwinHoldsOneTileBesideTheCache() {
        WorkingSetCheck.Verdict v = WorkingSetCheck.judge(new CpuPackedCacheOps(), TransientMemory.jvmAllocations(), cache);
        assertThat(v.held()).as("%s", v).isTrue();
        // Resolution: the bound is well below a whole dequantized copy, so a copy cannot hide in it.
        assertThat(2 * v.decode64().boundBytes()).isLessThan(v.decode64().wholeCacheBytes());
    }

    @Test
    @Breaks(paper = "pn-mix", check = "packed_attention_working_set_bounded")
    void dequantizingTheWholeCacheBeforeAttentionBreaksTheWorkingSetBound() {
        WorkingSetCheck.Verdict v = WorkingSetCheck.judge(new WholeCacheDequantizingOps(), TransientMemory.jvmAllocations(), cache);
        assertThat(v.held()).as("%s", v).isFalse();
        assertThat(v.decode64().held()).isFalse();
        assertThat(v.attend64().held()).isFalse();
    }

    /** Keys and values of every token dequantized into two fp64 arrays, then the CPU twin's attention. */
    private static final class WholeCacheDequantizingOps extends DelegatingOps {
        private double[][] dequantized(PackedKvCache c) {
            PackedCacheReader reader = new PackedCacheReader(c);
            double[] k = new double[c.length() * c.channels()];
            double[] v = new double[k.length];
            double[] rows = new double[reader.maxBlockTokens() * c.headDim()];
            for (int kvh = 0; kvh < c.kvHeads(); kvh++) {
                for (int from = 0, to; from < c.length(); from = to) {
                    to = reader.blockEnd(from);
                    reader.keys(from, to, kvh, rows);
                    copy(rows, k, c, kvh, from, to);
                    reader.values(from, to, kvh, rows);
                    copy(rows, v, c, kvh, from, to);
                }
            }
            return new double[][] {k, v};
        }

        private static void copy(double[] rows, double[] into, PackedKvCache c, int kvh, int from, int to) {
            for (int t = from; t < to; t++) {
                System.arraycopy(rows, (t - from) * c.headDim(), into, t * c.channels() + kvh * c.headDim(), c.headDim());
            }
        }

        @Override
        public PackedAttention attend(PackedKvCache c, double[] q, int queryHeads, int queryLen, boolean causal, boolean withLogits) {
            double[][] kv = dequantized(c);
            PackedAttention a = super.attend(c, q, queryHeads, queryLen, causal, withLogits);
            a.out()[0] += kv[0][0] * 0.0 + kv[1][kv[1].length - 1] * 0.0; // the copies are used, so they are made
            return a;
        }

        @Override
        public double[] decode(PackedKvCache c, double[] q, int queryHeads) {
            return attend(c, q, queryHeads, 1, false, false).out();
        }

        @Override
        public float[] decodeFp32(PackedKvCache c, float[] q, int queryHeads) {
            double[][] kv = dequantized(c);
            float[] out = super.decodeFp32(c, q, queryHeads);
            out[0] += (float) (kv[0][0] * 0.0 + kv[1][kv[1].length - 1] * 0.0);
            return out;
        }
    }
}
