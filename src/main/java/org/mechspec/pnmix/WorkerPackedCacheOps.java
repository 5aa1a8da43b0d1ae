package org.mechspec.pnmix;

import org.mechspec.compute.Finite;
import org.mechspec.compute.OneBitLevels;
import org.mechspec.worker.Call;
import org.mechspec.worker.Implementation;
import org.mechspec.worker.Operations;
import org.mechspec.worker.WireTensor.Dtype;

/**
 * pn-mix's packed-cache operations served by an outside implementation ({@code PROTOCOL.md}): each operation the
 * worker serves goes to it, the others to {@link CpuPackedCacheOps}. Arguments are checked here as the twins check
 * them; the blocks' layout is the implementation's own (the checks judge the bytes it keeps).
 */
final class WorkerPackedCacheOps extends ForwardingPackedCacheOps {
    private final Implementation impl;

    WorkerPackedCacheOps(Implementation impl) {
        super(new CpuPackedCacheOps());
        this.impl = impl;
    }

    @Override
    public String name() {
        return impl.id();
    }

    private boolean serves(String op) {
        return impl.serves(op, Operations.EXACT);
    }

    @Override
    public byte[] packPerChannel(int[] codes, int tokens, int[] bits) {
        if (!serves("pnmix.pack_per_channel")) {
            impl.fellBack("pnmix.pack_per_channel");
            return super.packPerChannel(codes, tokens, bits);
        }
        PackedCacheOps.checkCodes(codes, (long) tokens * bits.length, bits, bits.length);
        return impl.call("pnmix.pack_per_channel", Operations.EXACT).input("codes", codes, tokens, bits.length).input("bits", bits, bits.length)
                .output("packed", Dtype.U8, -1).run().u8("packed");
    }

    @Override
    public int[] unpackPerChannel(byte[] packed, int tokens, int[] bits) {
        if (!serves("pnmix.unpack_per_channel")) {
            impl.fellBack("pnmix.unpack_per_channel");
            return super.unpackPerChannel(packed, tokens, bits);
        }
        return impl.call("pnmix.unpack_per_channel", Operations.EXACT).input("packed", packed).input("bits", bits, bits.length)
                .param("tokens", tokens).output("codes", Dtype.I32, tokens, bits.length).run().i32("codes");
    }

    @Override
    public byte[] packPerToken(int[] codes, int tokens, int channels, int groupChannels, int bits) {
        if (!serves("pnmix.pack_per_token")) {
            impl.fellBack("pnmix.pack_per_token");
            return super.packPerToken(codes, tokens, channels, groupChannels, bits);
        }
        int[] widths = new int[channels];
        java.util.Arrays.fill(widths, bits);
        PackedCacheOps.checkCodes(codes, (long) tokens * channels, widths, channels);
        return impl.call("pnmix.pack_per_token", Operations.EXACT).input("codes", codes, tokens, channels)
                .param("group_channels", groupChannels).param("bits", bits).output("packed", Dtype.U8, -1).run().u8("packed");
    }

    @Override
    public int[] unpackPerToken(byte[] packed, int tokens, int channels, int groupChannels, int bits) {
        if (!serves("pnmix.unpack_per_token")) {
            impl.fellBack("pnmix.unpack_per_token");
            return super.unpackPerToken(packed, tokens, channels, groupChannels, bits);
        }
        return impl.call("pnmix.unpack_per_token", Operations.EXACT).input("packed", packed).param("tokens", tokens)
                .param("channels", channels).param("group_channels", groupChannels).param("bits", bits)
                .output("codes", Dtype.I32, tokens, channels).run().i32("codes");
    }

    @Override
    public PackedBlock quantizePerChannel(double[] x, int tokens, int[] bits, OneBitLevels oneBit) {
        if (!serves("pnmix.quantize_per_channel")) {
            impl.fellBack("pnmix.quantize_per_channel");
            return super.quantizePerChannel(x, tokens, bits, oneBit);
        }
        requireLength("x", x.length, (long) tokens * bits.length);
        Finite.require("x", x);
        return block(impl.call("pnmix.quantize_per_channel", Operations.EXACT).input("x", x, tokens, bits.length)
                .input("bits", bits, bits.length).param("one_bit", oneBit));
    }

    @Override
    public PackedBlock quantizePerToken(double[] x, int tokens, int channels, int groupChannels, int bits, OneBitLevels oneBit) {
        if (!serves("pnmix.quantize_per_token")) {
            impl.fellBack("pnmix.quantize_per_token");
            return super.quantizePerToken(x, tokens, channels, groupChannels, bits, oneBit);
        }
        requireLength("x", x.length, (long) tokens * channels);
        Finite.require("x", x);
        return block(impl.call("pnmix.quantize_per_token", Operations.EXACT).input("x", x, tokens, channels)
                .param("group_channels", groupChannels).param("bits", bits).param("one_bit", oneBit));
    }

    private static PackedBlock block(Call call) {
        Call.Reply r = call.output("codes", Dtype.U8, -1).output("meta", Dtype.U8, -1).run();
        return new PackedBlock(r.u8("codes"), r.u8("meta"));
    }

    @Override
    public double[] dequantizePerChannel(PackedBlock block, int tokens, int[] bits) {
        if (!serves("pnmix.dequantize_per_channel")) {
            impl.fellBack("pnmix.dequantize_per_channel");
            return super.dequantizePerChannel(block, tokens, bits);
        }
        return impl.call("pnmix.dequantize_per_channel", Operations.EXACT).input("codes", block.codes()).input("meta", block.meta())
                .input("bits", bits, bits.length).param("tokens", tokens).output("x", Dtype.F64, tokens, bits.length).run().f64("x");
    }

    @Override
    public double[] dequantizePerToken(PackedBlock block, int tokens, int channels, int groupChannels, int bits) {
        if (!serves("pnmix.dequantize_per_token")) {
            impl.fellBack("pnmix.dequantize_per_token");
            return super.dequantizePerToken(block, tokens, channels, groupChannels, bits);
        }
        return impl.call("pnmix.dequantize_per_token", Operations.EXACT).input("codes", block.codes()).input("meta", block.meta())
                .param("tokens", tokens).param("channels", channels).param("group_channels", groupChannels).param("bits", bits)
                .output("x", Dtype.F64, tokens, channels).run().f64("x");
    }

    @Override
    public PackedAttention attend(PackedKvCache cache, double[] q, int queryHeads, int queryLen, boolean causal, boolean withLogits) {
        if (!impl.serves("pnmix.attend", Operations.F64)) {
            impl.fellBack("pnmix.attend (f64)");
            return super.attend(cache, q, queryHeads, queryLen, causal, withLogits);
        }
        PackedCacheOps.checkAttentionArguments(cache, q.length, queryHeads, queryLen, causal);
        Finite.require("q", q);
        Call call = withCache(impl.call("pnmix.attend", Operations.F64), cache).input("q", q, queryHeads, queryLen, cache.headDim())
                .param("causal", causal).param("with_logits", withLogits).output("out", Dtype.F64, queryHeads, queryLen, cache.headDim());
        if (withLogits) {
            call.outputAnyValue("logits", Dtype.F64, queryHeads, queryLen, cache.length());
        }
        Call.Reply r = call.run();
        return new PackedAttention(r.f64("out"), withLogits ? r.f64("logits") : null);
    }

    @Override
    public float[] attendFp32(PackedKvCache cache, float[] q, int queryHeads, int queryLen, boolean causal) {
        if (!impl.serves("pnmix.attend", Operations.F32)) {
            impl.fellBack("pnmix.attend (f32)");
            return super.attendFp32(cache, q, queryHeads, queryLen, causal);
        }
        PackedCacheOps.checkAttentionArguments(cache, q.length, queryHeads, queryLen, causal);
        Finite.require("q", q);
        return withCache(impl.call("pnmix.attend", Operations.F32), cache).input("q", q, queryHeads, queryLen, cache.headDim())
                .param("causal", causal).param("with_logits", false)
                .output("out", Dtype.F32, queryHeads, queryLen, cache.headDim()).run().f32("out");
    }

    @Override
    public double[] decode(PackedKvCache cache, double[] q, int queryHeads) {
        if (!impl.serves("pnmix.decode", Operations.F64)) {
            impl.fellBack("pnmix.decode (f64)");
            return super.decode(cache, q, queryHeads);
        }
        PackedCacheOps.checkAttentionArguments(cache, q.length, queryHeads, 1, false);
        Finite.require("q", q);
        return withCache(impl.call("pnmix.decode", Operations.F64), cache).input("q", q, queryHeads, cache.headDim())
                .output("out", Dtype.F64, queryHeads, cache.headDim()).run().f64("out");
    }

    @Override
    public float[] decodeFp32(PackedKvCache cache, float[] q, int queryHeads) {
        if (!impl.serves("pnmix.decode", Operations.F32)) {
            impl.fellBack("pnmix.decode (f32)");
            return super.decodeFp32(cache, q, queryHeads);
        }
        PackedCacheOps.checkAttentionArguments(cache, q.length, queryHeads, 1, false);
        Finite.require("q", q);
        return withCache(impl.call("pnmix.decode", Operations.F32), cache).input("q", q, queryHeads, cache.headDim())
                .output("out", Dtype.F32, queryHeads, cache.headDim()).run().f32("out");
    }

    /** The cache's buffers and shape, as {@code PROTOCOL.md} names them. */
    private static Call withCache(Call call, PackedKvCache c) {
        call.param("kv_heads", c.kvHeads()).param("head_dim", c.headDim()).param("sink_tokens", c.sinkTokens())
                .param("group_tokens", c.groupTokens()).param("groups", c.groups().size()).param("value_bits", c.valueBits())
                .param("value_group_channels", c.valueGroupChannels()).param("residual_tokens", c.residualTokens())
                .input("sink_keys", c.sinkKeys()).input("sink_values", c.sinkValues())
                .input("residual_keys", c.residualKeys()).input("residual_values", c.residualValues());
        for (int g = 0; g < c.groups().size(); g++) {
            PackedKvCache.Group gr = c.groups().get(g);
            call.input("group." + g + ".key_codes", gr.keys().codes()).input("group." + g + ".key_meta", gr.keys().meta())
                    .input("group." + g + ".key_bits", gr.keyBits(), gr.keyBits().length)
                    .input("group." + g + ".value_codes", gr.values().codes()).input("group." + g + ".value_meta", gr.values().meta());
        }
        return call;
    }

    private static void requireLength(String name, int actual, long expected) {
        if (actual != expected) {
            throw new IllegalArgumentException(name + " has " + actual + " elements, shape needs " + expected);
        }
    }
}
