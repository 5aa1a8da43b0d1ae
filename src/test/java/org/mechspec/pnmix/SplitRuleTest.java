package org.mechspec.pnmix;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mechspec.compute.CudaBackend;
import org.mechspec.compute.Rng;
import org.mechspec.spec.FlashRule;

/**
 * The split-K launch is sized from the SM count: {@value CudaSplitKDecode#BLOCKS_PER_SM} blocks per SM over the KV
 * heads, at least {@value CudaSplitKDecode#MIN_TILES_PER_SPLIT} tiles per block. On the emulated driver at several
 * SM counts (MECHSPEC_EMU_SM_COUNT, one child JVM each) the chosen splits change and every decode stays within the
 * FlashAttention rule of the split-K contract.
 */
@Tag("pn-mix")
class SplitRuleTest {
    private static final int[] SM_COUNTS = {1, 4, 16, 132};

    @Test
    void splitsFollowTheSmCountUntilTheKeysRunShort() {
        // 131072 keys, 8 KV heads, tiles of 64 keys: 2048 tiles per head.
        assertThat(CudaSplitKDecode.chunksWanted(131072, 8, 64, 132)).as("ceil(528 / 8) = 66 chunks a head").isEqualTo(66);
        assertThat(CudaSplitKDecode.chunksWanted(131072, 8, 64, 108)).as("ceil(432 / 8)").isEqualTo(54);
        assertThat(CudaSplitKDecode.chunksWanted(131072, 8, 64, 4)).as("2 chunks a head").isEqualTo(2);
        assertThat(CudaSplitKDecode.chunksWanted(131072, 1, 64, 1)).as("4 chunks of the one head").isEqualTo(4);
        // 200 keys are about 3 tiles: two chunks of about two tiles whatever the SM count.
        for (int sms : SM_COUNTS) {
            assertThat(CudaSplitKDecode.chunksWanted(200, 2, 64, sms)).isEqualTo(2);
        }
        assertThat(CudaSplitKDecode.chunksWanted(1, 8, 64, 132)).isEqualTo(1);
        // An fp16 cache's 131072 rows in 66 chunks at most: 64 of 32 tiles (2048 keys), as even as whole tiles allow;
        // in 54: 53 of 38 tiles and the rest.
        ChunkSplit rows = ChunkSplit.balanced(0, 0, 0, 131072, 64, 66);
        assertThat(List.of(rows.chunks(), rows.longest(), rows.from(1))).containsExactly(64, 2048, 2048);
        ChunkSplit rows54 = ChunkSplit.balanced(0, 0, 0, 131072, 64, 54);
        assertThat(List.of(rows54.chunks(), rows54.longest(), rows54.from(53))).containsExactly(54, 38 * 64, 53 * 38 * 64);
        ChunkSplit short200 = ChunkSplit.balanced(0, 0, 0, 200, 64, 2);
        assertThat(short200.starts()).containsExactly(0, 128, 200);
    }

    @Test
    @Tag("cuda")
    @Tag("emulator-process")
    void onTheEmulatorTheSplitsChangeWithTheSmCountAndTheDecodeHoldsAtEach() throws Exception {
        org.assertj.core.api.Assumptions.assumeThat(EmulatedChild.available()).as("the emulated driver or the kernels were not built").isTrue();
        Map<Integer, List<String>> lines = new TreeMap<>();
        for (int sms : SM_COUNTS) {
            EmulatedChild.Result r = EmulatedChild.run(Map.of("MECHSPEC_EMU_SM_COUNT", Integer.toString(sms)), AtSmCount.class.getName());
            assertThat(r.exit()).as(r.output()).isZero();
            List<String> found = r.output().lines().filter(l -> l.startsWith("case ")).toList();
            assertThat(found).as(r.output()).hasSize(4);
            found.forEach(l -> System.out.println("MECHSPEC_EMU_SM_COUNT=" + sms + " " + l));
            lines.put(sms, found);
        }
        for (int i = 0; i < 4; i++) {
            List<Integer> splits = new ArrayList<>();
            for (int sms : SM_COUNTS) {
                String line = lines.get(sms).get(i);
                assertThat(line).as("SM count %d", sms).contains("sms=" + sms, "holds=true").doesNotContain("holds=false");
                splits.add(Integer.parseInt(field(line, "splits")));
            }
            // More SMs, more splits, until every block is down to its two tiles.
            assertThat(splits).as(lines.get(1).get(i)).isSorted();
            assertThat(splits.get(0)).isLessThan(splits.get(SM_COUNTS.length - 1));
        }
    }

    private static String field(String line, String name) {
        for (String part : line.split(" ")) {
            if (part.startsWith(name + "=")) {
                return part.substring(name.length() + 1);
            }
        }
        throw new AssertionError(name + " missing from " + line);
    }

    /** The child: two decode cases with the automatic launch, packed and fp16, fp64 and fp32, judged as the split-K contract judges them. */
    public static final class AtSmCount {
        public static void main(String[] args) {
            CudaBackend cuda = CudaBackend.get();
            int sms = CudaSplitKDecode.smCount(cuda);
            CudaPackedCacheOps device = new CudaPackedCacheOps(cuda);
            Rng rng = new Rng(42);
            List<PnMixKernelChecks.DecodeCase> cases = List.of(
                    PnMixKernelChecks.decodeCase("6000 keys, 2 KV heads x 32", rng, 2, 4, 32, 6000, 0, false, false),
                    PnMixKernelChecks.decodeCase("2000 keys, 8 KV heads x 128", rng, 8, 4, 128, 2000, 0, false, false));
            for (PnMixKernelChecks.DecodeCase c : cases) {
                for (PackedKvCache cache : List.of(c.packed(), c.fp16())) {
                    CudaSplitKDecode.Launch launch;
                    try (CudaSplitKDecode d = CudaSplitKDecode.upload(cuda, cache, c.queryHeads(), true, 0, bytes -> { })) {
                        launch = d.launchShape();
                    }
                    FlashRule.Verdict v64 = PnMixKernelChecks.decodeFp64(device, cache, c);
                    FlashRule.Verdict v32 = PnMixKernelChecks.decodeFp32(device, cache, c);
                    System.out.printf("case %s/%s sms=%d splits=%d chunk=%d holds=%b fp64_error=%.3g fp32_error=%.3g%n",
                            c.name().replace(' ', '_'), launch.cacheKernel(), sms, launch.splits(), launch.longestChunkKeys(),
                            v64.holds() && v32.holds(), v64.maxError(), v32.maxError());
                }
            }
        }
    }
}
