package org.mechspec.oal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mechspec.compute.Rng;
import org.mechspec.data.TokenBlocks;
import org.mechspec.model.Batch;

/** What the matched LoRA adaptation leaves in each arm's record once it has finished. */
@Tag("oal")
class MatchedLoraRecordTest {

    /**
     * Catches an arm whose record is never finished: after adapt the softmax arm (no block) records the empty block
     * hash after training, as before it, and the converted arm the hash of its frozen block.
     */
    @Test
    void adaptFinishesBothRecords() {
        Rng rng = new Rng(31);
        ConvertedAttention block = new ConvertedAttention(OalProtocol.LAYER, CpuGroupedQuadraticAttention.INSTANCE,
                TinyOal.groups(rng, 2, 16), Grouping.GROUPS, TinyOal.factors(rng, 2, Grouping.GROUPS, 0.3));
        TokenBlocks blocks = TokenBlocks.ofBytes(TinyOal.text(31, 32 * 2), OalProtocol.SEQUENCE_LENGTH);
        Batch batch = Batch.nextToken(blocks.blocks(new int[] {0, 1}), OalProtocol.SEQUENCE_LENGTH);
        MatchedLora.Adapted a = MatchedLora.adapt(TinyOal.model(31, 5), OalProtocol.LAYER, block, batch, new Rng(32),
                OalProtocol.LORA, 1, 1e-2);

        assertThat(a.softmaxRecord().blockBefore).isEmpty();
        assertThat(a.softmaxRecord().blockAfter).isNotNull().isEmpty();
        assertThat(a.convertedRecord().blockAfter).isEqualTo(LoraRecord.sha256(block.factor().value().toDoubles()))
                .isEqualTo(a.convertedRecord().blockBefore);
    }
}
