package org.mechspec.worker;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** What makes a check judged: an answered call, of one of its own operations where the check names them. */
class UsageTest {
    @Test
    void aCheckAboutOneOperationIsNotJudgedByAnsweredCallsOfAnother() {
        Usage u = new Usage();
        u.answered("attention");
        u.fellBack("foldbias.nnls");
        assertThat(u.notJudged()).as("any answered call").isNull();
        assertThat(u.notJudged(List.of())).as("a check that names no operation").isNull();
        assertThat(u.notJudged(List.of("foldbias.nnls"))).isEqualTo("foldbias.nnls not served");
        assertThat(u.notJudged(List.of("foldbias.select_keys"))).isEqualTo("foldbias.select_keys never called");
    }

    @Test
    void oneAnsweredSubjectJudgesTheCheckAndFailedCallsAreNamed() {
        Usage u = new Usage();
        u.failed("pnmix.quantize_per_token");
        u.fellBack("pnmix.quantize_per_channel");
        assertThat(u.notJudged(List.of("pnmix.quantize_per_channel", "pnmix.quantize_per_token")))
                .isEqualTo("pnmix.quantize_per_channel not served; every call of pnmix.quantize_per_token failed");
        Usage shared = new Usage();
        shared.answered("pnmix.quantize_per_token"); // a value computed once and read by this check
        u.add(shared);
        assertThat(u.notJudged(List.of("pnmix.quantize_per_channel", "pnmix.quantize_per_token"))).isNull();
    }
}
