package org.mechspec.oal;

import java.util.ArrayList;
import java.util.List;

/**
 * Every time the protocol feeds blocks to a model, in order: which phase, which split, which blocks. The test
 * isolation contract reads it to show that test blocks meet a model only in the final evaluation.
 */
final class BlockLedger {
    enum Split { VALIDATION, TEST }

    enum Phase { GROUPING, CALIBRATION, SELECTION, VALIDATION, ADAPTATION, EVALUATION }

    record Use(int order, Phase phase, Split split, int[] blocks) {
    }

    private final List<Use> uses = new ArrayList<>();

    void record(Phase phase, Split split, int[] blocks) {
        uses.add(new Use(uses.size(), phase, split, blocks.clone()));
    }

    List<Use> uses() {
        return List.copyOf(uses);
    }
}
