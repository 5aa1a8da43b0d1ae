package org.mechspec.pnmix;

import java.util.List;
import org.mechspec.compute.BitPacking;

/**
 * A mixed-precision KV cache as the attention kernels read it, token order = position order:
 * {@code sinkTokens} fp16 tokens, then the quantized groups of {@code groupTokens} tokens each, then
 * {@code residualTokens} fp16 tokens. fp16 buffers are [token][kvHead][headDim] little-endian halfs.
 * A group's keys are a per-channel block over its tokens (channel = kvHead·headDim + dim, one bit width per
 * channel); its values a per-token block of {@code valueBits} bits over groups of {@code valueGroupChannels}
 * channels. The record holds references to the owner's buffers; it copies nothing.
 */
public record PackedKvCache(int kvHeads, int headDim, int sinkTokens, byte[] sinkKeys, byte[] sinkValues,
                            int groupTokens, List<Group> groups, int valueBits, int valueGroupChannels,
                            int residualTokens, byte[] residualKeys, byte[] residualValues) {

    /** One quantized group: keys per channel with {@code keyBits[channel]}, values per token. */
    public record Group(PackedBlock keys, int[] keyBits, PackedBlock values) {
    }

    public PackedKvCache {
        if (kvHeads <= 0 || headDim <= 0) {
            throw new IllegalArgumentException("kvHeads and headDim must be positive, got " + kvHeads + ", " + headDim);
        }
        groups = List.copyOf(groups);
        int channels = kvHeads * headDim;
        requireHalfs("sinkKeys", sinkKeys, sinkTokens, channels);
        requireHalfs("sinkValues", sinkValues, sinkTokens, channels);
        requireHalfs("residualKeys", residualKeys, residualTokens, channels);
        requireHalfs("residualValues", residualValues, residualTokens, channels);
        if (!groups.isEmpty()) {
            BitPacking.requireBits("valueBits", valueBits);
            BitPacking.groupsPerToken(channels, valueGroupChannels); // refuses a bad value group width
            if (groupTokens <= 0) {
                throw new IllegalArgumentException("groupTokens must be positive, got " + groupTokens);
            }
            for (int g = 0; g < groups.size(); g++) {
                Group gr = groups.get(g);
                if (gr.keyBits().length != channels) {
                    throw new IllegalArgumentException("group " + g + " has " + gr.keyBits().length + " key bit widths, needs " + channels);
                }
                for (int b : gr.keyBits()) {
                    BitPacking.requireBits("group " + g + " key channel", b);
                }
            }
        }
    }

    /**
     * The codes and metadata lengths of mechspec's layout ({@link BitPacking}, {@link PackedBlock}), which its own
     * readers require. Not the record's invariant: an outside implementation may lay its blocks out otherwise and read
     * them with its own operations; the byte accounting then counts what it holds.
     */
    public void requireMechspecLayout() {
        int channels = kvHeads * headDim;
        for (int g = 0; g < groups.size(); g++) {
            Group gr = groups.get(g);
            int vgroups = BitPacking.groupsPerToken(channels, valueGroupChannels);
            int keyBytes = BitPacking.channelOffsets(groupTokens, gr.keyBits())[channels];
            requireLength("group " + g + " key codes", gr.keys().codes().length, keyBytes);
            requireLength("group " + g + " key metadata", gr.keys().meta().length, 4 * channels);
            int valueBytes = groupTokens * vgroups * BitPacking.tokenGroupBytes(valueGroupChannels, valueBits);
            requireLength("group " + g + " value codes", gr.values().codes().length, valueBytes);
            requireLength("group " + g + " value metadata", gr.values().meta().length, 4 * groupTokens * vgroups);
        }
    }

    /** Tokens held. */
    public int length() {
        return sinkTokens + groups.size() * groupTokens + residualTokens;
    }

    public int channels() {
        return kvHeads * headDim;
    }

    /** First position of the residual. */
    public int residualStart() {
        return sinkTokens + groups.size() * groupTokens;
    }

    /** Every byte the cache holds. */
    public long bytes() {
        long n = (long) sinkKeys.length + sinkValues.length + residualKeys.length + residualValues.length;
        for (Group g : groups) {
            n += g.keys().bytes() + g.values().bytes();
        }
        return n;
    }

    /** A cache of fp16 tokens only (everything in the residual): the unquantized reference. */
    public static PackedKvCache fp16(int kvHeads, int headDim, int tokens, byte[] keys, byte[] values) {
        return new PackedKvCache(kvHeads, headDim, 0, new byte[0], new byte[0], 1, List.of(), 2, headDim,
                tokens, keys, values);
    }

    private static void requireHalfs(String name, byte[] a, int tokens, int channels) {
        if (tokens < 0) {
            throw new IllegalArgumentException(name + ": negative token count " + tokens);
        }
        if (a == null) {
            throw new IllegalArgumentException(name + " is missing");
        }
        requireLength(name, a.length, (long) tokens * channels * 2);
    }

    private static void requireLength(String name, long actual, long expected) {
        if (actual != expected) {
            throw new IllegalArgumentException(name + " has " + actual + " bytes, the layout needs " + expected);
        }
    }
}
