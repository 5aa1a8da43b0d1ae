package org.mechspec.pnmix;

/**
 * Counts that follow from the configuration alone (protocols.md, pn-mix), never from a cache: where the residual starts,
 * which decode queries see the final storage, how many quantized key bytes a run must hold. The checks compare
 * the mechanism's own counters with these.
 */
public final class ConfigCounts {
    private ConfigCounts() {
    }

    /**
     * Decode queries whose visible tokens are stored alike at their call and in the final cache, from the
     * configuration alone: query t sees 0..t; it saw the final storage iff no token below the final residual start
     * was still in the residual at its call, i.e. residualStart(t + 1) ≥ min(t + 1, residualStart(n)).
     */
    public static int unchangedWindowQueries(PnMixConfig c) {
        int finalStart = residualStart(c, c.totalTokens());
        int count = 0;
        for (int t = c.tokens().prefill(); t < c.totalTokens(); t++) {
            count += residualStart(c, t + 1) >= Math.min(t + 1, finalStart) ? 1 : 0;
        }
        return count;
    }

    /** First residual position after {@code len} appends: the sink, then whole residuals of residualSize tokens. */
    public static int residualStart(PnMixConfig c, int len) {
        int sink = Math.min(len, c.cache().sinkTokens());
        return sink + (len - sink) / c.cache().residualSize() * c.cache().residualSize();
    }

    /**
     * Quantized key bytes after {@code tokens} appends from the configuration alone: per complete group and KV head,
     * {@code highChannels} channels of ⌈g·highBits/8⌉ bytes, the other d − highChannels of ⌈g·lowBits/8⌉, and an
     * fp16 scale and zero (4 bytes) per channel.
     */
    public static long quantizedKeyBytesBudget(PnMixConfig c, int tokens, int highBits, int lowBits, int highChannels) {
        long groups = (residualStart(c, tokens) - Math.min(tokens, c.cache().sinkTokens())) / c.cache().groupSize();
        int g = c.cache().groupSize();
        long perHead = highChannels * ((g * highBits + 7L) / 8) + (c.model().headDim() - highChannels) * ((g * lowBits + 7L) / 8)
                + 4L * c.model().headDim();
        return groups * c.model().kvHeads() * perHead;
    }
}
