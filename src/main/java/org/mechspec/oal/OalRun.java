package org.mechspec.oal;

/**
 * Everything one seed's protocol run produced, kept so that each contract reads the same run: the blocks and
 * their ledger, the conversion (grouping and calibration), the samples it used, validation of the converted layer,
 * both LoRA adaptations (with the adapted models) and the evaluation on the test blocks.
 */
record OalRun(long seed, String backend, BlockRoles roles, BlockLedger ledger, Conversion conversion,
              Samples samples, Validation validation, Adaptation adaptation, Evaluation evaluation,
              double elapsedSeconds) {

    /** Grouping and calibration: per-dimension contributions, group ids, each head's fit, the global baseline. */
    record Conversion(double[] contributions, int[] groups, Calibration.HeadFit[] fits, double[][] globalFactors) {
        double[][] oalFactors() {
            double[][] l = new double[fits.length][];
            for (int h = 0; h < fits.length; h++) {
                l[h] = fits[h].l();
            }
            return l;
        }
    }

    /** The converted layer's inputs and softmax outputs on the grouping, calibration and validation blocks. */
    record Samples(LayerSamples groupingSamples, LayerSamples calibrationSamples, LayerSamples validationSamples) {
    }

    /** The converted layer on the validation blocks: output MSE (OAL and global), form agreement, min similarity. */
    record Validation(double oalValidationMse, double globalValidationMse, KernelAgreement agreement,
                      double minSimilarity) {
    }

    /** The matched LoRA budget: both records, the adapters' parameter change, the adapted models. */
    record Adaptation(LoraRecord softmaxLora, LoraRecord oalLora, double softmaxDeltaL2, double oalDeltaL2,
                      MatchedLora.Adapted adapted) {
    }

    /** Per-token NLL of both models on the test blocks, and the bootstrap interval of their mean difference. */
    record Evaluation(double[] softmaxTokenNll, double[] oalTokenNll, double nllDifferenceLow,
                      double nllDifferenceHigh) {
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
    }

    static double mean(double[] x) {
        double sum = 0.0;
        for (double v : x) {
            sum += v;
        }
        return sum / x.length;
    }
}
