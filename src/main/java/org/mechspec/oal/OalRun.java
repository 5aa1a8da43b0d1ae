package org.mechspec.oal;

/**
 * Everything one seed's protocol run produced, kept so that each contract reads the same run: the blocks and
 * their ledger, grouping, calibration, the kernel agreement, both LoRA adaptations (with the adapted models) and
 * the evaluation.
 */
record OalRun(
        long seed,
        String backend,
        BlockRoles roles,
        BlockLedger ledger,
        double[] contributions,
        int[] groups,
        Calibration.HeadFit[] fits,
        double[][] globalFactors,
        LayerSamples groupingSamples,
        LayerSamples calibrationSamples,
        LayerSamples validationSamples,
        double oalValidationMse,
        double globalValidationMse,
        KernelAgreement agreement,
        double minSimilarity,
        LoraRecord softmaxLora,
        LoraRecord oalLora,
        double softmaxDeltaL2,
        double oalDeltaL2,
        double[] softmaxTokenNll,
        double[] oalTokenNll,
        double nllDifferenceLow,
        double nllDifferenceHigh,
        double elapsedSeconds,
        MatchedLora.Adapted adapted) {

    double[][] oalFactors() {
        double[][] l = new double[fits.length][];
        for (int h = 0; h < fits.length; h++) {
            l[h] = fits[h].l();
        }
        return l;
    }

    double softmaxNll() {
        return mean(softmaxTokenNll);
    }

    double oalNll() {
        return mean(oalTokenNll);
    }

    double softmaxPpl() {
        return StrictMath.exp(softmaxNll());
    }

    double oalPpl() {
        return StrictMath.exp(oalNll());
    }

    static double mean(double[] x) {
        double sum = 0.0;
        for (double v : x) {
            sum += v;
        }
        return sum / x.length;
    }
}
