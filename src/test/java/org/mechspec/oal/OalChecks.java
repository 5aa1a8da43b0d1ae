package org.mechspec.oal;

import org.mechspec.compute.FloatArrays;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.mechspec.compute.Rng;
import org.mechspec.spec.FlashRule;
import org.mechspec.spec.Manifest;

/**
 * The OAL contracts' predicates as plain functions, shared by the contracts (real mechanism) and the mutant tests
 * (deliberately broken mechanism).
 */
final class OalChecks {
    private OalChecks() {
    }

    // ------------------------------------------------------------ recurrent_dense_equivalence

    /** Recurrent = dense within fp32Tolerance in fp32, and recurrent = dense = pairwise oracle within fp64Tolerance. */
    static boolean formsAgree(KernelAgreement a, double fp32Tolerance, double fp64Tolerance) {
        return a.recurrentDenseFp32() <= fp32Tolerance && a.recurrentDenseFp64() <= fp64Tolerance
                && a.denseOracleFp64() <= fp64Tolerance;
    }

    // ------------------------------------------------------------ kernel_positive_for_any_coefficients

    /** The smallest sim(q_t, k_j), j ≤ t, with M built from L as the mechanism builds it. */
    static double minSimilarity(LayerSamples s, int[] groups, int groupCount, double[][] l) {
        return minSimilarityFromGram(s, groups, groupCount, QuadraticForm.gramAll(l, groupCount + 1));
    }

    /** The smallest sim(q_t, k_j), j ≤ t, for the given M of every head ([heads, side, side]). */
    static double minSimilarityFromGram(LayerSamples s, int[] groups, int groupCount, double[] m) {
        return PairwiseOracle.minSimilarityFromGram(s.shape(groupCount), s.q(), s.k(), groups, m);
    }

    /** sim ≥ ε/2 everywhere: ε + a PSD form, up to rounding far below ε. */
    static boolean kernelPositive(double minSimilarity) {
        return minSimilarity >= GroupedQuadraticAttentionOps.EPSILON / 2;
    }

    /** The runtime guard fires on both forms when M is negative definite (M = −I): a clear error, no NaN output. */
    static boolean guardRejectsNonPositive(GroupedQuadraticAttentionOps ops, LayerSamples s, int[] groups, int groupCount) {
        int side = groupCount + 1;
        double[] m = new double[s.heads() * side * side];
        for (int h = 0; h < s.heads(); h++) {
            for (int a = 0; a < side; a++) {
                m[h * side * side + a * side + a] = -1.0;
            }
        }
        QuadraticAttentionShape shape = s.shape(groupCount);
        return throwsGuard(() -> ops.dense(shape, s.q(), s.k(), s.v(), groups, m))
                && throwsGuard(() -> ops.recurrent(shape, s.q(), s.k(), s.v(), groups, m));
    }

    private static boolean throwsGuard(Runnable r) {
        try {
            r.run();
            return false;
        } catch (NonPositiveDenominatorException e) {
            return true;
        }
    }

    // ------------------------------------------------------------ calibration / block gradients

    static boolean gradientMatches(double relativeError, double threshold) {
        return relativeError <= threshold;
    }

    // ------------------------------------------------------------ grouping_is_deterministic

    /**
     * The grouping obeys the rule, checked pair by pair without sorting: group sizes ⌈d/16⌉, ⌈3d/16⌉ and the rest,
     * and every dimension of an earlier group (1, then 2, then 0) beats every dimension of a later one — a larger
     * contribution, or an equal one at a lower index.
     */
    static boolean groupingFollowsRule(double[] contributions, int[] groups, int heads, int headDim) {
        int[] rankOfGroup = new int[Grouping.GROUPS];
        rankOfGroup[Grouping.OUTLIERS] = 0;
        rankOfGroup[Grouping.SECONDARY] = 1;
        rankOfGroup[Grouping.REST] = 2;
        for (int h = 0; h < heads; h++) {
            int[] count = new int[Grouping.GROUPS];
            for (int i = 0; i < headDim; i++) {
                int g = groups[h * headDim + i];
                if (g < 0 || g >= Grouping.GROUPS) {
                    return false;
                }
                count[g]++;
            }
            if (count[Grouping.OUTLIERS] != Grouping.outlierCount(headDim)
                    || count[Grouping.SECONDARY] != Grouping.secondaryCount(headDim)) {
                return false;
            }
            for (int i = 0; i < headDim; i++) {
                for (int j = 0; j < headDim; j++) {
                    int ri = rankOfGroup[groups[h * headDim + i]];
                    int rj = rankOfGroup[groups[h * headDim + j]];
                    double ci = contributions[h * headDim + i];
                    double cj = contributions[h * headDim + j];
                    boolean iBeatsJ = ci > cj || (ci == cj && i < j);
                    if (ri < rj && !iBeatsJ) {
                        return false;
                    }
                }
            }
        }
        return true;
    }

    // ------------------------------------------------------------ test_isolated_from_selection

    /** Uses of test-split blocks in any phase but the final evaluation. */
    static long testUsesOutsideEvaluation(BlockLedger ledger) {
        return ledger.uses().stream()
                .filter(u -> u.split() == BlockLedger.Split.TEST && u.phase() != BlockLedger.Phase.EVALUATION).count();
    }

    /**
     * The roles have their pinned sizes and are pairwise disjoint; test blocks are used only by the evaluation,
     * which uses nothing else and comes after every other use.
     */
    static boolean testIsolated(BlockRoles roles, BlockLedger ledger) {
        int[][] selection = {roles.grouping(), roles.calibration(), roles.adaptation(), roles.validation()};
        int[] sizes = {BlockRoles.GROUPING, BlockRoles.CALIBRATION, BlockRoles.ADAPTATION, BlockRoles.VALIDATION};
        Set<Integer> seen = new HashSet<>();
        for (int r = 0; r < selection.length; r++) {
            if (selection[r].length != sizes[r]) {
                return false;
            }
            for (int b : selection[r]) {
                if (!seen.add(b)) {
                    return false;
                }
            }
        }
        if (roles.test().length != BlockRoles.TEST || Arrays.stream(roles.test()).distinct().count() != BlockRoles.TEST) {
            return false;
        }
        Set<Integer> testBlocks = new HashSet<>();
        Arrays.stream(roles.test()).forEach(testBlocks::add);
        int lastSelection = -1;
        int firstEvaluation = Integer.MAX_VALUE;
        boolean evaluated = false;
        for (BlockLedger.Use u : ledger.uses()) {
            boolean evaluation = u.phase() == BlockLedger.Phase.EVALUATION;
            if (evaluation != (u.split() == BlockLedger.Split.TEST)) {
                return false;
            }
            if (evaluation) {
                evaluated = true;
                firstEvaluation = Math.min(firstEvaluation, u.order());
                for (int b : u.blocks()) {
                    if (!testBlocks.contains(b)) {
                        return false;
                    }
                }
            } else {
                lastSelection = Math.max(lastSelection, u.order());
            }
        }
        return evaluated && lastSelection < firstEvaluation;
    }

    // ------------------------------------------------------------ matched_lora_budget

    /**
     * Both models trained exactly the same LoRA tensors (names and sizes, LoRA only), from the same A matrices with
     * B = 0, for the same number of steps at the same learning rate on the same rows with the very same dropout
     * masks; the converted block's coefficients stayed frozen and unchanged.
     */
    static boolean matchedBudget(LoraRecord softmax, LoraRecord converted, int steps, double learningRate, int rows) {
        if (softmax.trainableNames.isEmpty() || !softmax.trainableNames.equals(converted.trainableNames)
                || !softmax.trainableSizes.equals(converted.trainableSizes)) {
            return false;
        }
        if (!softmax.trainableNames.stream().allMatch(n -> n.contains(".lora_A.") || n.contains(".lora_B."))) {
            return false;
        }
        if (!softmax.initialA.equals(converted.initialA) || !softmax.initialBZero || !converted.initialBZero) {
            return false;
        }
        List<Double> lrs = new ArrayList<>();
        List<Integer> rowList = new ArrayList<>();
        for (int s = 0; s < steps; s++) {
            lrs.add(learningRate);
            rowList.add(rows);
        }
        if (!softmax.learningRates.equals(lrs) || !converted.learningRates.equals(lrs)
                || !softmax.stepRows.equals(rowList) || !converted.stepRows.equals(rowList)) {
            return false;
        }
        for (int s = 0; s < steps; s++) {
            if (softmax.masks.get(s) == null || softmax.masks.get(s) != converted.masks.get(s)) {
                return false;
            }
        }
        return !converted.blockTrainable && !converted.blockBefore.isEmpty()
                && converted.blockBefore.equals(converted.blockAfter);
    }

    // ------------------------------------------------------------ negative_result_reported

    /**
     * Every (seed, hypothesis) that a seed contradicts has exactly one sentence in the manifest's wording naming
     * that seed and both values, no other sentence exists, and an improvement is claimed exactly when every seed
     * supports every hypothesis.
     */
    static boolean negativeResultsComplete(Manifest manifest, Map<Long, Map<String, Object>> table, OalClaims.Verdict verdict) {
        List<String> unmatched = new ArrayList<>(verdict.sentences());
        boolean allHold = !manifest.hypotheses().isEmpty() && !table.isEmpty();
        for (Manifest.Hypothesis h : manifest.hypotheses()) {
            for (Map.Entry<Long, Map<String, Object>> row : table.entrySet()) {
                double lhs = ((Number) row.getValue().get(h.lhs())).doubleValue();
                double rhs = ((Number) row.getValue().get(h.rhs())).doubleValue();
                if (lhs < rhs) {
                    continue;
                }
                allHold = false;
                String found = null;
                for (String s : unmatched) {
                    if (sentenceStates(h.sentence(), s, row.getKey(), lhs, rhs)) {
                        found = s;
                        break;
                    }
                }
                if (found == null) {
                    return false;
                }
                unmatched.remove(found);
            }
        }
        return unmatched.isEmpty() && verdict.claimsImprovement() == allHold;
    }

    /** Does {@code sentence} read as {@code template} for this seed with these two values (to 1e-9 relative)? */
    static boolean sentenceStates(String template, String sentence, long seed, double lhs, double rhs) {
        String number = "([-+0-9.eE]+|NaN|-?Infinity)";
        StringBuilder regex = new StringBuilder();
        List<String> order = new ArrayList<>();
        Matcher m = Pattern.compile("\\{(seed|lhs|rhs)\\}").matcher(template);
        int at = 0;
        while (m.find()) {
            regex.append(Pattern.quote(template.substring(at, m.start())));
            regex.append(m.group(1).equals("seed") ? Pattern.quote(Long.toString(seed)) : number);
            if (!m.group(1).equals("seed")) {
                order.add(m.group(1));
            }
            at = m.end();
        }
        regex.append(Pattern.quote(template.substring(at)));
        Matcher s = Pattern.compile(regex.toString()).matcher(sentence);
        if (!s.matches() || !template.contains("{seed}")) {
            return false;
        }
        for (int i = 0; i < order.size(); i++) {
            double stated;
            try {
                stated = Double.parseDouble(s.group(i + 1));
            } catch (NumberFormatException e) {
                return false;
            }
            double actual = order.get(i).equals("lhs") ? lhs : rhs;
            if (!(Math.abs(stated - actual) <= 1e-9 * Math.max(1.0, Math.abs(actual)))) {
                return false;
            }
        }
        return order.contains("lhs") && order.contains("rhs");
    }

    // ------------------------------------------------------------ CUDA differential contracts

    /** Fresh random inputs of one differential check, drawn from Rng(seed): q, k, v, contributions, then L noise. */
    record DifferentialCase(QuadraticAttentionShape shape, float[] q, float[] k, float[] v, int[] groups, double[][] l) {
    }

    static DifferentialCase differentialCase(long seed, int batch, int seqLen, int heads, int kvHeads, int headDim) {
        Rng rng = new Rng(seed);
        QuadraticAttentionShape s = new QuadraticAttentionShape(batch, seqLen, heads, kvHeads, headDim, Grouping.GROUPS);
        float[] q = FloatArrays.narrow(rng.normals(s.queryElements(), 0, 1));
        float[] k = FloatArrays.narrow(rng.normals(s.keyElements(), 0, 1));
        float[] v = FloatArrays.narrow(rng.normals(s.keyElements(), 0, 1));
        double[] contributions = new double[heads * headDim];
        for (int i = 0; i < contributions.length; i++) {
            contributions[i] = rng.uniform();
        }
        int[] groups = Grouping.assign(contributions, heads, headDim);
        int side = Grouping.GROUPS + 1;
        double[][] l = new double[heads][];
        for (int h = 0; h < heads; h++) {
            l[h] = Calibration.perturbed(QuadraticForm.taylorFactor(Grouping.GROUPS), side,
                    rng.normals(QuadraticForm.lowerEntries(side), 0, Calibration.NOISE_STD));
        }
        return new DifferentialCase(s, q, k, v, groups, l);
    }

    /**
     * FlashAttention's rule for one form on {@code device} against the fp64 pairwise oracle, the naive reference
     * being the CPU twin of the same form in the same precision.
     */
    static FlashRule.Verdict differential(GroupedQuadraticAttentionOps device, DifferentialCase c, boolean recurrent, boolean fp64) {
        QuadraticAttentionShape s = c.shape();
        double[] qd = FloatArrays.widen(c.q());
        double[] kd = FloatArrays.widen(c.k());
        double[] vd = FloatArrays.widen(c.v());
        double[] oracle = PairwiseOracle.attention(s, qd, kd, vd, c.groups(), c.l());
        double[] m = QuadraticForm.gramAll(c.l(), s.side());
        GroupedQuadraticAttentionOps cpu = CpuGroupedQuadraticAttention.INSTANCE;
        int chain = s.seqLen() + (recurrent ? s.stateFeatures() : s.headDim());
        if (fp64) {
            double[] out = recurrent ? device.recurrent(s, qd, kd, vd, c.groups(), m) : device.dense(s, qd, kd, vd, c.groups(), m);
            double[] naive = recurrent ? cpu.recurrent(s, qd, kd, vd, c.groups(), m) : cpu.dense(s, qd, kd, vd, c.groups(), m);
            return FlashRule.judge(out, oracle, naive, FlashRule.FP64_UNIT_ROUNDOFF, chain);
        }
        float[] m32 = FloatArrays.narrow(m);
        float[] out = recurrent ? device.recurrent(s, c.q(), c.k(), c.v(), c.groups(), m32)
                : device.dense(s, c.q(), c.k(), c.v(), c.groups(), m32);
        float[] naive = recurrent ? cpu.recurrent(s, c.q(), c.k(), c.v(), c.groups(), m32)
                : cpu.dense(s, c.q(), c.k(), c.v(), c.groups(), m32);
        return FlashRule.judge(FloatArrays.widen(out), oracle, FloatArrays.widen(naive), FlashRule.FP32_UNIT_ROUNDOFF, chain);
    }
}
