package org.mechspec.oal;


/**
 * Shape of causal grouped-quadratic linear attention (OAL, protocols.md (OAL)). Token-major layouts, as a Qwen2 layer's
 * projections produce them: q and out [batch, seqLen, heads, headDim]; k and v [batch, seqLen, kvHeads, headDim];
 * query head h reads KV head h / (heads / kvHeads). Per query head h: {@code groups[h·headDim + i]} ∈ [0, G) is the
 * group of dimension i, and {@code m[h·(G+1)² …]} the (G+1)×(G+1) coefficient matrix M, row-major, so that
 * sim(q, k) = ε + [1, z]·M·[1, z]ᵀ with z_g = Σ_{i in g} (q_i/√d)·k_i. Denominators are [batch, seqLen, heads].
 */
public record QuadraticAttentionShape(int batch, int seqLen, int heads, int kvHeads, int headDim, int groupCount) {
    /** The CUDA kernels keep [1, z] in registers: at most this many groups. */
    public static final int MAX_GROUPS = 8;

    public QuadraticAttentionShape {
        if (batch <= 0 || seqLen <= 0 || heads <= 0 || kvHeads <= 0 || headDim <= 0) {
            throw new IllegalArgumentException("OAL shape needs positive sizes, got batch " + batch + ", seqLen " + seqLen
                    + ", heads " + heads + ", kvHeads " + kvHeads + ", headDim " + headDim);
        }
        if (heads % kvHeads != 0) {
            throw new IllegalArgumentException("heads " + heads + " is not a multiple of kvHeads " + kvHeads);
        }
        if (groupCount < 1 || groupCount > MAX_GROUPS) {
            throw new IllegalArgumentException("groupCount must be in [1, " + MAX_GROUPS + "], got " + groupCount);
        }
    }

    public int kvHeadOf(int head) {
        return head / (heads / kvHeads);
    }

    /** Side of M: G + 1. */
    public int side() {
        return groupCount + 1;
    }

    public int queryElements() {
        return batch * seqLen * heads * headDim;
    }

    public int keyElements() {
        return batch * seqLen * kvHeads * headDim;
    }

    public int groupElements() {
        return heads * headDim;
    }

    public int coefficientElements() {
        return heads * side() * side();
    }

    public int denominatorElements() {
        return batch * seqLen * heads;
    }

    public int queryOffset(int b, int t, int h) {
        return ((b * seqLen + t) * heads + h) * headDim;
    }

    public int kvOffset(int b, int t, int g) {
        return ((b * seqLen + t) * kvHeads + g) * headDim;
    }

    /** Features of the recurrent state per value column: 1, k_i, and k_i·k_j for i ≤ j. */
    public int stateFeatures() {
        return 1 + headDim + headDim * (headDim + 1) / 2;
    }

    /** Rejects arrays of the wrong length and group ids outside [0, G), naming the array. */
    public void validate(int q, int k, int v, int[] groups, int m) {
        require("q", q, queryElements());
        require("k", k, keyElements());
        require("v", v, keyElements());
        require("groups", groups.length, groupElements());
        require("m", m, coefficientElements());
        for (int i = 0; i < groups.length; i++) {
            if (groups[i] < 0 || groups[i] >= groupCount) {
                throw new IllegalArgumentException("groups[" + i + "] = " + groups[i] + " is outside [0, " + groupCount + ")");
            }
        }
    }

    private static void require(String name, int have, int want) {
        if (have != want) {
            throw new IllegalArgumentException(name + " has " + have + " elements, the OAL shape needs " + want);
        }
    }
}
