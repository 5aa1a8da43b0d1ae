package org.mechspec.pnmix;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The split-K decode's automatic split ({@link ChunkSplit#balanced}) against its definition, worked out here
 * independently: the chunks tile the keys, there are at most the chunks wanted, every end falls where a piece may end
 * (a tile of rows from the sink's or the residual's start, a tile of a group from the group's start), and the heaviest
 * chunk (fp16 rows weighing {@link ChunkSplit#ROW_WEIGHT}, each token weighed on its own) weighs the least any such
 * split can, by exhaustive dynamic programming over those ends; where whole groups reach that weight, the ends inside
 * the groups are the groups' starts.
 */
@Tag("pn-mix")
class ChunkSplitTest {
    private static final int TILE = 64;

    @Test
    void theBalancedSplitIsTheLightestOfItsKind() {
        qt().withExamples(400).forAll(integers().between(0, 100).zip(integers().between(0, 200), (a, b) -> new int[] {a, b}),
                integers().between(1, 300), integers().between(0, 40), integers().between(1, 40)).checkAssert((rows, group, groups, wanted) -> {
            int sink = rows[0], residual = rows[1];
            if (sink + groups * group + residual == 0) {
                return;
            }
            ChunkSplit split = ChunkSplit.balanced(sink, group, groups, residual, TILE, wanted);
            Layout layout = new Layout(sink, group, groups, residual);
            int[] s = split.starts();
            assertThat(s[0]).isZero();
            assertThat(s[s.length - 1]).isEqualTo(layout.length());
            assertThat(split.chunks()).isBetween(1, wanted);
            List<Integer> ends = layout.ends(TILE);
            for (int k = 1; k < s.length; k++) {
                assertThat(s[k]).as("chunk %d holds a key", k - 1).isGreaterThan(s[k - 1]);
                assertThat(ends).as("%s: end %d", layout, s[k]).contains(s[k]);
            }
            long heaviest = 0;
            for (int k = 0; k < split.chunks(); k++) {
                heaviest = Math.max(heaviest, layout.weight(s[k], s[k + 1]));
            }
            assertThat(heaviest).as("%s in %d chunks: %s", layout, wanted, java.util.Arrays.toString(s))
                    .isEqualTo(layout.lightestHeaviest(ends, wanted));
            List<Integer> wholeGroups = layout.ends(Math.max(TILE, group));
            if (layout.lightestHeaviest(wholeGroups, wanted) == heaviest) {
                for (int k = 1; k < s.length; k++) {
                    assertThat(wholeGroups).as("%s: end %d on a group's start", layout, s[k]).contains(s[k]);
                }
            }
        });
    }

    @Test
    void theBenchsCacheEndsItsChunksOnItsGroups() {
        // 32 fp16 rows, 255 groups of 128, 96 rows: 66 chunks wanted (132 SMs, 8 KV heads), 66 made.
        ChunkSplit split = ChunkSplit.balanced(32, 128, 255, 96, TILE, 66);
        assertThat(split.chunks()).isEqualTo(66);
        int residual = 32 + 255 * 128;
        for (int k = 1; k < split.chunks(); k++) {
            if (split.from(k) < residual) {
                assertThat((split.from(k) - 32) % 128).as("chunk %d starts a group", k).isZero();
            } else {
                assertThat((split.from(k) - residual) % TILE).as("chunk %d starts a tile of the residual", k).isZero();
            }
        }
        assertThat(split.from(65)).as("the last group and 64 of the residual's rows, then its last 32").isEqualTo(residual + 64);
        assertThat(split.longest()).isEqualTo(512);
        assertThat(split.to(0)).as("the sink's 32 rows weigh 32 · %d keys: 2 groups beside them", ChunkSplit.ROW_WEIGHT).isEqualTo(32 + 2 * 128);
    }

    @Test
    void aUniformSplitCutsEveryChunkKeysAndRefusesNonsense() {
        assertThat(ChunkSplit.uniform(1077, 520).starts()).containsExactly(0, 520, 1040, 1077);
        assertThat(ChunkSplit.uniform(1, 520).starts()).containsExactly(0, 1);
        assertThatThrownBy(() -> ChunkSplit.uniform(0, 64)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("0");
        assertThatThrownBy(() -> ChunkSplit.uniform(10, 0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ChunkSplit.balanced(0, 0, 0, 10, TILE, 0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ChunkSplit(new int[] {0, 5, 5, 9})).hasMessageContaining("chunk 1 holds no key");
        assertThatThrownBy(() -> new ChunkSplit(new int[] {1, 5})).hasMessageContaining("starts at 0");
    }

    /** A packed cache's token layout, weighed token by token. */
    record Layout(int sink, int group, int groups, int residual) {
        int length() {
            return sink + groups * group + residual;
        }

        long weight(int from, int to) {
            long w = 0;
            for (int t = from; t < to; t++) {
                boolean row = t < sink || t >= sink + groups * group;
                w += row ? ChunkSplit.ROW_WEIGHT : 1;
            }
            return w;
        }

        /** Where a chunk may end: every {@code tile} rows from the sink's and the residual's starts, every {@code groupStep} tokens of a group from its start, and each region's end. */
        List<Integer> ends(int groupStep) {
            List<Integer> out = new ArrayList<>();
            for (int t = TILE; t < sink; t += TILE) {
                out.add(t);
            }
            if (sink > 0) {
                out.add(sink);
            }
            for (int g = 0; g < groups; g++) {
                int start = sink + g * group;
                for (int t = start + groupStep; t < start + group; t += groupStep) {
                    out.add(t);
                }
                out.add(start + group);
            }
            int r0 = sink + groups * group;
            for (int t = r0 + TILE; t < r0 + residual; t += TILE) {
                out.add(t);
            }
            if (residual > 0) {
                out.add(r0 + residual);
            }
            return out;
        }

        /** The least weight of the heaviest chunk over every split into at most {@code wanted} chunks ending at {@code ends}. */
        long lightestHeaviest(List<Integer> ends, int wanted) {
            int n = ends.size();
            long[] prefix = new long[n];   // weight(0, ends[j])
            for (int j = 0; j < n; j++) {
                prefix[j] = weight(0, ends.get(j));
            }
            long inf = Long.MAX_VALUE / 4;
            // best[j][c]: the split of [0, ends[j]) into c chunks whose heaviest is lightest
            long[][] best = new long[n][wanted + 1];
            for (long[] row : best) {
                java.util.Arrays.fill(row, inf);
            }
            for (int j = 0; j < n; j++) {
                best[j][1] = prefix[j];
                for (int c = 2; c <= wanted; c++) {
                    for (int i = 0; i < j; i++) {
                        if (best[i][c - 1] < inf) {
                            best[j][c] = Math.min(best[j][c], Math.max(best[i][c - 1], prefix[j] - prefix[i]));
                        }
                    }
                }
            }
            long min = inf;
            for (int c = 1; c <= wanted; c++) {
                min = Math.min(min, best[n - 1][c]);
            }
            return min;
        }
    }
}
