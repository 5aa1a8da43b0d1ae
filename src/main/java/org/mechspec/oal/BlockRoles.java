package org.mechspec.oal;

import java.util.Arrays;
import org.mechspec.compute.Rng;

/**
 * The blocks of one seed (protocols.md, OAL): a Fisher–Yates shuffle of the validation split's blocks gives, in order,
 * 4 grouping, 4 calibration, 8 adaptation and 2 validation blocks; a shuffle of the test split's blocks gives the
 * 2 test blocks. Indices are block numbers within their split.
 */
record BlockRoles(int[] grouping, int[] calibration, int[] adaptation, int[] validation, int[] test) {
    static final int GROUPING = 4;
    static final int CALIBRATION = 4;
    static final int ADAPTATION = 8;
    static final int VALIDATION = 2;
    static final int TEST = 2;

    /** Draws both shuffles from {@code rng}, validation first. */
    static BlockRoles draw(Rng rng, int validationBlocks, int testBlocks) {
        int selection = GROUPING + CALIBRATION + ADAPTATION + VALIDATION;
        if (validationBlocks < selection || testBlocks < TEST) {
            throw new IllegalArgumentException("the protocol needs " + selection + " validation and " + TEST
                    + " test blocks, the data has " + validationBlocks + " and " + testBlocks);
        }
        int[] v = rng.permutation(validationBlocks);
        int[] t = rng.permutation(testBlocks);
        int a = GROUPING;
        int b = a + CALIBRATION;
        int c = b + ADAPTATION;
        int d = c + VALIDATION;
        return new BlockRoles(Arrays.copyOfRange(v, 0, a), Arrays.copyOfRange(v, a, b), Arrays.copyOfRange(v, b, c),
                Arrays.copyOfRange(v, c, d), Arrays.copyOfRange(t, 0, TEST));
    }
}
